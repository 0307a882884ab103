"""Cell files a user writes, read by the real loader with the reach check on (the hostile-input tests read
them with ``check_reach=False``): absurd lengths, wrong types and names that would break the one-line
messages. Every case ends in one `InputError` line naming the file and the field, within seconds."""

from __future__ import annotations

import copy
import time
import warnings

import numpy as np
import pytest

from scenarios.palletizing import DEFAULT_CELL, load_cell
from toppra_app.errors import InputError
from test_hostile_inputs import BASE, dump_toml


def _load(tmp_path, mutate):
    doc = copy.deepcopy(BASE)
    mutate(doc)
    f = tmp_path / "cell.toml"
    f.write_text(dump_toml(doc))
    return f


def _set(table, key, value):
    def mutate(doc):
        t = doc
        for k in table.split("."):
            t = t.setdefault(k, {})
        t[key] = value
    return mutate


@pytest.mark.parametrize("table, key, value", [
    ("gripper", "tcp_offset", [0.0, 0.0, 1e6]),       # "Singular matrix", no file or field
    ("gripper", "tcp_offset", [1e300, 0.0, 0.0]),     # "closest nan mm" after overflow warnings
    ("gripper", "com", [0.0, 0.0, 1e300]),            # "payload: mass and inertia must be finite numbers"
    ("gripper", "size", [1e200, 1e200, 1e200]),       # the same
    ("pick", "position", [1e308, 0.0, 0.0]),          # a 600-character pose in the message
    ("pallet", "position", [0.55, 0.05, -1e300]),
    ("pallet", "size", [1e300, 1e300]),
    ("boxes.heavy", "size", [1e200, 1e200, 1e200]),   # a 981-character message
    ("motion", "rot_weight", 1e308),                  # OverflowError traceback
])
def test_absurd_lengths_end_in_one_short_line_naming_the_field(tmp_path, table, key, value):
    f = _load(tmp_path, _set(table, key, value))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)          # no overflow on the way to the message
        with pytest.raises(InputError) as info:
            load_cell(f)
    msg = str(info.value)
    assert msg.startswith(f"{f}: {table}.{key}: ") and "\n" not in msg and len(msg) < 300, msg
    assert time.perf_counter() - t0 < 5


def test_a_pallet_far_away_but_within_the_bound_is_out_of_reach(tmp_path):
    """The bound (100 m) is not the reach: a pallet 50 m away is read and reported out of reach as before."""
    f = _load(tmp_path, _set("pallet", "position", [50.0, 0.0, 0.05]))
    with pytest.raises(InputError, match=r"pallet\.position: box 1 \(L1R1C1\), loaded move, place: .* out of reach"):
        load_cell(f)


@pytest.mark.parametrize("table, key", [("gripper", "inertia"), ("boxes.heavy", "inertia")])
@pytest.mark.parametrize("value", [["0.01", "0.01", "0.01"], [True, 0.01, 0.01],
                                   [[0.01, 0, 0], [0, "0.01", 0], [0, 0, 0.01]], [[0.01, 0, 0], 0.01, 0.01]])
def test_an_inertia_of_strings_or_booleans_is_a_wrong_type(tmp_path, table, key, value):
    """numpy read "0.01" and true as numbers: the inertia was taken as if the file had said 0.01 and 1."""
    f = _load(tmp_path, _set(table, key, value))
    with pytest.raises(InputError, match=rf"^{f}: {table}\.{key}: expected 3 numbers or a 3×3 matrix, got "):
        load_cell(f, check_reach=False)


@pytest.mark.parametrize("key", ["torque_rate_max", "jerk_max", "qdd_max"])
def test_controller_lists_of_the_wrong_length_name_the_file_when_read(tmp_path, key):
    """[controller] qdd_max = [5, 5, 5, 5, 5, 5] on the 7-joint iiwa was read, and `palletize` failed after
    planning had started, in a line without the file ("controller.qdd_max: expected a number or 7 values");
    torque_rate_max / jerk_max were checked when read but named no file either."""
    f = _load(tmp_path, _set("controller", key, [5.0] * 6))
    with pytest.raises(InputError, match=rf"^{f}: controller\.{key}: expected a number or 7 values .*got 6 values$"):
        load_cell(f, check_reach=False)


def test_names_with_a_newline_or_an_escape_code_are_refused_in_one_line(tmp_path):
    """[boxes."li\\nght"] made every message naming the box two lines (its mass over the rating: "boxes.li" /
    "ght.mass: ..."); [cell] name = "line3\\n\\x1b[31mred" was printed as two lines and a colour code."""
    f = tmp_path / "box.toml"
    f.write_text(DEFAULT_CELL.read_text().replace("[boxes.light]", '[boxes."li\\nght"]')
                 .replace('"light"]', '"li\\nght"]').replace("mass = 2.0", "mass = 20.0"))
    with pytest.raises(InputError) as info:
        load_cell(f, check_reach=False)
    assert str(info.value) == f"{f}: boxes: a box type's name must be one line of printable text, got 'li\\nght'"
    for key, old, value in (("name", '"iiwa7 small-box palletizing"', r'"line3\n\u001b[31mred"'),
                            ("flange", '"flange"', r'"flange\r"'), ("robot", '"iiwa7"', r'"iiwa7\t"')):
        f.write_text(DEFAULT_CELL.read_text().replace(f"{key} = {old}", f"{key} = {value}", 1))
        with pytest.raises(InputError, match=rf"^{f}: cell\.{key}: expected one line of printable text, got '") as info:
            load_cell(f, check_reach=False)
        assert "\n" not in str(info.value)


