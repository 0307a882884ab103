"""The palletizing scenario: cell files, reachability, planning every move, the CLI and bad cells."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from dynamics.forward_kinematics import frame_pose
from dynamics.inverse_kinematics import pose_error
from scenarios.palletizing import (DEFAULT_CELL, TCP_FRAME, cartesian_path, load_cell, pick_posture, plan_pallet,
                                   slot_ik)
from toppra_app.cli import main
from toppra_app.errors import InputError

DEFAULT_TEXT = DEFAULT_CELL.read_text()


@pytest.fixture(scope="module")
def cell():
    return load_cell()


@pytest.fixture(scope="module")
def pallet_report():
    """Every move of the built-in cell (8 boxes, 16 moves; a few seconds)."""
    return plan_pallet(load_cell())


def write_cell(tmp_path, text, name="cell.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def edit(text, old, new):
    assert old in text, old
    return text.replace(old, new, 1)


# ------------------------------------------------------------------------------ geometry and IK
def test_default_cell_contents(cell):
    assert cell.robot_name == "iiwa7" and cell.base_robot.rated_payload == 7.0
    assert len(cell.slots) == cell.layers * cell.rows * cell.columns == 8
    assert cell.robot.rated_payload == pytest.approx(7.0 - cell.gripper.mass)
    assert all(b.mass <= cell.robot.rated_payload for b in cell.boxes.values())
    # alternate layers are turned by 90° (mod 180°: the box footprint is symmetric)
    yaw = {s.layer: s.yaw for s in cell.slots}
    assert abs(abs(math.cos(yaw[0] - yaw[1]))) < 1e-9


def test_ik_reaches_every_slot_within_limits(cell):
    robot = cell.robot
    q_pick = pick_posture(cell)
    assert max(pose_error(robot, q_pick, cell.pick, TCP_FRAME)) <= 1e-6
    for s in list(cell.slots):
        ms = slot_ik(cell, s)
        assert ms.success, (s.label, ms)
        res = ms.best
        s = cell.slots[s.index]                      # its place yaw as the pose IK chose it
        p, r = pose_error(robot, res.q, s.place, TCP_FRAME)
        assert p <= 1e-6 and r <= 1e-6, s.label
        assert np.all(res.q >= robot.q_min) and np.all(res.q <= robot.q_max), s.label
        # the gripper points straight down
        T = frame_pose(robot, res.q, TCP_FRAME)
        assert T[2, 2] == pytest.approx(-1.0, abs=1e-9)


def test_box_payload_sits_in_the_box(cell):
    """The payload's COM, taken through the TCP pose at the place pose, is the box COM in the world."""
    for s in cell.slots:
        P = s.box.payload()
        T = s.place
        com_world = T[:3, :3] @ P.com + T[:3, 3]
        c, si = math.cos(s.yaw), math.sin(s.yaw)
        R_box = np.array([[c, -si, 0], [si, c, 0], [0, 0, 1]])     # box axes: x along TCP x, z up
        np.testing.assert_allclose(com_world, s.centre + R_box @ s.box.com_offset, atol=1e-12)


def test_cartesian_path_shape(cell):
    s = cell.slots[0]
    cp = cartesian_path(cell, s)
    np.testing.assert_allclose(cp.poses[0], cell.pick, atol=1e-12)
    np.testing.assert_allclose(cp.poses[-1], s.place, atol=1e-12)
    p = cp.poses[:, :3, 3]
    steps = np.linalg.norm(np.diff(p, axis=0), axis=1)
    assert np.allclose(steps, cp.length / (len(p) - 1), rtol=0.02)      # uniform in arc length
    # vertical lift and descent at the ends, tool always pointing down
    assert np.allclose(p[:3, :2], cell.pick[:2, 3], atol=1e-9) and np.allclose(p[-3:, :2], s.place[:2, 3], atol=1e-9)
    assert np.allclose(cp.poses[:, 2, 2], -1.0)
    assert p[:, 2].max() >= max(cell.pick[2, 3], s.place[2, 3]) + cell.approach_height


