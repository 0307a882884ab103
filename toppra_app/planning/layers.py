"""Grid points where the optimum bends inside what would be one interval, at places known before the first solve:
the ends of the path with strong viscous friction (`end_layers`), where a run-up from rest meets the maximum
velocity curve (`rest_layers`), and Coulomb flips (`on_coulomb_flips`, `riding_flips`, `flip_layers`). A time law
(θ̈ constant or linear per interval) follows none of these bends inside an interval, and the loss is of the order
of the interval's time, not of its square. Step 1 of a plan (`prepare`) places the grid with as many points fewer
as these add, so that its size stays one of the compiled structures."""

from __future__ import annotations

import numpy as np

from ..limits.rows import PathData
from ..samples import CrossingSamples, flip_joints
from ..socp.facets import half_planes, unit_rows
from ..socp.reachability import bounds_on_a, speed_range
from .grid import onto

END_SPLITS = 4                     # viscous friction: points at halving distances inside the end intervals
END_SHARE = 0.02                   # ... on a robot whose friction at top speed is this share of a torque limit
LAYER_SHARE = 0.5                  # a rest end's acceleration phase shorter than this share of its end interval
LAYER_LEVELS = 9                   # gets a grid point where it ends (`rest_layers`), found at this many θ̇²
LAYER_MIN = 1e-4                   # ... unless shorter than this share of it: its time lost is < 6e-5 of the
                                   # interval's, and such a sliver (5e-11 of the path at a 0.1 mm/s tool speed) left
                                   # the rows unresolved: 78-1500 % over a torque limit at the stop
FLIP_SUBSTEPS = 8                  # Coulomb flips: q′ sampled this many times per interval to find them
FLIP_LAYERS = 3                    # points at halving distances on either side of a flip whose joint rides its
FLIP_RIDING = 0.8                  # torque limit there: |τ| ≥ this × τ_max on the coarse profile (`riding_flips`)
FLIP_LAYER_SHARE = 0.25            # ... at most this share of the grid's points


def end_layers(robot, theta) -> np.ndarray:
    """`theta` with `END_SPLITS` more points in its first and last interval, at halving distances from the path's
    ends, on a robot whose viscous friction at its speed limit is at least `END_SHARE` of a joint's torque limit.
    From rest the friction F_v q′ √b rises with an unbounded slope in θ, a bend inside the end intervals their
    time law cannot follow: an iiwa 7 whose friction reaches its torque limits at top speed lost 1.1 % and 1.3 %
    of its time in the first and last twentieth of the path (320 intervals, +0.31 % in all; uniform 1280:
    +0.045 %); with four points in each end interval, within 0.015 % of converged."""
    lim = np.isfinite(robot.tau_max) & np.isfinite(robot.qd_max)
    if theta.size < 4 or not (robot.viscous[lim] * robot.qd_max[lim] >= END_SHARE * robot.tau_max[lim]).any():
        return theta
    k = 0.5 ** np.arange(1, END_SPLITS + 1)
    return np.union1d(theta, np.concatenate([theta[0] + (theta[1] - theta[0]) * k,
                                             theta[-1] - (theta[-1] - theta[-2]) * k]))


def rest_layers(blocks, law, theta) -> np.ndarray:
    """The points (0–2) where a motion from rest at the path's start, at its largest θ̈, reaches the largest θ̇²
    of the start point (the maximum velocity curve there: a joint's speed limit, say), and where one to rest at
    the end leaves that of the end point — those of them closer to their end than `LAYER_SHARE` of `theta`'s end
    interval. θ̇² bends there from 2 θ̈ θ to the cap, a kink the time law cannot follow inside an interval: when the
    phase is much shorter than the interval, the law rises over the whole interval instead, and loses ~0.57 of
    its length / θ̇ (a single UR3 or Kinova wrist joint moving out and back from rest: its speed limit within
    2e-5 of the path, +0.12 … +0.14 % from converged on 320 intervals after two refinements; +0.001 … +0.003 % on
    128 with the points, in one or two solves).
    `blocks`: the coarse grid's rows (`law.theta`), √b terms left out; the distance ∫ db / (2 |θ̈(b)|) is
    taken at the end point's rows (as the reachability sweeps read them: `reachability.bounds_on_a`,
    `speed_range`) at `LAYER_LEVELS` levels of b."""
    al, be, hh, _ = half_planes(blocks)
    if al.shape[0] != law.theta.size:
        return np.empty(0)
    ends = [0, law.theta.size - 1]
    al, be, hh, flat = unit_rows(al[ends], be[ends], hh[ends])
    lower, upper, c, s = bounds_on_a(al, be, hh, flat)
    top, _ = speed_range(flat, lower, upper, c, s, be, hh)
    out = []
    for e, h in ((0, theta[1] - theta[0]), (1, theta[-1] - theta[-2])):
        if not 0.0 < top[e] < np.inf:
            continue
        b = np.linspace(0.0, top[e], LAYER_LEVELS)[:, None]
        a = np.where(upper[e], c[e] - s[e] * b, np.inf).min(axis=1) if e == 0 else \
            -np.where(lower[e], c[e] - s[e] * b, -np.inf).max(axis=1)
        a[-1] = max(a[-1], a[-2])                      # (at the top itself the cap may leave no θ̈ at all)
        if not (np.isfinite(a) & (a > 0)).all():
            continue
        x = float(np.sum(np.diff(b[:, 0]) * 0.25 * (1.0 / a[1:] + 1.0 / a[:-1])))
        if LAYER_MIN * h < x < LAYER_SHARE * h:
            out.append(theta[0] + x if e == 0 else theta[-1] - x)
    return np.array(out)


