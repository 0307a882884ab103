"""Robots whose friction matters, and robots the suite does not hold: the default plan against the converged one.

Drawn in the fourteenth session (a second hunt, docs/planner.md "Friction"): Coulomb friction 2–10 % and viscous
friction 5–20 % of the torque limit (at the speed limit), viscous friction that takes 90–130 % of it (a
friction-limited top speed), boundary speeds with friction, and four example-robot-data arms with their own
URDF friction (xarm7, z1, ur3, so101; 0.6 × rated torque like the suite's URDFs). Seeds are those of the hunt
(140000 + 1000 × family index + 10 × robot index + seed index, in the hunt's order of its 15 families and 8
robots), so its cases are reproduced here. Columns as in `study_families`, plus the worst over-limit of the 1 ms
samples by Pinocchio's RNEA + friction.

    python -m benchmarks.study_friction [--families coulomb-only,viscous-dominant] [--seeds 0,1,2]

All seven families, three seeds: about 5 minutes on the 2-core machine (the references take most of it).
"""

from __future__ import annotations

import argparse
import functools

import numpy as np

from .cases import _span, erd_arm, holdable, robot
from .study_families import _speed_at, plan_row, printed, report

FAMILIES = {   # family: robots (the hunt's)
    "erd-random": ("xarm7-urdf", "z1-urdf", "ur3-urdf", "so101-urdf"),
    "friction-real": ("iiwa7", "ur5e", "panda-urdf", "z1-urdf"),
    "long-segment": ("xarm7-urdf", "z1-urdf", "ur3-urdf", "panda-urdf"),
    "near-vmax-ends": ("iiwa7", "ur5e", "panda-urdf", "ur10-urdf"),
    "friction-ends": ("ur10-urdf", "xarm7-urdf", "ur3-urdf", "iiwa7"),
    "coulomb-only": ("iiwa7", "ur5e", "panda-urdf", "z1-urdf"),
    "viscous-dominant": ("iiwa7", "ur5e", "panda-urdf", "ur10-urdf"),
}
HUNT_FAMILIES = ("erd-random", "friction-real", "vel-only", "acc-only", "vel-acc-kin", "long-segment", "reversal-170",
                 "near-vmax-ends", "payload-offset", "near-qlimits", "smooth-many", "gravity-slow", "friction-ends",
                 "coulomb-only", "viscous-dominant")      # (the order the hunt's seeds were drawn in)
HUNT_ROBOTS = ("iiwa7", "ur5e", "panda-urdf", "ur10-urdf", "xarm7-urdf", "z1-urdf", "ur3-urdf", "so101-urdf")
ERD = {   # example-robot-data arms: URDF under robots/, joints locked
    "xarm7-urdf": ("xarm_description/urdf/xarm7.urdf", None),
    "z1-urdf": ("z1_description/urdf/z1.urdf", {"jointGripper": 0.0}),
    "ur3-urdf": ("ur_description/urdf/ur3_robot.urdf", None),
    "so101-urdf": ("so_arm_description/urdf/so101.urdf", {"gripper": 0.0}),
}


@functools.lru_cache(maxsize=None)
def arm(name: str):
    """A suite robot (`cases.robot`) or an example-robot-data arm of `ERD` at 0.6 × its rated torque."""
    return erd_arm(*ERD[name]) if name in ERD else robot(name)


def _friction(r, rng, viscous=(0.05, 0.20), coulomb=(0.02, 0.10)):
    """Viscous and Coulomb friction drawn as shares of the torque limit (viscous: at the speed limit)."""
    qd = np.where(np.isfinite(r.qd_max), r.qd_max, 3.0)
    v = rng.uniform(*viscous, r.n) * r.tau_max / qd
    return v, rng.uniform(*coulomb, r.n) * r.tau_max


def draw(family: str, base, rng):
    """(robot, waypoints, plan keywords) of one draw."""
    n, (lo, hi), (lo5, hi5) = base.n, _span(base), _span(base, 0.05, 0.95)
    r, kw = base, {}
    if family == "erd-random":                       # the arm's own URDF friction
        W = rng.uniform(lo, hi, size=(int(rng.integers(3, 7)), n))
    elif family in ("friction-real", "friction-ends", "coulomb-only"):
        v, c = _friction(base, rng)
        r = base.replace(viscous=np.zeros(n) if family == "coulomb-only" else v, coulomb=c)
        W = rng.uniform(lo, hi, size=(4 if family == "friction-ends" else 5, n))
        if family == "friction-ends":                # both ends moving at 0.5–0.8 × the speed-limited θ̇
            kw = dict(sd_start=float(rng.uniform(0.5, 0.8)) * _speed_at(r, W, 0.0),
                      sd_end=float(rng.uniform(0.5, 0.8)) * _speed_at(r, W, 1.0))
    elif family == "viscous-dominant":               # viscous torque at the speed limit 0.9–1.3 × the torque limit
        qd = np.where(np.isfinite(base.qd_max), base.qd_max, 3.0)
        r = base.replace(viscous=rng.uniform(0.9, 1.3, n) * base.tau_max / qd, coulomb=np.zeros(n))
        W = rng.uniform(lo, hi, size=(5, n))
    elif family == "long-segment":                   # two waypoints far apart
        while True:
            a, b = rng.uniform(lo5, hi5, size=(2, n))
            if np.linalg.norm((b - a) / (hi5 - lo5)) > 0.5 * np.sqrt(n):
                break
        W = np.array([a, b])
    elif family == "near-vmax-ends":                 # both ends at 0.9–0.99 × the speed-limited θ̇
        W = rng.uniform(lo, hi, size=(4, n))
        kw = dict(sd_start=float(rng.uniform(0.9, 0.99)) * _speed_at(base, W, 0.0),
                  sd_end=float(rng.uniform(0.9, 0.99)) * _speed_at(base, W, 1.0))
    else:
        raise ValueError(f"unknown family {family!r}")
    return r, W, kw


def case(family: str, name: str, seed_index: int):
    """(seed, (robot, W, kw, None, False)) or (seed, None) where none of 100 draws is holdable."""
    seed = 140000 + 1000 * HUNT_FAMILIES.index(family) + 10 * HUNT_ROBOTS.index(name) + seed_index
    rng, base = np.random.default_rng(seed), arm(name)
    for _ in range(100):
        r, W, kw = draw(family, base, rng)
        if holdable(r, W):
            return seed, (r, W, kw, None, False)
    return seed, None


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--seeds", default="0,1,2")
    a = ap.parse_args(argv)
    rows, families = [], a.families.split(",")
    for family in families:
        for name in FAMILIES[family]:
            for k in (int(x) for x in a.seeds.split(",")):
                seed, got = case(family, name, k)
                rows.append(printed(plan_row(dict(family=family, robot=name, seed=seed), got, over=True)))
    report(rows, families)


if __name__ == "__main__":
    main()
