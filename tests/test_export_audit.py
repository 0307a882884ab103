"""An integrator's audit of the exported trajectories (ROS 2 JointTrajectory YAML/JSON, CSV): what a controller
relies on, read back as a controller would, against independent oracles (PyYAML, json, csv, Pinocchio's RNEA),
and the `plan` command's export options at their limits."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import dynamics
from toppra_app import JointPath, plan_time_optimal
from toppra_app.commands.plan import write_outputs
from toppra_app.errors import InputError
from toppra_app.export import FILE_NAMES, FORMATS, export_text, joint_trajectory_yaml

yaml = pytest.importorskip("yaml")
from test_export import plan  # noqa: E402,F401  (the same ur5e plan fixture)


def _writing_memory(plan, sample, directory) -> int:
    """Peak of the memory `plan`'s writer takes (tracemalloc) to write every format of `sample` into `directory`."""
    directory.mkdir()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        write_outputs(str(directory), plan, sample, "wp.csv", plots=False, formats=FORMATS, report=False)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_files_are_written_without_holding_their_text_in_memory(plan, tmp_path):
    """`plan --dt 1e-6` on a 10 s plan (10 million samples, the documented bound) was killed for memory: the
    YAML file was built as dicts, lines and one string (4.1 GB of memory for 877 000 samples, ~47 GB at the
    bound; the CSV 1.5 GB, ~17 GB). The files are now written a chunk of samples at a time: five times the
    samples take no more memory to write (they took five times as much)."""
    small, large = plan.sample(1e-3), plan.sample(2e-4)          # 2171 and 10 849 samples
    peaks = [_writing_memory(plan, s, tmp_path / name) for s, name in ((small, "small"), (large, "large"))]
    assert peaks[1] < 1.5 * peaks[0], peaks
    for fmt in FORMATS:                                          # the same text as the library's
        assert (tmp_path / "large" / FILE_NAMES[fmt]).read_text() == export_text(plan, fmt, sample=large)[1]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4))
@example(["gelenk_\U0001D7D9"]).via("a URDF joint named with a character beyond U+FFFF")
def test_yaml_joint_names_read_back_as_the_robots(names):
    """A joint name with a character beyond U+FFFF (an emoji, a mathematical letter: a URDF may name joints
    so, and `from_urdf` takes them) was written as JSON's surrogate pair "\\ud835\\udfd9", which a YAML
    reader (PyYAML: ``ros2 topic pub``, launch files) reads as two lone surrogates: the message named a joint
    the robot does not have. YAML writes such a character as \\U0001d7d9."""
    msg = {"joint_names": names, "points": []}
    assert yaml.safe_load(joint_trajectory_yaml(msg))["joint_names"] == names



def test_a_plan_longer_than_ros_time_from_start_holds_is_refused_in_the_ros_formats():
    """ROS's builtin_interfaces/Duration has an int32 `sec`: a plan of 8e9 s (velocity limits scaled by 1e-10;
    the planner plans motions up to 1e15 s) was written with sec = 7 998 209 259, a message rclpy refuses to
    build and rclcpp wraps to a negative time. Now one line naming the duration; the CSV has no such field.
    An unknown format is an `InputError` too (it was a bare ValueError)."""
    r = dynamics.load_robot("ur5e")
    slow = r.with_limits(qd_max=1e-10 * r.qd_max)
    p = plan_time_optimal(slow, JointPath.from_waypoints(np.array([np.zeros(r.n), 0.4 * r.q_max])))
    assert p.duration > 2 ** 31
    for fmt in ("ros2-yaml", "ros2-json"):
        with pytest.raises(InputError, match=r"^duration: 7\.99821e\+09 s does not fit a ROS time_from_start \(sec "
                                             r"is a 32-bit integer, at most 2147483647 s\)$"):
            export_text(p, fmt, dt=p.duration / 3)
    with pytest.raises(InputError, match=r"^dt: "):
        p.joint_trajectory(dt=p.duration / 3 + 0j)
    assert len(export_text(p, "csv", dt=p.duration / 3)[1].splitlines()) == 5
    fast = plan_time_optimal(r.with_limits(qd_max=1e-8 * r.qd_max), p.path)      # 80 million s: 2.5 years fit
    msg = yaml.safe_load(export_text(fast, "ros2-yaml", dt=fast.duration / 3)[1])
    assert msg["points"][-1]["time_from_start"]["sec"] == int(fast.duration) < 2 ** 31
    with pytest.raises(InputError, match=r"^format: expected one of csv, ros2-yaml, ros2-json, got 'ros1'$"):
        export_text(p, "ros1")

