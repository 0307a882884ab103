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


@pytest.fixture(scope="module")
def plan():
    r = dynamics.load_robot("ur5e")
    W = np.array([np.zeros(r.n), 0.4 * r.q_max, 0.2 * r.q_min])
    return plan_time_optimal(r, JointPath.from_waypoints(W))


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
