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

FORMATS = ("csv", "ros2-yaml", "ros2-json")
FILE_NAMES = {"csv": "trajectory.csv", "ros2-yaml": "joint_trajectory.yaml", "ros2-json": "joint_trajectory.json"}


def _duration(t: float) -> dict:
    ns = int(round(t * 1e9))
    return {"sec": ns // 1_000_000_000, "nanosec": ns % 1_000_000_000}


def joint_trajectory(sample, joint_names) -> dict:
    """A `trajectory_msgs/msg/JointTrajectory` as a dict (see the module doc) from a `TrajectorySample`;
    `InputError` if two samples round to the same nanosecond (controllers need increasing times)."""
    points = [{"positions": q.tolist(), "velocities": qd.tolist(), "accelerations": qdd.tolist(),
               "effort": tau.tolist(), "time_from_start": _duration(float(t))}
              for t, q, qd, qdd, tau in zip(sample.t, *(_plus_zero(x) for x in (sample.q, sample.qd, sample.qdd,
                                                                               sample.tau)))]
    ns = [p["time_from_start"]["sec"] * 1_000_000_000 + p["time_from_start"]["nanosec"] for p in points]
    same = [k for k in range(len(ns) - 1) if ns[k + 1] <= ns[k]]
    if same:
        raise InputError(f"dt: samples {same[0]} and {same[0] + 1} (t = {float(sample.t[same[0]]):.9g} s) get the "
                         f"same time_from_start in whole nanoseconds; sample every 2 ns or more")
    return {"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": ""}, "joint_names": list(joint_names),
            "points": points}


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
    lines = ["header:", "  stamp:", "    sec: 0", "    nanosec: 0", '  frame_id: ""', "joint_names:"]
    lines += [f"  - {json.dumps(name)}" for name in message["joint_names"]]
    lines.append("points:")
    for p in message["points"]:
        first = True
        for key in ("positions", "velocities", "accelerations", "effort"):
            lines.append(f"  {'- ' if first else '  '}{key}: [{', '.join(_num(v) for v in p[key])}]")
            first = False
        d = p["time_from_start"]
        lines += ["    time_from_start:", f"      sec: {d['sec']}", f"      nanosec: {d['nanosec']}"]
    return "\n".join(lines) + "\n"


def trajectory_csv(sample, joint_names, fmt: str = "%.17g") -> str:
    """t, then q, qd, qdd, tau of every joint (columns named ``q_<joint>`` …); by default every double
    exactly (`fmt` ``%.17g``). The header is written by the `csv` module: a name holding a comma, a quote
    or a line break is quoted, so a CSV reader finds one column per name."""
    cols = ["t"] + [f"{k}_{j}" for k in ("q", "qd", "qdd", "tau") for j in joint_names]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(cols)
    np.savetxt(buf, _plus_zero(np.column_stack([sample.t, sample.q, sample.qd, sample.qdd, sample.tau])),
               delimiter=",", fmt=fmt)
    return buf.getvalue()


def export_text(plan, fmt: str, dt: float = 1e-3, sample=None) -> tuple[str, str]:
    """(file name, text) of `plan` in format `fmt` (one of `FORMATS`), sampled every `dt` seconds."""
    if fmt not in FORMATS:
        raise ValueError(f"format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    sample = plan.sample(dt) if sample is None else sample
    names = list(plan.robot.joint_names)
    if fmt == "csv":
        return FILE_NAMES[fmt], trajectory_csv(sample, names)
    message = joint_trajectory(sample, names)
    if fmt == "ros2-json":
        return FILE_NAMES[fmt], json.dumps(message) + "\n"
    return FILE_NAMES[fmt], joint_trajectory_yaml(message)