# ------------------------------------------------------------------------------ planning
def test_every_move_planned_within_limits(pallet_report):
    rep = pallet_report
    cell = rep.cell
    assert len(rep.moves) == 16
    for m in rep.moves:
        assert m.plan.worst_ratio <= 1.001 + 1e-9, (m.label, m.plan.worst_ratio)
        assert 0.3 < m.duration < 5.0
        assert m.path_error < 2e-3                 # joint spline vs Cartesian path, between IK samples
    # the cycle repeats: every loaded move starts at the pick posture, every return ends there
    q_pick = cell.q_pick
    for m in rep.moves:
        q0, q1 = m.path.q(m.path.s_start), m.path.q(m.path.s_end)
        np.testing.assert_allclose(q0 if m.kind == "loaded" else q1, q_pick, atol=1e-9)
    summary = rep.summary()
    assert summary["total_time_s"] == pytest.approx(sum(c["cycle_s"] for c in summary["cycles"]))
    json.dumps(summary)                             # JSON-serialisable


def test_payload_matters(pallet_report):
    """The payload-aware plan is slower; the empty-gripper plan executed with the 5 kg box overloads."""
    loaded = {m.box: m for m in pallet_report.moves if m.kind == "loaded"}
    for c in pallet_report.nominal_checks:
        assert c.loaded_duration >= c.nominal_duration - 1e-6
        if c.payload_kg >= 5.0:
            assert c.torque_ratio > 1.05, c
        assert loaded[c.box].plan.worst_ratio <= 1.001 + 1e-9


def test_payload_sweep_reuses_problem(cell):
    from scenarios.payload_change import sweep_payloads
    sw = sweep_payloads(cell, masses=[0.0, 3.0, 6.0], offsets=[0.0])
    d = [p.duration for p in sw.points]
    assert d[0] < d[2]
    assert all(p.reused for p in sw.points)
    assert all(p.worst_ratio <= 1.001 + 1e-9 for p in sw.points)
    with pytest.raises(InputError, match="masses"):
        sweep_payloads(cell, masses=[0.0, 9.0])


