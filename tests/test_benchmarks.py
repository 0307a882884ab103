"""The benchmark suite is what docs/benchmarks.md says it is: deterministic cases of every family, holdable
paths, a peer whose torques are Pinocchio's (checked against our RNEA), and one case end to end."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("pinocchio")
pytest.importorskip("toppra")

from benchmarks.bench_planner import run_case, summarise, verdicts  # noqa: E402
from benchmarks.cases import FAMILIES, holdable, robot, suite  # noqa: E402
from benchmarks.peers import pinocchio_inverse_dynamics  # noqa: E402

import dynamics  # noqa: E402


def test_suite_is_deterministic_and_covers_every_family():
    a, b = suite(), suite()
    assert [c.name for c in a] == [c.name for c in b]
    assert all(np.array_equal(x.waypoints, y.waypoints) for x, y in zip(a, b))
    assert {c.family for c in a} == set(FAMILIES)
    assert len({c.robot.partition("+")[0] for c in a}) >= 2
    for c in a:
        r = robot(c.robot)
        assert c.waypoints.shape[1] == r.n and holdable(r, c.waypoints)
        if c.family == "tiny":
            assert np.ptp(c.waypoints, axis=0).max() <= 2e-3


@pytest.mark.parametrize("name", ["iiwa7", "ur5e"])
def test_peer_inverse_dynamics_is_pinocchio_and_equals_ours(name):
    r = robot(name).replace(viscous=np.linspace(0.1, 0.7, robot(name).n))
    inv = pinocchio_inverse_dynamics(r)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1, 1, size=(3, r.n))
        ours = dynamics.inverse_dynamics(r, q[None], qd[None], qdd[None])[0] + r.viscous * qd
        np.testing.assert_allclose(inv(q, qd, qdd), ours, rtol=0, atol=1e-9)


def test_one_case_end_to_end():
    case = [c for c in suite(["ur5e"], quick=True) if c.family == "random"][0]
    row = run_case(case, repeats=1)
    assert row["status"] == "ok"
    for key in ("ours_s", "toppra_s", "ratio", "replan_share", "duration", "reference", "gap", "over"):
        assert np.isfinite(row[key]), key
    assert row["reference"] <= row["duration"] * (1 + 1e-9)
    assert row["over"] <= 2e-3                                  # our plan within the limits (Pinocchio)
    s = summarise([row])
    assert s["all"]["n"] == 1 and len(verdicts(s)) == 5


@pytest.mark.parametrize("name", ["iiwa7", "panda-urdf", "ur5e", "ur10-urdf"])
def test_bench_ik_cells_are_scaled_to_the_robot_and_reachable(name):
    """`toppra-app bench ik` builds the default cell for every robot, scaled about the shoulder by its reach:
    the iiwa's is the default cell itself, and every cell's pick and place poses are reached (several
    starts × the box's symmetric yaws) within the joint limits."""
    from benchmarks.bench_ik import make_cell
    from benchmarks.cases import available_robots
    from scenarios.palletizing import DEFAULT_CELL, check_reachable, load_cell
    if name not in available_robots():
        pytest.skip(f"{name} not installed")
    cell, shoulder, reach, scale = make_cell(name)
    if name == "iiwa7":
        ref = load_cell(DEFAULT_CELL, check_reach=False)
        assert scale == pytest.approx(1.0)
        np.testing.assert_allclose(cell.pick, ref.pick, atol=1e-12)
        np.testing.assert_allclose([s.place for s in cell.slots], [s.place for s in ref.slots], atol=1e-12)
    d_pick = np.linalg.norm(cell.pick[:3, 3] - shoulder) / reach
    assert 0.3 < d_pick < 0.9
    check_reachable(cell)
    r = cell.robot
    for q in [cell.q_pick, *cell.q_place.values()]:
        assert np.all(q >= r.q_min) and np.all(q <= r.q_max)


def test_study_families_draws_every_family_within_the_joint_ranges():
    """`benchmarks.study_families`: each family draws the same waypoints for the same seed, inside 5–95 % of
    every joint range, with the keywords and payload it names (a robot without a rated payload has no
    payload cases)."""
    from benchmarks.study_families import FAMILIES, ROBOTS, case, draw
    from benchmarks.cases import robot
    for family in FAMILIES:
        seed, got = case(family, "iiwa7", 0)
        assert seed == 1000 * FAMILIES.index(family) + 10 * ROBOTS.index("iiwa7")
        assert got is not None, family
        r, W, kw, payload, replan = got
        r0 = robot("iiwa7")
        lo, hi = r0.q_min + 0.05 * (r0.q_max - r0.q_min), r0.q_min + 0.95 * (r0.q_max - r0.q_min)
        assert W.ndim == 2 and W.shape[1] == r.n and len(W) >= 2
        assert np.all(W >= lo - 1e-2) and np.all(W <= hi + 1e-2), family
        assert (payload is not None) == family.startswith("heavy-payload") and replan == family.endswith("replan")
        assert ("sd_start" in kw) == (family == "both-speeds")
        np.testing.assert_array_equal(case(family, "iiwa7", 0)[1][1], W)
    assert draw("heavy-payload", robot("panda-urdf"), np.random.default_rng(0)) is None


def test_study_friction_draws_the_hunts_cases():
    """`benchmarks.study_friction`: every family draws the same case for the same seed on its robots (the
    example-robot-data arms included), with the friction it names as shares of the torque limit, and the
    fourteenth session's hunt case it reproduces (viscous-dominant, iiwa 7, seed 154000: the first viscous
    coefficient 108.58 N·m·s/rad)."""
    from benchmarks.cases import erd_path
    from benchmarks.study_friction import FAMILIES, case
    if erd_path("robots/xarm_description/urdf/xarm7.urdf") is None:
        pytest.skip("example-robot-data not installed")
    for family, robots in FAMILIES.items():
        name = robots[0]
        seed, got = case(family, name, 0)
        assert got is not None, family
        r, W, kw, payload, replan = got
        assert W.ndim == 2 and W.shape[1] == r.n and payload is None and not replan
        assert ("sd_end" in kw) == family.endswith("ends")
        qd = np.where(np.isfinite(r.qd_max), r.qd_max, 3.0)
        share = r.viscous * qd / r.tau_max
        if family == "viscous-dominant":
            assert np.all((share >= 0.9) & (share <= 1.3))
        if family in ("friction-real", "coulomb-only", "friction-ends"):
            assert np.all((r.coulomb >= 0.02 * r.tau_max) & (r.coulomb <= 0.1 * r.tau_max))
        np.testing.assert_array_equal(case(family, name, 0)[1][1], W)
    seed, (r, *_) = case("viscous-dominant", "iiwa7", 0)
    assert seed == 154000 and r.viscous[0] == pytest.approx(108.5801306803528)


def test_bench_files_are_written_exclusively_and_long_names_refused_first(tmp_path, monkeypatch, capsys):
    """Hunt report: a --json file the user created during the run was overwritten at the end (checked at
    the start, then open(..., "w")), and a 300-character --json name ran the whole benchmark, then a
    traceback. Now the file is linked into place only if it still does not exist, and the name is refused
    before the run."""
    import benchmarks.bench_planner as bp
    from toppra_app.cli import main
    monkeypatch.chdir(tmp_path)
    ran = []

    def fake(quick=False, json_path=None, markdown_path=None, **kw):
        ran.append(json_path)
        with open(json_path, "w") as fh:
            fh.write('{"rows": []}\n')
        (tmp_path / "late.json").write_text("user\n")          # the user's file appears meanwhile
    monkeypatch.setattr(bp, "run_planner_benchmark", fake)
    assert main(["bench", "planner", "--quick", "--json", "late.json"]) == 2
    err = capsys.readouterr().err
    assert "late.json: appeared during the run; not overwritten" in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "late.json").read_text() == "user\n" and os.listdir(tmp_path) == ["late.json"]
    ran.clear()
    assert main(["bench", "planner", "--quick", "--json", "x" * 300]) == 2
    err = capsys.readouterr().err
    assert "--json" in err and "too long" in err and len(err.strip().splitlines()) == 1 and not ran
    monkeypatch.setattr(bp, "run_planner_benchmark", lambda json_path=None, **kw: open(json_path, "w").write("{}"))
    assert main(["bench", "planner", "--quick", "--json", "new.json"]) == 0
    assert sorted(os.listdir(tmp_path)) == ["late.json", "new.json"] and (tmp_path / "new.json").read_text() == "{}"


