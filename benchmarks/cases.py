"""The planner benchmark suite: robots and path families we did not tune on (issue 10), and the three
fixed paths per robot the tests use (`BENCH_PATHS`)."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np

BENCH_PATHS = {
    "panda": {
        "pick-place": [[0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.7], [0.8, 0.2, -0.3, -1.5, 0.5, 1.9, 0.2],
                       [1.5, 0.5, 0.2, -1.0, -0.4, 2.3, -0.5], [0.9, 0.0, 0.5, -2.2, 0.3, 1.2, 0.4]],
        "long-swing": [[-2.0, -0.3, 0.4, -2.4, -0.6, 2.0, 0.0], [-0.5, 0.6, 0.1, -1.2, 0.2, 1.2, 1.0],
                       [1.2, 0.9, -0.4, -0.8, 0.8, 2.8, -1.2], [2.2, 0.1, 0.6, -1.9, -0.2, 1.5, 0.5]],
        "straight": [[-1.2, 0.7, 0.0, -1.0, 0.0, 2.0, 0.0], [1.2, 0.7, 0.0, -1.0, 0.0, 2.0, 0.0]],
    },
    "iiwa7": {
        "pick-place": [[0.0, 0.4, 0.0, -1.2, 0.0, 1.0, 0.0], [1.0, 0.9, 0.3, -0.9, 0.2, 0.8, 0.5],
                       [1.8, 0.6, -0.2, -1.5, -0.3, 1.1, -0.4], [2.4, 1.0, 0.1, -0.8, 0.1, 0.5, 0.2]],
        "long-swing": [[-2.2, 0.2, 0.5, -1.6, 0.5, 1.2, 0.0], [-0.8, 1.2, -0.6, -0.6, -0.8, -0.5, 1.5],
                       [0.9, 1.4, 0.3, -0.4, 0.6, 1.6, -1.0], [2.3, 0.5, -0.4, -1.8, -0.3, 0.4, 0.8]],
        "straight": [[-1.5, 1.2, 0.0, -0.5, 0.0, 0.5, 0.0], [1.5, 1.2, 0.0, -0.5, 0.0, 0.5, 0.0]],
    },
}


# ---------------------------------------------------------------------------------- the suite
@dataclass(frozen=True)
class Case:
    """One benchmark case: a robot, waypoints (uniform s on [0, 1]) and boundary speed."""
    robot: str
    family: str
    seed: int
    waypoints: np.ndarray
    sd_end: float = 0.0

    @property
    def name(self) -> str:
        return f"{self.robot}/{self.family}-{self.seed}"


FAMILIES = ("random", "tiny", "out-and-back", "dense", "end-speed", "accel", "many")


def erd_path(relative: str) -> str | None:
    """Path of a file shipped by example-robot-data (robots/...), or None (the tests use it too)."""
    import importlib.metadata
    try:
        import example_robot_data  # older releases ship a Python package
        getter = getattr(example_robot_data, "getModelPath", None)
        if getter is not None:
            p = os.path.join(getter(relative), relative)
            if os.path.exists(p):
                return p
    except (ImportError, OSError):      # (their getModelPath raises OSError for a file it does not find)
        pass
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    for prefix in ("cmeel.prefix/share/example-robot-data", "share/example-robot-data"):
        p = str(dist.locate_file(f"{prefix}/{relative}"))
        if os.path.exists(p):
            return p
    return None


@functools.lru_cache(maxsize=None)
def robot(name: str):
    """The suite's robots: URDFs of example-robot-data at 0.6 × rated torque (the Panda with its fingers
    locked; its <dynamics damping> is viscous friction), and two built-ins. `accel` variants add joint
    acceleration limits of 10 rad/s²."""
    import dynamics
    base, _, accel = name.partition("+")
    if base == "panda-urdf":
        r = erd_arm("panda_description/urdf/panda.urdf", {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0})
    elif base == "ur10-urdf":
        r = erd_arm("ur_description/urdf/ur10_robot.urdf")
    else:
        r = dynamics.load_robot(base)
    return r.with_limits(qdd_max=10.0) if accel else r


def erd_arm(relative: str, locked: dict | None = None):
    """The example-robot-data URDF robots/`relative`, `locked` joints held, at 0.6 × its rated torque (the
    benchmarks' convention for URDF arms)."""
    from dynamics.urdf import from_urdf
    r = from_urdf(erd_path("robots/" + relative), locked_joints=locked)
    return r.with_limits(tau_max=0.6 * r.tau_max)


def available_robots() -> list[str]:
    out = ["iiwa7", "ur5e"]
    if erd_path("robots/panda_description/urdf/panda.urdf"):
        out.insert(0, "panda-urdf")
    if erd_path("robots/ur_description/urdf/ur10_robot.urdf"):
        out.insert(1, "ur10-urdf")
    return out


def _span(r, lo=0.2, hi=0.8):
    qmin = np.where(np.isfinite(r.q_min), r.q_min, -np.pi)
    qmax = np.where(np.isfinite(r.q_max), r.q_max, np.pi)
    return qmin + lo * (qmax - qmin), qmin + hi * (qmax - qmin)


def hold_share(r, W, samples: int = 2000) -> float:
    """The largest share of a torque limit gravity takes at rest along the path through W."""
    import dynamics
    from toppra_app import JointPath
    q = JointPath.from_waypoints(W).q(np.linspace(0.0, 1.0, samples))
    return float(np.max(np.abs(dynamics.gravity_torques(r, q)) / r.tau_max))


def holdable(r, W, samples: int = 2000) -> bool:
    """Can the robot stand still at every point of the path through W (gravity within the torque limits,
    with a 1 % margin)? Cases are drawn until they are, so a reference never fails where ours passed."""
    return hold_share(r, W, samples) <= 0.99


def _draw(r, make, tries: int = 50):
    for _ in range(tries):
        W = make()
        if holdable(r, W):
            return W
    raise RuntimeError(f"no holdable path drawn for {r.name}")


def suite(robots=None, quick: bool = False) -> list[Case]:
    """Deterministic cases: per robot 3 random paths (3–8 waypoints over 20–80 % of each joint range), a tiny
    motion (±1e-3 rad), an out-and-back path (full stop in the middle), a dense path (200 samples of a
    smooth motion with 1e-4 rad noise), a non-zero end speed, acceleration limits and 20 random waypoints
    ("many")."""
    from toppra_app import JointPath
    robots = available_robots() if robots is None else list(robots)
    cases = []
    for k, name in enumerate(robots):
        r = robot(name)
        lo, hi = _span(r)
        rng = np.random.default_rng(1000 + k)
        for seed in range(1 if quick else 3):
            m = int(rng.integers(3, 9))
            cases.append(Case(name, "random", seed, _draw(r, lambda: rng.uniform(lo, hi, size=(m, r.n)))))
        if quick:
            cases.append(Case(name, "dense", 0, _draw(r, lambda: _dense(rng, lo, hi, r.n))))
            continue
        cases.append(Case(name, "tiny", 0, _draw(r, lambda: rng.uniform(lo, hi) + rng.uniform(-1e-3, 1e-3,
                                                                                            size=(4, r.n)))))
        cases.append(Case(name, "out-and-back", 0, _draw(r, lambda: _out_and_back(rng, lo, hi, r.n))))
        cases.append(Case(name, "dense", 0, _draw(r, lambda: _dense(rng, lo, hi, r.n))))
        W = _draw(r, lambda: rng.uniform(lo, hi, size=(4, r.n)))
        dq = np.abs(JointPath.from_waypoints(W).dq(np.array([1.0]))[0])
        vmax = float(np.min(r.qd_max[dq > 1e-9] / dq[dq > 1e-9]))
        cases.append(Case(name, "end-speed", 0, W, sd_end=0.3 * vmax))
        cases.append(Case(name + "+accel", "accel", 0, _draw(r, lambda: rng.uniform(lo, hi, size=(5, r.n)))))
        # (added in the twelfth session, drawn apart so the cases above stay as they were): 20 random waypoints
        many = np.random.default_rng(3000 + k)
        cases.append(Case(name, "many", 0, _draw(r, lambda: many.uniform(lo, hi, size=(20, r.n)))))
    return cases


def _out_and_back(rng, lo, hi, n):
    a, b = rng.uniform(lo, hi, size=(2, n))
    return np.array([a, b, a])


def _dense(rng, lo, hi, n):
    from toppra_app import JointPath
    smooth = JointPath.from_waypoints(rng.uniform(lo, hi, size=(3, n)))
    return smooth.q(np.linspace(0.0, 1.0, 200)) + rng.normal(scale=1e-4, size=(200, n))