def _box_inertia(tmp_path, inertia, com=(0.0, 0.0, 0.0), size=(0.2, 0.15, 0.1), mass=5.0):
    def mutate(doc):
        doc["boxes"]["heavy"].update(size=list(size), mass=mass, com_offset=list(com), inertia=inertia)
    return load_cell(_load(tmp_path, mutate), check_reach=False)


def test_a_box_inertia_no_body_inside_the_box_can_have_is_refused(tmp_path):
    """[1, 1, 1] kg·m² for a 5 kg box of 0.2 × 0.15 × 0.1 m was planned as given (a body inside the box has at
    most m (b² + c²)/4 = 0.0406 kg·m² about x)."""
    with pytest.raises(InputError, match=r"boxes\.heavy\.inertia: too large for 5 kg inside the box of size "
                                         r"\[0\.2, 0\.15, 0\.1\] m .*along the box's x axis"):
        _box_inertia(tmp_path, [1.0, 1.0, 1.0])
    with pytest.raises(InputError, match=r"boxes\.heavy\.inertia: .*along the box's z axis"):   # a full matrix
        _box_inertia(tmp_path, [[0.03, 0, 0], [0, 0.03, 0], [0, 0, 0.04]], size=(0.2, 0.2, 0.05))


@pytest.mark.parametrize("corner", [(1, 1, 1), (-1, 1, -1)])
def test_the_largest_inertia_inside_the_box_is_still_accepted(tmp_path, corner):
    """The bound is exact: the mass split between two opposite corners (second moments m (s/2 − c)(s/2 + c) along
    every axis, here with its COM off-centre) is a body inside the box, and is read."""
    size, m = np.array([0.2, 0.15, 0.1]), 5.0
    p1, w1 = 0.5 * size * np.array(corner), 0.7                 # 0.7 m at one corner, 0.3 m at the opposite one
    com = w1 * p1 - (1 - w1) * p1
    d1, d2 = p1 - com, -p1 - com
    second = m * (w1 * np.outer(d1, d1) + (1 - w1) * np.outer(d2, d2))
    inertia = np.trace(second) * np.eye(3) - second
    cell = _box_inertia(tmp_path, inertia.tolist(), com=com.tolist())
    np.testing.assert_allclose(cell.boxes["heavy"].inertia, inertia)
    with pytest.raises(InputError, match=r"boxes\.heavy\.inertia: too large"):
        _box_inertia(tmp_path, (inertia * 1.001).tolist(), com=com.tolist())


def test_the_default_uniform_inertia_with_its_com_at_a_face_is_still_read(tmp_path):
    """The check is of a given inertia: the documented default (a uniform box about the COM) stays as it was."""
    def mutate(doc):
        doc["boxes"]["heavy"]["com_offset"] = [0.1, 0.0, 0.0]
    load_cell(_load(tmp_path, mutate), check_reach=False)


def test_a_box_too_heavy_for_the_torque_limits_names_the_file_the_box_and_the_move(tmp_path):
    """A URDF robot without a rating (or a rating set high) takes any box; the planner then finds the path
    infeasible. The line named "box L1R1C1, loaded move" but not the cell file, unlike the IK and collision errors."""
    from scenarios.palletizing import plan_box
    from toppra_app.errors import InfeasiblePathError

    def mutate(doc):
        doc["cell"]["rated_payload"] = 1000.0
        doc["boxes"]["heavy"]["mass"] = 400.0
    f = _load(tmp_path, mutate)
    cell = load_cell(f)
    with pytest.raises(InfeasiblePathError) as info:
        plan_box(cell, 0, 0)
    msg = str(info.value)
    assert msg.startswith(f"{f}: box 1 (L1R1C1), loaded move: gravity alone exceeds the torque limit"), msg
    assert "\n" not in msg