@pytest.mark.parametrize("what", ["dynamics", "trees", "batch", "collisions", "ik"])
def test_a_file_asked_of_a_bench_that_writes_none_is_refused_before_it_runs(tmp_path, monkeypatch, capsys, what):
    """`bench dynamics --json x.json` ran the whole benchmark and wrote no file, without a word."""
    from toppra_app.cli import main
    monkeypatch.chdir(tmp_path)
    for flag in ("--json", "--markdown"):
        assert main(["bench", what, "--quick", flag, "x.out"]) == 2
        err = capsys.readouterr()
        assert err.out == "" and f"{flag}: only 'bench planner'" in err.err and len(err.err.strip().splitlines()) == 1
    assert os.listdir(tmp_path) == []


def test_a_bench_file_that_exists_or_has_no_directory_says_which(tmp_path, capsys):
    from toppra_app.cli import main
    (tmp_path / "old.json").write_text("{}")
    assert main(["bench", "planner", "--json", str(tmp_path / "old.json")]) == 2
    assert "old.json: exists already (never overwritten)" in capsys.readouterr().err
    assert main(["bench", "planner", "--json", str(tmp_path / "no" / "x.json")]) == 2
    assert f"{tmp_path / 'no'} is not an existing directory" in capsys.readouterr().err