# ------------------------------------------------------------------------------ command line
def _waypoints(path, W):
    path.write_text("\n".join(",".join(repr(float(v)) for v in row) for row in W) + "\n")
    return str(path)


@pytest.mark.parametrize("value, why", [
    ("csv,,ros2-yaml", "--format: an empty entry in 'csv,,ros2-yaml'"), ("csv,", "--format: an empty entry"),
    ("csv,csv", "--format: 'csv' given twice"), ("ros2-json, ros2-json", "'ros2-json' given twice"),
    ("csv,ros1", "--format: unknown format 'ros1' in 'csv,ros1'"), ("", "--format: an empty entry in ''")])
def test_format_lists_with_a_hole_a_repeat_or_an_unknown_entry_are_one_line(tmp_path, capsys, value, why):
    """`--format csv,,ros2-yaml` and `csv,csv` were taken silently (the empty entry dropped, the repeat written
    once); an unknown entry was reported as the whole list. Now each is one line naming the entry; nothing is
    written."""
    from toppra_app.cli import main
    r = dynamics.load_robot("iiwa7")
    wp = _waypoints(tmp_path / "wp.csv", np.array([np.zeros(r.n), 0.3 * r.q_max]))
    assert main(["plan", wp, "--out", str(tmp_path / "o"), "--no-plots", "--no-report", "--format", value]) == 2
    err = capsys.readouterr().err.strip()
    assert why in err and "\n" not in err and "ros2-yaml, ros2-json" in err
    assert not (tmp_path / "o").exists()
    assert main(["plan", wp, "--out", str(tmp_path / "o"), "--no-plots", "--no-report",
                 "--format", " ros2-json , csv"]) == 0
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [".toppra-app-manifest.json", "joint_trajectory.json",
                                                                  "summary.json", "trajectory.csv"]


def test_too_many_samples_name_the_dt_option(tmp_path, capsys):
    """`--dt 1e-6` on an 88 s plan (8.8e7 samples, over the 1e7 bound) ended in 'dt: …', the library's argument,
    not the option the user typed; now '--dt: …', one line, nothing written."""
    from toppra_app.cli import main
    r = dynamics.load_robot("iiwa7")
    wp = _waypoints(tmp_path / "wp.csv", np.array([np.zeros(r.n), [1.5, 1.5, 1.5, -1.5, 1.5, 1.5, 1.5]]))
    out = tmp_path / "o"
    assert main(["plan", wp, "--out", str(out), "--no-plots", "--no-report", "--velocity-scaling", "0.01",
                 "--dt", "1e-6"]) == 2
    err = capsys.readouterr().err.strip()
    assert "toppra-app plan: error: --dt: 1e-06 s gives 8.77e+07 samples" in err and "\n" not in err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["wp.csv"]



def test_summary_records_the_sample_time_asked_for(tmp_path):
    """summary.json's `sample_time` was the first step of the samples: with `--dt 2` on a 0.54 s plan (one step,
    the duration) it said 0.5414 s; it is --dt as given."""
    import json
    from toppra_app.cli import main
    r = dynamics.load_robot("iiwa7")
    wp = _waypoints(tmp_path / "wp.csv", np.array([np.zeros(r.n), 0.3 * r.q_max]))
    for dt in ("2", "0.001"):
        out = tmp_path / dt
        assert main(["plan", wp, "--out", str(out), "--no-plots", "--no-report", "--dt", dt]) == 0
        summary = json.loads((out / "summary.json").read_text())
        assert summary["sample_time"] == float(dt) and summary["duration"] < 2
        assert summary["samples"] == len((out / "trajectory.csv").read_text().splitlines()) - 1

# ------------------------------------------------------------------------------ the files against other engines
PAYLOAD = ["--payload-mass", "2", "--payload-com", "0.01", "0.02", "0.05", "--payload-inertia", "0.01", "0.02", "0.03"]


