"""A plan handed to a controller: ROS 2 `trajectory_msgs/msg/JointTrajectory` (YAML or JSON) and CSV with
joint names, sampled from the exact time law (`TimeOptimalPlan.sample`).

The JointTrajectory layout is the message's: ``header`` (``stamp`` zero: "start when received",
``frame_id`` empty), ``joint_names`` and ``points``, each with ``positions``, ``velocities``,
``accelerations``, ``effort`` and ``time_from_start`` as ``sec`` / ``nanosec`` (nanoseconds rounded, so a
1 ms grid is exact; `toppra_app.trajectory.sample_times` keeps the last step ≥ 2 ns, so they increase).
Units are SI: rad or m, rad/s or m/s, rad/s² or m/s², N·m or N. The YAML is the plain block form
`ros2 topic pub` and launch parameter files read; it is written here, without a YAML library, because the
structure is fixed and only holds numbers and quoted names."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np

from .errors import InputError
from .checks import real
from . import trajectory
from .trajectory import check_bytes, size_text

FORMATS = ("csv", "ros2-yaml", "ros2-json")
FILE_NAMES = {"csv": "trajectory.csv", "ros2-yaml": "joint_trajectory.yaml", "ros2-json": "joint_trajectory.json"}


def _duration(t: float) -> dict:
    ns = int(round(t * 1e9))
    return {"sec": ns // 1_000_000_000, "nanosec": ns % 1_000_000_000}


CHUNK = 1000   # samples converted to text at a time: a file is written piece by piece, never held whole (at the
               # documented 10 million samples the YAML text alone was ~6 GB, its dicts and lines ~40 GB more)


def in_memory_bytes(n: int) -> int:
    """Bytes a sample takes at the peak as a message of Python dicts, lists and floats, or as the text of a
    file held in memory (`joint_trajectory`, `export_text`, `trajectory_csv`): ~1.8 kB for 7 joints, 7 times
    its arrays."""
    return 900 + 128 * n


IN_MEMORY_HINT = ", or write the file in pieces (toppra_app.export.write_trajectory)"


def _check_in_memory(sample, n: int) -> None:
    """`InputError` before a message or text of more than `MAX_SAMPLE_BYTES` is built from `sample`."""
    per_sample = in_memory_bytes(n)
    if len(sample.t) * per_sample > trajectory.MAX_SAMPLE_BYTES:
        raise InputError(f"sample: {len(sample.t)} samples of {n} joints take {size_text(len(sample.t) * per_sample)} "
                         f"as a message or text in memory ({per_sample} B a sample), more than the "
                         f"{size_text(trajectory.MAX_SAMPLE_BYTES)} it may take; sample with a larger dt{IN_MEMORY_HINT}")


def plan_sample_in_memory(plan, dt):
    """`plan.sample(dt)` for a message or text held in memory, refused (`_check_in_memory`) before it is sampled."""
    dt = real(dt, "dt", 0.0, None, bounds="(]", unit=" of seconds")
    check_bytes(plan.duration, dt, in_memory_bytes(plan.robot.n), "as a message or text in memory", IN_MEMORY_HINT)
    return plan.sample(dt)


SEC_MAX = 2 ** 31 - 1     # builtin_interfaces/Duration's sec is an int32: rclpy refuses a larger one, rclcpp wraps it


def _check_times(t) -> None:
    """`InputError` if two samples round to the same nanosecond (controllers need increasing times; on the
    rounded floats, whose comparisons are those of the whole numbers of nanoseconds), or the last time does not
    fit `time_from_start` (a plan of 68 years and more: limits scaled down absurdly)."""
    if len(t) and float(t[-1]) >= SEC_MAX + 1:
        raise InputError(f"duration: {float(t[-1]):.6g} s does not fit a ROS time_from_start (sec is a 32-bit "
                         f"integer, at most {SEC_MAX} s)")
    ns = np.round(np.asarray(t, dtype=float) * 1e9)
    same = np.flatnonzero(ns[1:] <= ns[:-1])
    if same.size:
        k = int(same[0])
        raise InputError(f"dt: samples {k} and {k + 1} (t = {float(t[k]):.9g} s) get the same time_from_start in "
                         f"whole nanoseconds; sample every 2 ns or more")


def _points(sample):
    """The message's points, `CHUNK` samples converted at a time (−0.0 written as 0.0: `_plus_zero`)."""
    for a in range(0, len(sample.t), CHUNK):
        rows = zip(sample.t[a:a + CHUNK].tolist(), *(_plus_zero(x[a:a + CHUNK]).tolist()
                                                    for x in (sample.q, sample.qd, sample.qdd, sample.tau)))
        for t, q, qd, qdd, tau in rows:
            yield {"positions": q, "velocities": qd, "accelerations": qdd, "effort": tau,
                   "time_from_start": _duration(t)}


def joint_trajectory(sample, joint_names) -> dict:
    """A `trajectory_msgs/msg/JointTrajectory` as a dict (see the module doc) from a `TrajectorySample`;
    `InputError` if two samples round to the same nanosecond (controllers need increasing times)."""
    _check_times(sample.t)
    _check_in_memory(sample, len(joint_names))
    return {"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": ""}, "joint_names": list(joint_names),
            "points": list(_points(sample))}