def test_bench_files_copied_where_there_are_no_hard_links_leave_nothing_on_a_full_disk(tmp_path, monkeypatch, capsys):
    """Where the file system has no hard links (FAT, some FUSE) `bench` publishes its file by an exclusive
    create and copy. A full disk in that copy left a partial --json file behind; now the file the copy
    created is removed, one line says why, and nothing else is in the directory."""
    import errno
    import benchmarks.bench_planner as bp
    from toppra_app.cli import main
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(bp, "run_planner_benchmark", lambda json_path=None, **kw: open(json_path, "w").write("{}"))

    def no_links(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")
    monkeypatch.setattr(os, "link", no_links)
    assert main(["bench", "planner", "--quick", "--json", "copied.json"]) == 0      # the fallback itself
    assert os.listdir(tmp_path) == ["copied.json"] and (tmp_path / "copied.json").read_text() == "{}"

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fsync", full)
    assert main(["bench", "planner", "--quick", "--json", "full.json"]) == 2
    err = capsys.readouterr().err
    assert "full.json: cannot write (No space left on device)" in err and len(err.strip().splitlines()) == 1
    assert os.listdir(tmp_path) == ["copied.json"]


def test_study_hunt_draws_the_hunts_cases():
    """`benchmarks.study_hunt`: the sixteenth session's hunt cases, drawn again in its order of draws — the UR3
    wrist path that was +0.14 % from converged (onejoint, seed 41: only the last joint moves, out and back) and
    the Puma 560 path whose joint rode its torque limit into a Coulomb flip (onejoint, seed 42)."""
    from benchmarks.cases import erd_path
    from benchmarks.study_hunt import FAMILIES, arm, cases
    if erd_path("robots/ur_description/urdf/ur3_robot.urdf") is None:
        pytest.skip("example-robot-data not installed")
    from test_friction_paths import PUMA_TORQUES, PUMA_W
    from test_grid_layers import UR3_WRIST
    drawn = {(c[0], c[1]): c for c in cases("ur3")}
    assert {c[0] for c in drawn.values()} == set(FAMILIES)
    np.testing.assert_array_equal(drawn[("onejoint", 41)][3], UR3_WRIST)
    puma = {(c[0], c[1]): c for c in cases("puma560")}
    np.testing.assert_array_equal(puma[("onejoint", 42)][3], PUMA_W)
    np.testing.assert_array_equal(arm("puma560").tau_max, PUMA_TORQUES)
    assert arm("ur3+3").qdd_max.max() == 3.0


def test_study_audit_draws_the_audits_paths_and_refuses_an_existing_json(tmp_path, capsys):
    """`benchmarks.study_audit`: the audit's paths drawn again (seed 77000 + 100 × family index + robot index,
    its order of draws; values of the audit's saved waypoints), labels unique, a path we refuse is a row with
    toppra's verdict (iiwa 7, tiny motion with both end speeds), and an existing --json file is refused before
    the run, in one line."""
    from benchmarks.study_audit import FAMILIES, family_paths, main, run_path
    paths = {f: family_paths(f, "iiwa7") for f in FAMILIES}
    for family, got in paths.items():
        assert got and len({p[0] for p in got}) == len(got), family
        assert all(p[2].ndim == 2 and p[2].shape[1] == 7 for p in got)
        np.testing.assert_array_equal(family_paths(family, "iiwa7")[0][2], got[0][2])
    audit = {("line2", "iiwa7-0"): ((2, 7), 0.3755751817352162, -1.5992579880101696),
             ("noisy_dense", "iiwa7-415x0.001"): ((415, 7), 0.927933850927886, 1.1621137054658564),
             ("mixed", "iiwa7-tiny1e-4-speeds"): ((3, 7), -0.04625373328541374, 1.0966652676799822)}
    for (family, label), (shape, first, last) in audit.items():
        W = {p[0]: p[2] for p in paths[family]}[label]
        assert W.shape == shape and W[0, 0] == first and W[-1, -1] == last, label
    label, r, W, kw = paths["mixed"][1]
    row = run_path("mixed", label, r, W, kw, seed=0, scale=False, repeats=1)
    assert row["status"] == "error" and row["exc"] == "InfeasiblePathError" and row["toppra_feasible"] is False
    existing = tmp_path / "rows.json"
    existing.write_text("mine\n")
    assert main(["--families", "line2", "--json", str(existing)]) == 2
    err = capsys.readouterr().err
    assert "exists; not overwritten" in err and len(err.strip().splitlines()) == 1
    assert existing.read_text() == "mine\n" and os.listdir(tmp_path) == ["rows.json"]


def test_study_polylines_draws_straight_runs_whose_vertices_are_corners():
    """`benchmarks.study_polylines`: each draw is the same for its seed, its samples lie on straight segments
    between 3–6 vertices inside the middle half of every joint range, and every vertex that turns by more
    than 45° (not back) is one of the planner's corners."""
    import numpy as np
    from benchmarks.cases import robot
    from benchmarks.study_polylines import DRAWS, polyline
    from toppra_app import JointPath
    from toppra_app.planning.grid import STOP_ANGLE, TURN_ANGLE, corners
    r = robot("iiwa7")
    for base, pers in DRAWS:
        for seed in (base, base + 1):
            nv, per, W = polyline(r, seed, pers)
            assert np.array_equal(W, polyline(r, seed, pers)[2]) and 3 <= nv <= 6 and per in pers
            assert W.shape == ((nv - 1) * per + 1, r.n)
            mid, span = 0.5 * (r.q_min + r.q_max), r.q_max - r.q_min
            assert (np.abs(W - mid) <= 0.25 * span + 1e-12).all()
            V = W[::per]
            d = np.diff(V, axis=0)
            cos = np.einsum("ij,ij->i", d[:-1], d[1:]) / np.linalg.norm(d[:-1], axis=1) / np.linalg.norm(d[1:], axis=1)
            turning = int(np.sum((cos < np.cos(TURN_ANGLE)) & (cos >= np.cos(STOP_ANGLE))))
            assert len(corners(JointPath.from_waypoints(W))) == turning


def test_study_urdf_pinocchio_compares_a_description_with_pinocchio(capsys):
    """`benchmarks.study_urdf_pinocchio` on the double pendulum of example-robot-data: one row, every quantity
    within 1e-12 of Pinocchio, and the summary line."""
    from benchmarks.study_urdf_pinocchio import COLUMNS, main
    assert main(["--only", "double_pendulum", "--seeds", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    row = [line for line in out if line.startswith("| double_pendulum_description/")]
    assert len(row) == 1, out
    errors = [float(x) for x in row[0].strip("|").split("|")[3:3 + len(COLUMNS)]]
    assert max(errors) < 1e-12 and out[-1].startswith("worst: M ")