@pytest.fixture(scope="module")
def panda_files(tmp_path_factory, panda_urdf):
    """`plan` on example-robot-data's Panda (fingers locked) carrying a payload, every format at 1 ms."""
    from toppra_app.cli import main
    d = tmp_path_factory.mktemp("panda")
    W = np.array([[0, -0.3, 0, -2.0, 0, 1.8, 0.8], [0.8, 0.2, 0.3, -1.6, 0.2, 2.0, 0.4],
                  [0.1, 0.4, -0.2, -1.2, 0.3, 1.5, 0]])
    args = ["plan", _waypoints(d / "wp.csv", W), "--robot", panda_urdf, "--out", str(d / "o"), "--no-plots",
            "--no-report", "--format", "ros2-yaml,ros2-json,csv", *PAYLOAD]
    for name, value in {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02}.items():
        args += ["--lock", f"{name}={value}"]
    assert main(args) == 0
    return d / "o"


def _arrays(msg):
    return {k: np.array([p[k] for p in msg["points"]]) for k in ("positions", "velocities", "accelerations", "effort")}


def test_ros_files_hold_what_a_controller_needs(panda_files):
    """Read back as ROS would (PyYAML, json, the csv module): names, types, ranges and times; the three files hold
    the same numbers exactly (the CSV's %.17g), the times are the CSV's rounded to whole nanoseconds."""
    import csv
    import json
    summary = json.loads((panda_files / "summary.json").read_text())
    msg = yaml.safe_load((panda_files / "joint_trajectory.yaml").read_text())
    assert msg == json.loads((panda_files / "joint_trajectory.json").read_text())
    assert msg["joint_names"] == summary["joint_names"] == [f"panda_joint{k}" for k in range(1, 8)]
    n = len(msg["joint_names"])
    for p in msg["points"]:
        d = p["time_from_start"]
        assert type(d["sec"]) is int and type(d["nanosec"]) is int and 0 <= d["nanosec"] < 10 ** 9
        for k in ("positions", "velocities", "accelerations", "effort"):
            assert len(p[k]) == n and all(type(v) is float and np.isfinite(v) for v in p[k])
    ns = np.array([p["time_from_start"]["sec"] * 10 ** 9 + p["time_from_start"]["nanosec"] for p in msg["points"]])
    assert ns[0] == 0 and np.all(np.diff(ns) > 0) and ns[-1] == round(summary["duration"] * 1e9)
    assert np.all(ns[:-1] == 10 ** 6 * np.arange(len(ns) - 1))                   # the 1 ms grid, exactly
    rows = list(csv.reader(open(panda_files / "trajectory.csv", newline="")))
    assert rows[0] == ["t"] + [f"{k}_{j}" for k in ("q", "qd", "qdd", "tau") for j in msg["joint_names"]]
    data = np.loadtxt(panda_files / "trajectory.csv", delimiter=",", skiprows=1)
    assert np.array_equal(np.round(data[:, 0] * 1e9), ns) and data[-1, 0] == summary["duration"]
    a = _arrays(msg)
    keys = ("positions", "velocities", "accelerations", "effort")
    assert np.array_equal(data[:, 1:], np.hstack([a[k] for k in keys]))
    assert not any(t.startswith("-0") or "-0.0," in t for t in open(panda_files / "trajectory.csv"))


def test_effort_is_pinocchio_inverse_dynamics_with_the_payload_and_the_urdf_friction(panda_files, panda_urdf):
    """The written effort = RNEA of Pinocchio's own model of the URDF (fingers locked, the payload added to the
    tool frame's body by Pinocchio) + the URDF's <dynamics damping friction> as Pinocchio reads them."""
    pin = pytest.importorskip("pinocchio")
    full = pin.buildModelFromUrdf(panda_urdf)
    q0 = pin.neutral(full)
    for name in ("panda_finger_joint1", "panda_finger_joint2"):
        q0[full.joints[full.getJointId(name)].idx_q] = 0.02
    model = pin.buildReducedModel(full, [full.getJointId("panda_finger_joint1"),
                                         full.getJointId("panda_finger_joint2")], q0)
    frame = model.frames[model.getFrameId("panda_hand_tcp")]
    payload = pin.Inertia(2.0, np.array([0.01, 0.02, 0.05]), np.diag([0.01, 0.02, 0.03]))
    model.inertias[frame.parentJoint] = model.inertias[frame.parentJoint] + frame.placement.act(payload)
    data = model.createData()
    a = _arrays(yaml.safe_load((panda_files / "joint_trajectory.yaml").read_text()))
    rnea = np.array([pin.rnea(model, data, q, v, w) for q, v, w in zip(a["positions"], a["velocities"],
                                                                         a["accelerations"])])
    assert np.any(model.damping > 0)
    expected = rnea + model.damping * a["velocities"] + model.friction * np.sign(a["velocities"])
    assert np.abs(a["effort"] - expected).max() <= 1e-9 * np.abs(expected).max()