def _plus_zero(x: np.ndarray) -> np.ndarray:
    """`x` with −0.0 written as 0.0 (the speeds at a rest end came out "-0.0": a value a controller reads the
    same, but not what a user expects in a file)."""
    return np.asarray(x, dtype=float) + 0.0


def _num(x: float) -> str:
    """The shortest text that reads back as exactly `x`, with a decimal point in its mantissa ("1.0e-05", not
    Python's "1e-05"): YAML 1.1 readers — PyYAML, which ``ros2 topic pub`` and launch files use — take a number
    without one for a string, and such a value in a message fails to load."""
    if not math.isfinite(x):
        raise ValueError(f"trajectory value {x} is not finite")
    text = repr(float(x))
    mantissa, e, exponent = text.partition("e")
    return f"{mantissa}.0e{exponent}" if e and "." not in mantissa else text


def joint_trajectory_yaml(message: dict) -> str:
    """The message as YAML (block mappings, flow lists of numbers, names double-quoted)."""
    return "".join(_yaml_lines(message["joint_names"], message["points"]))


def _yaml_lines(joint_names, points):
    yield "\n".join(["header:", "  stamp:", "    sec: 0", "    nanosec: 0", '  frame_id: ""', "joint_names:"]
                     + [f"  - {_yaml_str(name)}" for name in joint_names] + ["points:"]) + "\n"
    for p in points:
        lines = []
        for key in ("positions", "velocities", "accelerations", "effort"):
            lines.append(f"  {'  ' if lines else '- '}{key}: [{', '.join(_num(v) for v in p[key])}]")
        d = p["time_from_start"]
        lines += ["    time_from_start:", f"      sec: {d['sec']}", f"      nanosec: {d['nanosec']}"]
        yield "\n".join(lines) + "\n"


def _yaml_str(text: str) -> str:
    """`text` double-quoted for YAML: JSON's escapes, which YAML shares, except a character beyond U+FFFF,
    which JSON writes as a surrogate pair ("\\ud835\\udfd9") that YAML readers take for two lone surrogates (a
    joint the robot does not have): YAML's own \\UXXXXXXXX."""
    return '"' + "".join(f"\\U{ord(c):08x}" if ord(c) > 0xFFFF else json.dumps(c)[1:-1] for c in text) + '"'


def _json_pieces(joint_names, points):
    """`json.dumps` of the message, in pieces (the same text)."""
    head = {"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": ""}, "joint_names": list(joint_names)}
    yield json.dumps(head)[:-1] + ', "points": ['
    for k, p in enumerate(points):
        yield (", " if k else "") + json.dumps(p)
    yield "]}\n"


def trajectory_csv(sample, joint_names, fmt: str = "%.17g") -> str:
    """t, then q, qd, qdd, tau of every joint (columns named ``q_<joint>`` …); by default every double
    exactly (`fmt` ``%.17g``). The header is written by the `csv` module: a name holding a comma, a quote
    or a line break is quoted, so a CSV reader finds one column per name."""
    _check_in_memory(sample, len(joint_names))
    buf = io.StringIO()
    _write_csv(buf, sample, joint_names, fmt)
    return buf.getvalue()


def _write_csv(fh, sample, joint_names, fmt: str = "%.17g") -> None:
    cols = ["t"] + [f"{k}_{j}" for k in ("q", "qd", "qdd", "tau") for j in joint_names]
    csv.writer(fh, lineterminator="\n").writerow(cols)
    for a in range(0, len(sample.t), CHUNK):
        rows = np.column_stack([x[a:a + CHUNK] for x in (sample.t, sample.q, sample.qd, sample.qdd, sample.tau)])
        np.savetxt(fh, _plus_zero(rows), delimiter=",", fmt=fmt)


def write_trajectory(fh, fmt: str, sample, joint_names) -> None:
    """Write `sample` in format `fmt` (one of `FORMATS`) to the text file `fh`, `CHUNK` samples at a time: the
    memory it takes is the sample's, not the file's (the `plan` command's files; `export_text` in memory)."""
    if fmt not in FORMATS:
        raise InputError(f"format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    names = list(joint_names)
    if fmt == "csv":
        return _write_csv(fh, sample, names)
    _check_times(sample.t)
    for piece in (_json_pieces if fmt == "ros2-json" else _yaml_lines)(names, _points(sample)):
        fh.write(piece)


def export_text(plan, fmt: str, dt: float = 1e-3, sample=None) -> tuple[str, str]:
    """(file name, text) of `plan` in format `fmt` (one of `FORMATS`), sampled every `dt` seconds."""
    if fmt not in FORMATS:
        raise InputError(f"format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    sample = plan_sample_in_memory(plan, dt) if sample is None else sample
    _check_in_memory(sample, len(plan.robot.joint_names))
    buf = io.StringIO()
    write_trajectory(buf, fmt, sample, plan.robot.joint_names)
    return FILE_NAMES[fmt], buf.getvalue()
