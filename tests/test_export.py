"""A plan handed to a controller: ROS 2 JointTrajectory (YAML read back by PyYAML, JSON), CSV with joint
names, and the `plan` command's --format, --lock, --tool-frame and scaling factors."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamics
from fixtures import PANDA_FINGERS
from toppra_app import JointPath, plan_time_optimal
from toppra_app.cli import main
from toppra_app.errors import InputError
from toppra_app.export import export_text, joint_trajectory, trajectory_csv
from toppra_app.trajectory import TrajectorySample, sample_times

yaml = pytest.importorskip("yaml")


@pytest.fixture(scope="module")
def plan():
    r = dynamics.load_robot("ur5e")
    W = np.array([np.zeros(r.n), 0.4 * r.q_max, 0.2 * r.q_min])
    return plan_time_optimal(r, JointPath.from_waypoints(W))


def test_ros2_yaml_and_json_are_the_same_message(plan):
    _, text_yaml = export_text(plan, "ros2-yaml", dt=0.01)
    _, text_json = export_text(plan, "ros2-json", dt=0.01)
    a, b = yaml.safe_load(text_yaml), json.loads(text_json)
    assert a == b
    assert a["joint_names"] == list(plan.robot.joint_names)
    assert set(a["points"][0]) == {"positions", "velocities", "accelerations", "effort", "time_from_start"}
    assert a["header"] == {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": ""}


def test_points_follow_the_plan_at_exact_times(plan):
    msg = joint_trajectory(plan.sample(1e-3), plan.robot.joint_names)
    pts = msg["points"]
    t = np.array([p["time_from_start"]["sec"] + 1e-9 * p["time_from_start"]["nanosec"] for p in pts])
    ns = np.array([p["time_from_start"]["sec"] * 10 ** 9 + p["time_from_start"]["nanosec"] for p in pts])
    assert np.all(ns[:-1] % 1_000_000 == 0) and np.all(np.diff(ns) > 0)      # the 1 ms grid, exactly
    assert all(0 <= p["time_from_start"]["nanosec"] < 10 ** 9 for p in pts)
    assert t[-1] == pytest.approx(plan.duration, abs=1e-9)
    q = np.array([p["positions"] for p in pts])
    qd = np.array([p["velocities"] for p in pts])
    assert np.allclose(q, plan.eval(t), atol=1e-12)
    assert np.allclose(qd, plan.evald(t), atol=1e-7)              # t rounded to whole nanoseconds
    assert np.allclose(q[0], plan.path.q(np.array([0.0]))[0]) and np.allclose(qd[[0, -1]], 0.0, atol=1e-9)


def test_csv_names_columns_and_keeps_doubles_exactly(plan):
    name, text = export_text(plan, "csv")
    header = text.splitlines()[0].split(",")
    assert name == "trajectory.csv"
    assert header[:2] == ["t", f"q_{plan.robot.joint_names[0]}"] and header[-1] == f"tau_{plan.robot.joint_names[-1]}"
    data = np.loadtxt(text.splitlines()[1:], delimiter=",")
    s = plan.sample(1e-3)
    assert np.array_equal(data[:, 1:1 + plan.robot.n], s.q)


def test_unknown_format_is_refused(plan):
    with pytest.raises(ValueError, match="format"):
        export_text(plan, "ros1")


def _ns(msg):
    return np.array([p["time_from_start"]["sec"] * 10 ** 9 + p["time_from_start"]["nanosec"] for p in msg["points"]])


def test_time_stamps_strictly_increase_and_end_on_the_exact_end_time(plan):
    """A duration less than 0.5 ns past a multiple of dt (the audit's 0.5410000003 s at 1 ms): the grid time
    0.541 s is left out instead of being followed 0.3 ns later by the end time (both 541 000 000 ns)."""
    rng = np.random.default_rng(2)
    cases = [(0.5410000003, 1e-3), (0.541, 1e-3), (0.5410000000001, 1e-3), (2.0000000004, 997e-9), (0.0071, 1e-3)]
    cases += [(k * dt + rng.uniform(-3e-9, 3e-9), dt) for k, dt in zip(rng.integers(1, 5000, 300),
                                                                        rng.choice([1e-3, 997e-9, 4e-3], 300))]
    for D, dt in cases:
        t = sample_times(D, dt)
        steps = np.diff(t)
        assert t[0] == 0.0 and t[-1] == D and np.all(np.diff(np.round(t * 1e9)) > 0), (D, dt)
        least = max(1e-3 * dt, 2e-9)                 # the shortest last step; the longest is dt + that
        assert np.allclose(steps[:-1], dt, rtol=1e-6) and least * (1 - 1e-6) <= steps[-1] <= dt + least * (1 + 1e-6)
    k = round(plan.duration / 1e-3)
    dt = (plan.duration - 3e-10) / k                   # the grid's last time 0.3 ns before the end
    assert plan.duration - np.arange(0.0, plan.duration, dt)[-1] < 5e-10
    ns = _ns(plan.joint_trajectory(dt))
    assert np.all(np.diff(ns) > 0) and ns[-1] == round(plan.duration * 1e9) and len(ns) == k + 1
    assert len(export_text(plan, "csv", dt=dt)[1].splitlines()) == k + 2
    tiny = TrajectorySample(*(np.zeros((3, 6)) if i in (1, 2, 3, 4) else np.array([0.0, 1e-10, 2e-10])
                              for i in range(5)), *([np.zeros(3)] * 3))
    with pytest.raises(InputError, match=r"dt: samples 0 and 1 \(t = 0 s\) get the same time_from_start"):
        joint_trajectory(tiny, plan.robot.joint_names)


def test_csv_header_quotes_names_that_hold_commas_or_quotes(plan, tmp_path):
    """A joint named 'j,1' (the audit's URDF) made 9 header fields for 5 per row; now the csv module reads
    back one column per name, in the library's CSV and in the plan command's trajectory.csv."""
    names = ["j,1", 'j"2', "j 3", "j4", "j5", "j6"]
    rows = list(csv.reader(io.StringIO(trajectory_csv(plan.sample(0.01), names))))
    assert rows[0] == ["t"] + [f"{k}_{j}" for k in ("q", "qd", "qdd", "tau") for j in names]
    assert {len(r) for r in rows} == {1 + 4 * 6}
    urdf = tmp_path / "comma.urdf"
    urdf.write_text('<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/><origin xyz="0.1 0 0"/>'
                    '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                    '<joint name="j,1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>'
                    '<limit lower="-1" upper="1" velocity="1" effort="10"/></joint></robot>')
    wp = _csv(tmp_path / "wp.csv", np.array([[0.0], [0.5]]))
    assert main(["plan", wp, "--robot", str(urdf), "--out", str(tmp_path / "o"), "--no-plots", "--no-report"]) == 0
    rows = list(csv.reader(open(tmp_path / "o" / "trajectory.csv", newline="")))
    assert rows[0] == ["t", "q_j,1", "qd_j,1", "qdd_j,1", "tau_j,1"] and {len(r) for r in rows} == {5}


@pytest.mark.parametrize("t", [np.zeros((2, 3)), [[0.1]], "abc", None, [0.1, np.nan], "0.1", b"0.1", True,
                               [True, False], 0.1 + 0j, [0.1, "0.2"]])
def test_eval_refuses_times_that_are_not_a_time_or_a_list_of_times(plan, t):
    """A 2-D t gave a (6, n) array; now one line naming t (toppra's documented input is a scalar or (m,)).
    A string, bytes, a boolean and a complex time were converted (an audit: "0.1" evaluated at 0.1 s)."""
    for f in (plan.eval, plan.evald, plan.evaldd):
        with pytest.raises(InputError, match=r"^t: ") as info:
            f(t)
        assert "\n" not in str(info.value)
    assert plan.eval(0.1).shape == (6,) and plan.eval([0.1, 0.2]).shape == (2, 6) and plan.eval([]).shape == (0, 6)
    assert np.array_equal(plan.eval(np.int64(0)), plan.eval(0.0)) and plan.eval(np.float32(0.1)).shape == (6,)


# ------------------------------------------------------------------------------ command line
def _csv(path, W):
    path.write_text("\n".join(",".join(repr(float(v)) for v in row) for row in W) + "\n")
    return str(path)


def test_plan_command_writes_every_format_and_names_joints(tmp_path):
    r = dynamics.load_robot("iiwa7")
    wp = _csv(tmp_path / "wp.csv", np.array([np.zeros(r.n), 0.3 * r.q_max]))
    out = tmp_path / "out"
    assert main(["plan", wp, "--robot", "iiwa7", "--out", str(out), "--no-plots",
                 "--format", "csv,ros2-yaml,ros2-json"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["joint_names"] == list(r.joint_names) and summary["version"] and summary["units"]["effort"]
    msg = yaml.safe_load((out / "joint_trajectory.yaml").read_text())
    assert msg == json.loads((out / "joint_trajectory.json").read_text())
    assert len(msg["points"]) == len((out / "trajectory.csv").read_text().splitlines()) - 1


def test_scaling_factors_slow_the_motion_within_the_scaled_limits(tmp_path):
    r = dynamics.load_robot("iiwa7")
    wp = _csv(tmp_path / "wp.csv", np.array([np.zeros(r.n), 0.6 * r.q_max]))
    durations, qd = {}, {}
    for f in (1.0, 0.5):
        out = tmp_path / f"out{f}"
        assert main(["plan", wp, "--robot", "iiwa7", "--out", str(out), "--no-plots", "--velocity-scaling", str(f),
                     "--acceleration-scaling", str(f)]) == 0
        durations[f] = json.loads((out / "summary.json").read_text())["duration"]
        data = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1)
        qd[f] = np.abs(data[:, 1 + r.n:1 + 2 * r.n]).max(axis=0)
    assert durations[0.5] > durations[1.0]
    assert np.all(qd[0.5] <= 0.5 * r.qd_max * (1 + 1e-3))


def test_plan_command_locks_urdf_joints_and_picks_the_tool_frame(tmp_path, panda_urdf):
    W = np.array([[0, -0.3, 0, -2.0, 0, 1.8, 0.8], [0.8, 0.2, 0.3, -1.6, 0.2, 2.0, 0.4]])
    wp = _csv(tmp_path / "wp.csv", W)
    out = tmp_path / "out"
    args = ["plan", wp, "--robot", panda_urdf, "--out", str(out), "--no-plots", "--tool-frame", "panda_hand"]
    for name, value in PANDA_FINGERS.items():
        args += ["--lock", f"{name}={value}"]
    assert main(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dof"] == 7 and "panda_finger_joint1" not in summary["joint_names"]


def test_plan_command_couples_mimic_joints(tmp_path, panda_urdf):
    """--mimic coupled (the default): the Panda's finger_joint2 follows finger_joint1, 8 joints in the
    waypoints; with the finger closing, both fingers' velocity limit (0.2 m/s) holds."""
    W = np.array([[0, -0.3, 0, -2.0, 0, 1.8, 0.8, 0.0], [0.8, 0.2, 0.3, -1.6, 0.2, 2.0, 0.4, 0.04]])
    wp = _csv(tmp_path / "wp.csv", W)
    out = tmp_path / "out"
    assert main(["plan", wp, "--robot", panda_urdf, "--out", str(out), "--no-plots", "--mimic", "coupled"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dof"] == 8 and summary["joint_names"][-1] == "panda_finger_joint1"
    data = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1)
    assert np.abs(data[:, 1 + 8 + 7]).max() <= 0.2 * (1 + 1e-3)
    wp9 = _csv(tmp_path / "wp9.csv", np.hstack([W, W[:, -1:]]))
    assert main(["plan", wp9, "--robot", panda_urdf, "--out", str(tmp_path / "o9"), "--no-plots",
                 "--mimic", "independent"]) == 0
    assert json.loads((tmp_path / "o9" / "summary.json").read_text())["dof"] == 9


@pytest.mark.parametrize("args, why", [
    (["--format", "csv,ros1"], "--format"), (["--lock", "joint"], "--lock"), (["--lock", "a=nan"], "--lock"),
    (["--lock", "a=1"], "only for a URDF robot"), (["--mimic", "coupled"], "--mimic: only for a URDF robot"), (["--velocity-scaling", "0"], "--velocity-scaling"),
    (["--acceleration-scaling", "1.5"], "--acceleration-scaling")])
def test_bad_export_options_are_one_line(tmp_path, capsys, args, why):
    r = dynamics.load_robot("iiwa7")
    wp = _csv(tmp_path / "wp.csv", np.array([np.zeros(r.n), 0.3 * r.q_max]))
    assert main(["plan", wp, "--robot", "iiwa7", "--out", str(tmp_path / "o"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert why in err and "\n" not in err
    assert not (tmp_path / "o").exists()


def test_no_negative_zeros_in_the_files(plan):
    """The speeds at the rest ends came out as -0.0 ("-0" in the CSV): the same number to a controller, but not
    what a user expects to read. Every format writes them as 0."""
    sample = plan.sample(1e-3)
    assert (np.signbit(sample.qd[[0, -1]]) & (sample.qd[[0, -1]] == 0)).any()      # the sample has them
    for fmt in ("ros2-yaml", "ros2-json", "csv"):
        _, text = export_text(plan, fmt)
        assert "-0.0," not in text and "-0.0]" not in text and ",-0," not in text and ",-0\n" not in text, fmt


def test_yaml_numbers_are_numbers_to_a_yaml_1_1_reader():
    """Python writes 1e-05 without a decimal point, which YAML 1.1 — PyYAML, what ``ros2 topic pub`` and
    ``ros2 action send_goal`` read messages with — takes for the string '1e-05': a waypoint of 1e-05 rad made
    the first point's positions fail to load. Every value of the YAML file reads back as the JSON file's
    number, exactly."""
    r = dynamics.load_robot("ur5e")
    W = np.array([[1e-05, -2e-07, 0.0, 3e-06, 0.0, 1e-05], 0.3 * r.q_max])
    p = plan_time_optimal(r, JointPath.from_waypoints(W))
    _, text_yaml = export_text(p, "ros2-yaml")
    _, text_json = export_text(p, "ros2-json")
    a, b = yaml.safe_load(text_yaml), json.loads(text_json)
    assert a["points"][0]["positions"] == [1e-05, -2e-07, 0.0, 3e-06, 0.0, 1e-05]
    assert a == b
    assert all(type(v) is float for pt in a["points"] for k in ("positions", "velocities", "accelerations", "effort")
               for v in pt[k])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=6))
def test_yaml_writes_every_double_as_a_yaml_1_1_float(values):
    from toppra_app.export import joint_trajectory_yaml
    msg = {"joint_names": [f"j{k}" for k in range(len(values))],
           "points": [{key: values for key in ("positions", "velocities", "accelerations", "effort")}
                      | {"time_from_start": {"sec": 0, "nanosec": 0}}]}
    back = yaml.safe_load(joint_trajectory_yaml(msg))["points"][0]
    for key in ("positions", "velocities", "accelerations", "effort"):
        assert all(type(v) is float for v in back[key]) and back[key] == [v + 0.0 for v in values], key