# ------------------------------------------------------------------------------ command line
def test_cli_palletize_quick_writes_everything(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["palletize", "--quick", "--out", str(out), "--move-png"]) == 0
    text = capsys.readouterr().out
    assert "total:" in text and "exceeds the robot's limit" in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["boxes_planned"] == 2 and len(summary["moves"]) == 4
    # the IK along the paths is the recursive method: sweeps counted, Newton polish only on some samples
    ik = summary["ik"]
    loaded = [m["ik"] for m in summary["moves"] if m["kind"] == "loaded"]
    assert ik["samples"] == sum(m["samples"] for m in loaded) == 2 * 80
    assert ik["sweeps"] == sum(m["sweeps"] for m in loaded) >= ik["samples"] - 2
    assert 0 <= ik["polished"] < ik["samples"] and ik["pose_ik"]["poses"] == 9
    assert (f"IK: {ik['sweeps']} recursive sweeps (Nicolato & Madrid) over 160 path samples, {ik['polished']} "
            f"polished by Newton steps") in text
    csvs = sorted(out.glob("*.csv"))
    assert len(csvs) == 4
    header = csvs[0].read_text().splitlines()[0].split(",")
    assert header[0] == "t" and len(header) == 1 + 4 * 7
    data = np.loadtxt(csvs[0], delimiter=",", skiprows=1)
    assert np.allclose(np.diff(data[:-1, 0]), 1e-3)
    assert (out / "pallet_top.png").exists() and (out / "pallet_3d.png").exists()
    assert len(list(out.glob("move*.png"))) == 4
    assert (out / "report.html").stat().st_size > 1e6
    assert "iiwa7 has no acceleration limit, so none is compared" in (out / "report.html").read_text()   # (not 0 %)
    # a second run replaces the directory as a whole; no temporary directories are left behind
    assert main(["palletize", "--boxes", "1", "--no-plots", "--no-report", "--out", str(out)]) == 0
    assert not list(out.glob("*.png")) and not (out / "report.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


BAD_CELLS = [
    ("unknown key", lambda t: edit(t, "yaw_deg = 90.0", "yaw_deg = 90.0\ncolour = \"red\""), r"pick\.colour: unknown key"),
    ("unknown table", lambda t: t + "\n[robotics]\nx = 1\n", r"robotics: unknown table"),
    ("unreachable slot", lambda t: edit(t, "position = [0.55, 0.05, 0.05]", "position = [1.30, 0.05, 0.05]"),
     r"pallet\.position: box 1 \(L1R1C1\), loaded move, place: the pose \(1\.195, -0\.030, 0\.150\) m, "
     r"yaw -?180\.0° is out of reach of iiwa7 .*: closest \d+\.\d mm and \d+\.\d+° away after 20 solves "
     r"\(2 symmetric yaws × 10 starts\)"),
    ("unreachable pick", lambda t: edit(t, "position = [0.10, -0.55, 0.20]", "position = [0.10, -1.55, 0.20]"),
     r"pick\.position: every box, loaded move, pick: the pose \(0\.100, -1\.550, 0\.200\) m, yaw 90\.0° is out "
     r"of reach of iiwa7 .*: closest \d+\.\d mm"),
    ("yaw of 1e300 degrees", lambda t: edit(t, "yaw_deg = 90.0", "yaw_deg = 1e300"),    # (its sine is noise)
     r"pick\.yaw_deg: must be <= 360\.0, got 1e\+300"),
    ("too heavy", lambda t: edit(t, "mass = 5.0", "mass = 6.8"), r"boxes\.heavy\.mass: 6\.8 kg exceeds"),
    ("heavier than rating", lambda t: edit(t, "mass = 5.0", "mass = 9.0"), r"boxes\.heavy\.mass: 9 kg exceeds"),
    ("overlap", lambda t: edit(t, "gap = 0.01", "gap = -0.02"), r"pattern\.gap: .*overlap"),
    ("does not fit", lambda t: edit(t, "columns = 2", "columns = 3"), r"pattern: box .* does not fit"),
    ("nan", lambda t: edit(t, "mass = 2.0", "mass = nan"), r"boxes\.light\.mass: must be a finite number"),
    ("nan vector", lambda t: edit(t, "size = [0.42, 0.42]", "size = [0.42, nan]"), r"pallet\.size: values must be finite"),
    ("bad type", lambda t: edit(t, "layers = 2", "layers = \"two\""), r"pattern\.layers: expected a number"),
    ("unknown box", lambda t: edit(t, 'boxes = ["heavy", "light"]', 'boxes = ["heavy", "medium"]'),
     r"pattern\.boxes: unknown box type 'medium'"),
    ("unknown robot", lambda t: edit(t, 'robot = "iiwa7"', 'robot = "r2d2"'), r"cell\.robot: .*unknown"),
    ("bad inertia", lambda t: t + "inertia = [0.01, 0.01, 0.05]\n", r"boxes\.light\.inertia: .*triangle"),
    ("com outside", lambda t: edit(t, "com_offset = [0.02, -0.01, 0.01]", "com_offset = [0.3, 0.0, 0.0]"),
     r"boxes\.heavy\.com_offset: .*outside the box"),
    ("missing table", lambda t: re.sub(r"(?ms)^\[pallet\]$.*?(?=^\[pattern\]$)", "", t), r"\[pallet\]: required"),
    ("toml syntax", lambda t: t + "\n[motion\n", r"not valid TOML"),
    ("negative friction", lambda t: t + "\n[friction]\nviscous = [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, -0.1]\n",
     r"friction\.viscous: values must be >= 0"),
    ("friction length", lambda t: t + "\n[friction]\ncoulomb = [0.1, 0.1]\n", r"friction\.coulomb: expected a list of 7"),
    ("negative jerk", lambda t: t + "\n[limits]\njerk_max = -5.0\n", r"limits\.jerk_max: must be > 0"),
    ("negative energy weight", lambda t: edit(t, "rot_weight = 0.2", "rot_weight = 0.2\nenergy_weight = -1.0"),
     r"motion\.energy_weight"),
    ("grid word", lambda t: re.sub(r'(?m)^grid = .*$', 'grid = "fine"', t), r'motion\.grid: expected "adaptive" or a number'),
    ("grid too small", lambda t: re.sub(r'(?m)^grid = .*$', "grid = 3", t), r"motion\.grid: must be >= 10"),
    ("gap target word", lambda t: edit(t, "rot_weight = 0.2", 'rot_weight = 0.2\ngap_target = "tight"'),
     r"motion\.gap_target: expected a number"),
    ("gap target zero", lambda t: edit(t, "rot_weight = 0.2", "rot_weight = 0.2\ngap_target = 0"),
     r"motion\.gap_target: must be > 0"),
]


def test_gap_target_key_is_passed_to_the_planner(tmp_path, monkeypatch):
    """[motion] gap_target: absent in the default cell (the planner's default), and where a cell sets it, it
    reaches every plan."""
    import scenarios.palletizing.plan as plan_module
    assert load_cell(write_cell(tmp_path, DEFAULT_TEXT)).gap_target is None
    seen = []
    from toppra_app import planner as planner_module
    Real = planner_module.TimeOptimalPlanner

    class Spy(Real):
        def __init__(self, *a, **kw):
            seen.append(kw.get("gap_target", "absent"))
            super().__init__(*a, **kw)
    monkeypatch.setattr(planner_module, "TimeOptimalPlanner", Spy)
    cell = load_cell(write_cell(tmp_path, edit(DEFAULT_TEXT, "rot_weight = 0.2", "rot_weight = 0.2\ngap_target = 0.05")))
    plan_module.plan_box(cell, 0, check_collisions=False)
    assert seen and all(x == 0.05 for x in seen)


def test_grid_key_is_a_number_in_the_default_cell_or_adaptive(tmp_path):
    """The default cell plans on 200 intervals (the demo's time budget, docs/palletizing.md); "adaptive" or
    no key: the planner's default grid."""
    assert load_cell(write_cell(tmp_path, DEFAULT_TEXT)).grid == 200
    assert load_cell(write_cell(tmp_path, re.sub(r"(?m)^grid = .*$", 'grid = "adaptive"', DEFAULT_TEXT))).grid is None
    assert load_cell(write_cell(tmp_path, re.sub(r"(?m)^grid = .*$", "", DEFAULT_TEXT))).grid is None


@pytest.mark.parametrize("name, mutate, pattern", BAD_CELLS, ids=[b[0] for b in BAD_CELLS])
def test_bad_cells_one_line_error_no_output(tmp_path, capsys, name, mutate, pattern):
    path = write_cell(tmp_path, mutate(DEFAULT_TEXT))
    with pytest.raises(InputError, match=pattern) as exc:
        load_cell(path)
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)
    out = tmp_path / "out"
    assert main(["palletize", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "Traceback" not in err[0]
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cell.toml"]


def test_missing_cell_file(tmp_path, capsys):
    assert main(["palletize", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "o")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_cli_payload_sweep(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(["payload-sweep", "--masses", "0,3", "--offsets", "0,0.05", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "re-plan with another payload" in text
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["points"]) == 4 and summary["worst_ratio"] <= 1.001 + 1e-9 and summary["within_limits"]
    data = np.loadtxt(out / "sweep.csv", delimiter=",", skiprows=1)
    assert data.shape == (4, 8) and (data[:, 7] == 1).all()          # within_limits: 1 (true)
    assert (out / "duration_vs_payload.png").exists()
    assert main(["payload-sweep", "--masses", "0,12", "--out", str(tmp_path / "bad")]) == 2
    assert "masses: 12 kg exceeds" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_energy_weight_option_trades_time_for_energy(tmp_path):
    """[motion] energy_weight: every move is slower or equal, the pallet's ∫τᵀRτ dt lower, and the
    summary reports both against the time-optimal plans of the same moves."""
    path = write_cell(tmp_path, edit(DEFAULT_TEXT, "rot_weight = 0.2", "rot_weight = 0.2\nenergy_weight = 1.0"))
    cell = load_cell(path)
    assert cell.planner_options() == dict(energy_weight=1.0)
    report = plan_pallet(cell, boxes=[0])
    opts = report.summary()["cell_options"]
    assert opts["energy_weight"] == 1.0
    for m in report.moves:
        assert m.duration >= m.unlimited_duration * (1 - 1e-6)
        assert m.plan.worst_ratio <= 1.001
    assert opts["total_time_s"] > opts["total_time_without_s"]
    assert opts["energy_s"] < 0.95 * opts["energy_without_s"]


def test_friction_and_jerk_options_are_met_and_reported(tmp_path):
    """[friction] changes the robot model; [limits] jerk_max is met on the 1 ms samples; the summary
    compares with the plans of the frictionless robot without the jerk limit."""
    text = DEFAULT_TEXT + "\n[friction]\nviscous = [0.5, 0.5, 0.3, 0.3, 0.2, 0.1, 0.1]\n\n[limits]\njerk_max = 5000.0\n"
    cell = load_cell(write_cell(tmp_path, text))
    assert cell.robot.viscous.tolist() == [0.5, 0.5, 0.3, 0.3, 0.2, 0.1, 0.1]
    assert cell.reference_robot.viscous.tolist() == [0.0] * 7
    report = plan_pallet(cell, boxes=[0])
    opts = report.summary()["cell_options"]
    assert opts["jerk_max"] == [5000.0] * 7 and opts["friction"]["viscous"][0] == 0.5
    assert opts["worst_sampled_jerk_ratio"] <= 1.001
    for m in report.moves:
        assert m.duration >= m.unlimited_duration * (1 - 1e-6)
        assert m.plan.worst_ratio <= 1.001
        smp = m.plan.sample(1e-3)
        jerk = np.abs(np.diff(smp.qdd, axis=0)) / np.diff(smp.t)[:, None]
        assert jerk.max() <= 5000.0 * 1.001


def test_cell_file_takes_a_urdf_robot_with_locked_joints_tool_frame_and_rating(tmp_path, panda_urdf):
    """[cell] urdf with locked_joints (the Panda's fingers), tool_frame and rated_payload, read into the
    cell's robot (the gripper is mounted on the named flange)."""
    from conftest import PANDA_FINGERS
    text = DEFAULT_CELL.read_text().replace('robot = "iiwa7"', f'urdf = "{panda_urdf}"\nlocked_joints = '
                                            + "{ " + ", ".join(f"{k} = {v}" for k, v in PANDA_FINGERS.items())
                                            + ' }\ntool_frame = "panda_hand"\nrated_payload = 8.0')
    text = text.replace('flange = "flange"', 'flange = "panda_link8"')
    (tmp_path / "panda.toml").write_text(text)
    cell = load_cell(tmp_path / "panda.toml", check_reach=False)
    assert cell.base_robot.n == 7 and "panda_finger_joint1" not in cell.base_robot.joint_names
    assert cell.base_robot.tool_frame == "panda_hand" and cell.base_robot.rated_payload == 8.0
    assert cell.robot.rated_payload == pytest.approx(8.0 - cell.gripper.mass)


@pytest.mark.parametrize("mode, n", [(None, 8), ("coupled", 8), ("independent", 9)])
def test_cell_file_mimic_option(tmp_path, panda_urdf, mode, n):
    """[cell] mimic: the Panda's finger_joint2 follows finger_joint1 (default) or is a joint of its own."""
    line = "" if mode is None else f'\nmimic = "{mode}"'
    text = DEFAULT_CELL.read_text().replace('robot = "iiwa7"', f'urdf = "{panda_urdf}"{line}')
    text = text.replace('flange = "flange"', 'flange = "panda_link8"')
    (tmp_path / "panda.toml").write_text(text)
    robot = load_cell(tmp_path / "panda.toml", check_reach=False).base_robot
    assert robot.n == n and robot.n_bodies == 9 and (robot.coupling is None) == (mode == "independent")


@pytest.mark.parametrize("line, why", [
    ('mimic = "coupled"', r"cell\.mimic: only for a URDF robot"),
    ('locked_joints = { a = 0.1 }', r"cell\.locked_joints: only for a URDF robot"),
    ('tool_frame = "x"', r"cell\.tool_frame: only for a URDF robot"),
    ('rated_payload = -1', r"cell\.rated_payload"),
])
def test_cell_robot_options_are_checked(tmp_path, line, why):
    text = DEFAULT_CELL.read_text().replace('robot = "iiwa7"', 'robot = "iiwa7"\n' + line)
    (tmp_path / "c.toml").write_text(text)
    with pytest.raises(InputError, match=why):
        load_cell(tmp_path / "c.toml", check_reach=False)


def _panda_cell_text(panda_urdf, fingers="{ panda_finger_joint1 = 0.0, panda_finger_joint2 = 0.0 }"):
    text = DEFAULT_TEXT.replace('robot = "iiwa7"', f'urdf = "{panda_urdf}"\nlocked_joints = {fingers}\n'
                                'tool_frame = "panda_hand"\nrated_payload = 8.0')
    return text.replace('flange = "flange"', 'flange = "panda_link8"')


def test_panda_cell_reached_by_other_starts_and_the_box_symmetry(tmp_path, panda_urdf):
    """Issue 12: in the Panda cell a single start (the preferred posture, then the pick posture) misses a
    place pose that other starts and the box's half turn reach. The cell now loads; every pick/place
    posture reaches its pose (checked by forward kinematics) within the joint limits, with the place yaw
    a symmetric turn of the pattern's, and every loaded move's path is tracked."""
    from dynamics.inverse_kinematics import solve_ik
    from scenarios.palletizing import make_slots, move_geometry
    from scenarios.palletizing.moves import symmetric_yaws
    path = write_cell(tmp_path, _panda_cell_text(panda_urdf), "panda.toml")
    plain = load_cell(path, check_reach=False)
    robot = plain.robot
    # what a single start gives: the pick from the preferred posture, every place from that pick posture
    single_pick = solve_ik(robot, plain.pick, plain.q_preferred, TCP_FRAME, rot_weight=plain.rot_weight)
    assert single_pick.success
    single = [solve_ik(robot, s.place, single_pick.q, TCP_FRAME, rot_weight=plain.rot_weight).success
              for s in plain.slots]
    assert not all(single)
    cell = load_cell(path)                                  # check_reach: no IKFailure
    pattern = make_slots(cell)
    used_symmetry = cell.grasp_turn != 0.0
    for s, s0 in zip(cell.slots, pattern):
        turn = s.yaw - s0.yaw
        assert min(abs(math.remainder(turn - d, 2 * math.pi)) for d in symmetric_yaws(s.box)) < 1e-12
        used_symmetry |= abs(math.remainder(turn, 2 * math.pi)) > 1e-9
        q = cell.q_place[s.index]
        assert max(pose_error(robot, q, s.place, TCP_FRAME)) <= 1e-6
        assert np.all(q >= robot.q_min) and np.all(q <= robot.q_max)
        np.testing.assert_allclose(s.place[:3, 3], s0.place[:3, 3], atol=1e-15)
    assert used_symmetry
    assert max(pose_error(robot, cell.q_pick, cell.pick, TCP_FRAME)) <= 1e-6
    for s in cell.slots[:2]:
        geo = move_geometry(cell, s)
        T = frame_pose(robot, geo.q, TCP_FRAME)
        assert np.linalg.norm(T[:, :3, 3] - geo.cart.poses[:, :3, 3], axis=1).max() <= 1e-5
        assert geo.ik_sweeps > 0 and geo.ik_polished < len(geo.q)


def test_turned_grasp_turns_the_payload(cell):
    """A pick turned by π (the box taken from its other end) sees the box's COM offset turned by π about the
    tool axis; the inertia about the tool's z axis is unchanged."""
    box = cell.boxes["heavy"]
    a, b = box.payload(), box.payload(math.pi)
    np.testing.assert_allclose(b.com[:2], -a.com[:2], atol=1e-15)
    assert b.com[2] == pytest.approx(a.com[2]) and b.mass == a.mass
    np.testing.assert_allclose(np.diag(b.inertia), np.diag(a.inertia), atol=1e-15)