def on_coulomb_flips(robot, path, theta) -> np.ndarray:
    """`theta` with a grid point moved onto every Coulomb flip — a zero where q′_k changes sign, of a joint with
    Coulomb friction and a torque limit (`grid.onto`: the nearer end of its interval, not a knot or an end).
    The friction torque jumps by 2 F_c there and the optimum's θ̈ with it, which the time law cannot follow
    inside an interval: it slowed down over the interval before the flip (a Panda path with Coulomb friction
    2–8 % of τ_max: +0.21 % from converged on 136 intervals, +0.05 % with its flips on grid points). θ̈ may jump
    at a grid point; each side's friction is taken beside it (`flip_sides`; the check: `SubSamples.direction`)."""
    flips = coulomb_flips(robot, path, theta)
    return theta if flips is None else onto(theta, flips.theta, path.knots)


def coulomb_flips(robot, path, theta) -> CrossingSamples | None:
    """The zeros of q′_k of the joints with Coulomb friction and a torque limit (`samples.flip_joints`) inside the
    intervals of `theta`, bracketed on `FLIP_SUBSTEPS` sub-samples per interval (`CrossingSamples.build`)."""
    joints = flip_joints(robot)
    if theta.size < 3 or not joints.any():
        return None
    u = np.linspace(0.0, 1.0, FLIP_SUBSTEPS + 1)
    dq = path.evaluate((theta[:-1, None] + u * np.diff(theta)[:, None]).reshape(-1)).dq
    dq = np.where(joints, dq, 0.0).reshape(theta.size - 1, u.size, -1)       # (no flips of the other joints)
    return CrossingSamples.build(path, theta, u, dq)


def riding_flips(robot, path, law, count: int) -> np.ndarray:
    """θ of the Coulomb flips (`coulomb_flips` on the coarse grid `law.theta`) where the flipping joint's torque on
    the coarse profile `law`, just before or after the flip, is at least `FLIP_RIDING` of its limit — at most
    `count` of them, the highest first. There the optimum rides that limit into the flip, where q′_k = 0 leaves
    θ̈ no hold on the joint's torque and its Coulomb term jumps by 2 F_c: θ̇² dips into the flip in a narrow,
    log-shaped V that a time law cannot follow in the intervals beside it (one Puma 560 joint turning back:
    +0.10 % from converged on 136 intervals; with `FLIP_LAYERS` points on either side, +0.008 %; with four,
    +0.003 %, but four once broke a z1 path out and back, all six joints flipping where it turns — 11× over a
    limit after 32 solves, the rounding `socp.stations.ROUNDING` now removes; three leave more of the grid)."""
    flips = coulomb_flips(robot, path, law.theta)
    if flips is None or count <= 0:
        return np.empty(0)
    span = 1e-6 * (law.theta[-1] - law.theta[0])
    th = np.concatenate([flips.theta - span, flips.theta + span])
    S = path.evaluate(th)
    co = PathData(robot, th, S.q, S.dq, S.ddq).coefficients
    i = np.clip(np.searchsorted(law.theta, th, side="right") - 1, 0, law.a.size - 1)
    b = np.interp(th, law.theta, law.b)
    k = np.concatenate([flips.joint, flips.joint])
    r = np.arange(th.size)
    tau = co.m[r, k] * law.a[i] + co.c[r, k] * b + co.d[r, k] + robot.viscous[k] * S.dq[r, k] * np.sqrt(b) \
        + robot.coulomb[k] * np.sign(S.dq[r, k])
    ratio = np.abs(tau).reshape(2, -1).max(axis=0) / robot.tau_max[flips.joint]
    kept = []
    for j in np.argsort(-ratio, kind="stable"):
        if ratio[j] < FLIP_RIDING or len(kept) == count:
            break
        if all(abs(flips.theta[j] - x) > 1e-9 * (law.theta[-1] - law.theta[0]) for x in kept):
            kept.append(flips.theta[j])                 # (joints flipping together: one point)
    return np.sort(np.array(kept))


def flip_layers(theta, points) -> np.ndarray:
    """`theta` with `FLIP_LAYERS` points at halving distances from each of `points` that is an interior grid point
    (to 1e-9 of the path: found again on the final grid, a flip's θ differs in its last digits), in the two
    intervals beside it."""
    if len(points) == 0:
        return theta
    i = np.clip(np.searchsorted(theta, points), 1, theta.size - 1)
    near = np.where(np.abs(theta[i - 1] - points) < np.abs(theta[i] - points), i - 1, i)
    near = near[np.abs(theta[near] - points) <= 1e-9 * (theta[-1] - theta[0])]
    at = np.unique(near[(near > 0) & (near < theta.size - 1)])
    k = 0.5 ** np.arange(1, FLIP_LAYERS + 1)
    left = theta[at, None] - (theta[at] - theta[at - 1])[:, None] * k
    right = theta[at, None] + (theta[at + 1] - theta[at])[:, None] * k
    return np.union1d(theta, np.concatenate([left.ravel(), right.ravel()]))