def test_the_yaml_file_replayed_in_mujoco_follows_its_positions(panda_files, panda_urdf, tmp_path):
    """The written message, as a controller gets it: MuJoCo's inverse dynamics (`mj_inverse`, on the model of
    the exported URDF of the robot with its payload) at the file's points is the file's effort, and the effort
    held over each step (the last one shorter: the exact end time) plus a moderate PD tracks the positions,
    more than a hundred times closer than the same PD without it."""
    mujoco = pytest.importorskip("mujoco")
    from test_controller_mujoco import mujoco_inverse, mujoco_model
    from dynamics.payload import RigidBodyInertia, with_payload
    from dynamics.urdf import from_urdf
    robot = with_payload(from_urdf(panda_urdf, locked_joints={"panda_finger_joint1": 0.02,
                                                                "panda_finger_joint2": 0.02}),
                         RigidBodyInertia(2.0, np.array([0.01, 0.02, 0.05]), np.diag([0.01, 0.02, 0.03])))
    msg = yaml.safe_load((panda_files / "joint_trajectory.yaml").read_text())
    a = _arrays(msg)
    t = np.array([p["time_from_start"]["sec"] + 1e-9 * p["time_from_start"]["nanosec"] for p in msg["points"]])
    model = mujoco_model(robot, tmp_path.as_posix())
    ref = mujoco_inverse(model, a["positions"], a["velocities"], a["accelerations"])
    assert np.abs(ref - a["effort"]).max() <= 1e-9 * np.abs(a["effort"]).max()
    data = mujoco.MjData(model)
    data.qpos[:] = a["positions"][0]
    mujoco.mj_forward(model, data)
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, M)
    Kp, Kd = 900.0 * M, 60.0 * M          # 30 rad/s, critically damped (with the start's whole mass matrix:
                                          # its diagonal alone, on the Panda's coupled wrist, is unstable at 1 ms)
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4

    def replay(effort):
        """Largest position error: each point's effort (and PD) held until the next point's time."""
        mujoco.mj_resetData(model, data)
        data.qpos[:] = a["positions"][0]
        error = 0.0
        for k in range(len(t) - 1):
            e = a["positions"][k] - data.qpos
            error = max(error, np.abs(e).max())
            data.qfrc_applied[:] = effort[k] + Kp @ e + Kd @ (a["velocities"][k] - data.qvel)
            model.opt.timestep = t[k + 1] - t[k]
            mujoco.mj_step(model, data)
        return max(error, np.abs(a["positions"][-1] - data.qpos).max())

    tracked, feedback_only = replay(a["effort"]), replay(0 * a["effort"])
    assert tracked < 3e-3 and feedback_only > 100 * tracked, (tracked, feedback_only)  # measured 1.7e-3, 0.39 rad


@pytest.mark.parametrize("factor", [0.5, 0.013])
def test_scaling_velocity_by_f_and_acceleration_by_f_squared_is_the_same_motion_f_times_slower(factor):
    """MoveIt-style factors (docs/export.md: the plan is time-optimal under the scaled limits). On a robot bounded
    by velocity and acceleration limits only, limits scaled by f and f² give exactly the plan slowed down by f:
    duration / f, q_f(t) = q(f t), q̇_f(t) = f q̇(f t), every sample within the scaled limits (planner's tol)."""
    r = dynamics.load_robot("panda")
    r = r.with_limits(tau_max=np.full(r.n, np.inf))
    W = np.array([np.zeros(r.n), 0.5 * r.q_max, 0.3 * r.q_min])
    W[:, 3] = [-1.5, -0.5, -2.0]
    path = JointPath.from_waypoints(W)
    p1 = plan_time_optimal(r, path)
    slow = r.with_limits(qd_max=factor * r.qd_max, qdd_max=factor ** 2 * r.qdd_max)
    pf = plan_time_optimal(slow, path)
    assert pf.duration == pytest.approx(p1.duration / factor, rel=1e-12)
    s = pf.sample(1e-2)
    assert np.abs(s.q - p1.eval(factor * s.t)).max() < 1e-12
    assert np.abs(s.qd - factor * p1.evald(factor * s.t)).max() < 1e-12 * np.abs(s.qd).max()
    assert pf.within_limits and np.all(np.abs(s.qd) <= slow.qd_max * 1.001)
    assert np.all(np.abs(s.qdd) <= slow.qdd_max * 1.001)
