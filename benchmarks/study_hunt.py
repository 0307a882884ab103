"""The sixteenth session's hunt on nine robots the suite does not use: the default plan against the converged one.

Drawn by a helper in the sixteenth session to find problems on inputs we did not choose (docs/benchmarks.md "Hunt
on nine robots"): ur3, ur5, Kinova, xArm 7, z1 and SO-101 from example-robot-data (0.6 × rated torque, grippers
locked), the built-in Panda and planar4, and the built-in Puma 560 (Corke's friction) under his rated torques and
3 rad/s. Nine families: random waypoints, tiny motions, one or two joints moving, out and back, a speed at the
end, acceleration limits, a payload, and a single joint reversing. The seeds are the hunt's, so its cases are
reproduced here. Columns as in `study_families`, plus the worst over-limit of the 1 ms samples by Pinocchio's
RNEA + friction. Two synthetic robots with prismatic joints and friction on every joint, a SCARA and a palletizing
gantry (benchmarks/robots/, eighteenth session), take the same families with `--robots scara,gantry`.

    python -m benchmarks.study_hunt [--families onejoint,reversal] [--robots ur3,puma560]

All of it: about 15 minutes on the 2-core machine (the references take most of it).
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

import numpy as np

from .cases import _span, erd_arm, holdable
from .study_families import _speed_at, plan_row, printed, report

FAMILIES = ("random", "tiny", "onejoint", "twojoint", "outback", "endspeed", "accel", "payload", "reversal")
ROBOTS = ("ur3", "ur5", "kinova", "xarm7", "z1", "so101", "panda", "planar4", "puma560")
URDFS = {   # example-robot-data arms: URDF under robots/, joints locked
    "ur3": ("ur_description/urdf/ur3_robot.urdf", None),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", None),
    "kinova": ("kinova_description/robots/kinova.urdf", None),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", None),
    "z1": ("z1_description/urdf/z1.urdf", {"jointGripper": 0.0}),
    "so101": ("so_arm_description/urdf/so101.urdf", {"gripper": 0.0}),
}
PUMA_TORQUES = (97.6, 186.4, 89.4, 24.2, 20.1, 21.3)     # Corke's rated torques (the built-in model has none)


PRISMATIC = ("scara", "gantry")    # synthetic URDFs of benchmarks/robots/ (prismatic joints, friction on every
                                   # joint; eighteenth session, not in the hunt's order: `--robots scara,gantry`)


@functools.lru_cache(maxsize=None)
def arm(name: str):
    """The robot of `name` as the hunt loaded it; "NAME+A": with acceleration limits A rad/s²."""
    import dynamics
    base, _, accel = name.partition("+")
    if base in URDFS:
        r = erd_arm(*URDFS[base])
    elif base in PRISMATIC:
        r = dynamics.RobotModel.from_urdf(str(Path(__file__).parent / "robots" / f"{base}.urdf"))
    elif base == "puma560":
        r = dynamics.load_robot("puma560").with_limits(tau_max=np.array(PUMA_TORQUES), qd_max=3.0)
    else:
        r = dynamics.load_robot(base)
    return r.with_limits(qdd_max=float(accel)) if accel else r


def _draw(r, make, tries: int = 60):
    """Waypoints from `make()` until the robot can hold every point of the path (the last draw otherwise)."""
    for _ in range(tries):
        W = make()
        if holdable(r, W):
            return W
    return W


@functools.lru_cache(maxsize=None)
def cases(name: str) -> tuple:
    """((family, seed, robot name, W, sd_end, payload), ...) of robot `name`, drawn in the hunt's order."""
    import dynamics
    r = arm(name)
    (lo, hi), n = _span(r), r.n
    out = []
    for seed in (7, 11, 23):
        rng = np.random.default_rng(seed)
        m = int(rng.integers(3, 9))
        out.append(("random", seed, name, _draw(r, lambda: rng.uniform(lo, hi, size=(m, n))), 0.0, None))
    for seed, amp in ((31, 1e-4), (32, 1e-3), (33, 1e-2)):
        rng = np.random.default_rng(seed)
        out.append(("tiny", seed, name, _draw(r, lambda: rng.uniform(lo, hi) + rng.uniform(-amp, amp, size=(4, n))),
                    0.0, None))

    def one(rng):                                  # the others stand still (the hunt's order of draws)
        W = np.tile(rng.uniform(lo, hi), (3, 1))
        j = int(rng.integers(n))
        W[:, j] = rng.uniform(lo[j], hi[j], size=3)
        return W

    def two(rng):
        a = rng.uniform(lo, hi)
        m = int(rng.integers(2, 5))
        W = np.tile(a, (m, 1))
        for j in rng.choice(n, 2, replace=False):
            W[:, j] = rng.uniform(lo[j], hi[j], size=m)
        return W
    for seed in (41, 42):
        rng = np.random.default_rng(seed)
        out.append(("onejoint", seed, name, _draw(r, lambda: one(rng)), 0.0, None))
        out.append(("twojoint", seed, name, _draw(r, lambda: two(rng)), 0.0, None))
    for seed in (51, 52):
        rng = np.random.default_rng(seed)
        if seed == 51:
            make = lambda: (lambda a, b: np.array([a, b, a]))(*rng.uniform(lo, hi, size=(2, n)))  # noqa: E731
        else:
            make = lambda: (lambda a, b, c: np.array([a, c, b, c, a]))(*rng.uniform(lo, hi, size=(3, n)))  # noqa
        out.append(("outback", seed, name, _draw(r, make), 0.0, None))
    for seed, frac in ((61, 0.3), (62, 0.6), (63, 0.9)):
        rng = np.random.default_rng(seed)
        W = _draw(r, lambda: rng.uniform(lo, hi, size=(int(rng.integers(3, 7)), n)))
        out.append(("endspeed", seed, name, W, frac * _speed_at(r, W, 1.0), None))
    for seed, a in ((71, 3.0), (72, 10.0)):
        rng = np.random.default_rng(seed)
        out.append(("accel", seed, f"{name}+{a:g}", _draw(r, lambda: rng.uniform(lo, hi, size=(int(rng.integers(3, 9)), n))),
                    0.0, None))
    for seed in (81, 82):
        rng = np.random.default_rng(seed)
        mass = float(sum(r.masses)) * (0.05 if seed == 81 else 0.15)
        pay = dict(mass=round(mass, 3), com=[0.0, 0.0, 0.05], inertia=(np.eye(3) * 0.01 * mass).tolist())
        loaded = dynamics.payload.with_payload(r, pay, allow_overload=True)   # (as the hunt: the last link)
        out.append(("payload", seed, name, _draw(loaded, lambda: rng.uniform(lo, hi, size=(int(rng.integers(3, 7)), n))),
                    0.0, pay))
    for seed in (91, 92, 93, 94):
        rng = np.random.default_rng(seed)

        def reversal():                             # one joint out, past and back part of the way
            W = np.tile(rng.uniform(lo, hi), (3, 1))
            j = int(rng.integers(n))
            x0, x1 = rng.uniform(lo[j], hi[j], size=2)
            W[:, j] = [x0, x1, x0 + rng.uniform(0.2, 0.8) * (x1 - x0)]
            return W
        out.append(("reversal", seed, name, _draw(r, reversal), 0.0, None))
    return tuple(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--robots", default=",".join(ROBOTS))
    a = ap.parse_args(argv)
    families = a.families.split(",")
    rows = []
    for name in a.robots.split(","):
        for family, seed, rname, W, sd_end, payload in cases(name):
            if family in families:
                got = (arm(rname), W, dict(sd_end=sd_end), payload, False)
                rows.append(printed(plan_row(dict(family=family, robot=rname, seed=seed), got, over=True)))
    report(rows, families)


if __name__ == "__main__":
    main()