@pytest.mark.parametrize("box", ["9", "0", "-3"])
def test_payload_sweep_names_the_box_flag(tmp_path, capsys, box):
    """`payload-sweep --box 9` on an 8-box cell said "box: expected a box number between 1 and 8, got 9" — not
    the flag."""
    from toppra_app.cli import main
    assert main(["payload-sweep", "--box", box, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"toppra-app payload-sweep: error: --box: expected a box number between 1 and 8, got {box}"
    assert not (tmp_path / "out").exists()


XARM_CELL = """[cell]
urdf = "{urdf}"
rated_payload = 3.5
[gripper]
mass = 0.4
tcp_offset = [0.0, 0.0, 0.1]
[pick]
position = [0.1, -0.45, 0.1]
yaw_deg = 90.0
[pallet]
position = [0.38, 0.12, 0.05]
size = [0.32, 0.32]
[pattern]
rows = 2
gap = 0.01
[boxes.small]
size = [0.15, 0.1, 0.08]
mass = 2.5
"""


def test_a_posture_on_a_joint_limit_does_not_make_the_path_leave_it(tmp_path):
    """xArm 7 (example-robot-data): the pick posture's IK put joint6 exactly on its lower limit (-1.69297 rad) and
    the tracking held the next samples there; the joint spline through them dipped 2e-5 rad below and the planner
    refused the reachable cell ("path leaves the position range of joint joint6 ... a waypoint is out of range or
    the spline overshoots"). The postures and the tracked samples now stay 1e-3 rad inside the limits."""
    from fixtures import erd_path
    from scenarios.palletizing import move_geometry, plan_box
    urdf = erd_path("robots/xarm_description/urdf/xarm7.urdf")
    if urdf is None:
        pytest.skip("example-robot-data xarm7.urdf not installed")
    f = tmp_path / "xarm.toml"
    f.write_text(XARM_CELL.format(urdf=urdf))
    cell = load_cell(f)
    lo, hi = cell.robot.q_min, cell.robot.q_max
    result = plan_box(cell, 0, 0, nominal=False)               # raised InfeasiblePathError before
    for b in range(len(cell.slots)):
        q = move_geometry(cell, cell.slots[b]).q
        assert (q >= lo + 1e-3 * (1 - 1e-9)).all() and (q <= hi - 1e-3 * (1 - 1e-9)).all()   # (LIMIT_MARGIN)
    s = np.linspace(result.moves[0].path.s_start, result.moves[0].path.s_end, 20001)
    qs = result.moves[0].path.q(s)
    assert (qs >= lo).all() and (qs <= hi).all()


def test_a_robot_without_torque_limits_has_no_empty_gripper_torque_check(tmp_path):
    """The empty-gripper plan executed with the box is compared with τ_max; a cell robot with none (a URDF's
    effort="0" reads as unlimited) printed "torque of joint1 peaks at 0.0 % of the robot's limit" and put
    0.0 in summary.json and the batch's nominal_torque_ratio: a limit that is not there, read as never near."""
    from scenarios.palletizing import plan_box
    cell = load_cell(_load(tmp_path, lambda doc: None))
    cell.robot = cell.robot.replace(tau_max=np.full(cell.robot.n, np.inf))
    result = plan_box(cell, 0, 0, check_collisions=False)
    assert result.check is None and result.moves[0].plan.within_limits
    assert {m.kind for m in result.moves} == {"loaded", "return"}


@pytest.mark.parametrize("name", ["puma560", "charmie"])
def test_a_robot_without_limits_is_refused_when_the_cell_is_read(tmp_path, name):
    """docs/palletizing.md offered `robot = "puma560"`; such a cell (and charmie's) was read, its IK solved
    (puma560: an out-of-reach line naming pallet.position), and the planner then refused the robot in a line
    naming neither the file nor the key. The model indeed has no torque, velocity or acceleration limit."""
    import dynamics
    robot = dynamics.load_robot(name)
    assert not any(np.isfinite(getattr(robot, k)).any() for k in ("tau_max", "qd_max", "qdd_max"))
    f = _load(tmp_path, _set("cell", "robot", name))
    with pytest.raises(InputError) as exc:
        load_cell(f)
    msg = str(exc.value)
    assert msg.startswith(f"{f}: cell.robot: robot '{name}' has no joint torque, velocity or acceleration limit")
    assert "\n" not in msg


@pytest.mark.parametrize("height", [0.13, 0.07])
def test_box_types_of_different_heights_are_refused_when_read(tmp_path, height):
    """[pick] position is the top face of the box waiting on the conveyor, which lies one box height below it
    (`collisions.obstacles`: the first layer's box). The built-in cell with its light boxes (layer 2) 0.13 m high
    planned layer 1 and then stopped: "the carried box collides with the conveyor at t = 0.000 s (penetration
    30.0 mm); raise [motion] clearance or approach_height"; 0.07 m high they were planned gripped 3 cm above their
    top face, the payload hanging from air. Now one line when the file is read, before any IK or planning."""
    f = _load(tmp_path, _set("boxes.light", "size", [0.20, 0.15, height]))
    with pytest.raises(InputError) as info:
        load_cell(f, check_reach=False)
    msg = str(info.value)
    assert msg.startswith(f"{f}: pattern.boxes: box types ") and "differ in height" in msg and "\n" not in msg
    assert f"{height:g} m" in msg and "0.1 m" in msg
    load_cell(_load(tmp_path, _set("boxes.light", "size", [0.18, 0.15, 0.10])), check_reach=False)   # same height
