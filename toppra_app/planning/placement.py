"""Moving grid points to where the optimum switches, before the first solve (same number of points).

With θ̈ constant per interval, the time a plan loses against the exact optimum concentrates in the few
intervals where the optimal θ̈ jumps: a rest end whose torque-limited start is much shorter than the
first interval (the constant θ̈ must then both leave rest and meet the joint-speed limit at the
interval's end, so the robot crosses it at about half speed), or the switch from an acceleration limit
onto a speed limit. Measured on random paths of the planner benchmark (iiwa 7, 200 intervals): the
first and last intervals held 0.17 % of a 0.24 % gap to the converged optimum.

So before the first solve the planner estimates those intervals and halves them, taking the points from
where the loss is smallest (merging two neighbouring intervals), so the grid keeps its size and compiled
problem:

1. a profile on the final grid by reachability (`socp.reachability`, the collocation optimum of the same
   rows, viscous terms on their tangent), from rest to rest;
2. the between-grid check of that profile at u = 0, ¼, ½, ¾, 1 of every interval — the interpolation
   scheme's stations, whose path data the plan needs anyway (`station_rho`: from the path coefficients,
   the inverse dynamics `verify.check_time_law` would evaluate there) — and the room it leaves inside
   every interval (`verify.room_of`, (1 − min ρ)·Δt: the estimate behind `plan.gap_estimate`);
3. `relocate`: the intervals holding `SHARE` of the room (at most a quarter of them) are halved; as many
   interior points as were added are removed where the two intervals around a point have the least room,
   never a knot of the spline nor a point next to a halved interval.

Measured on the planner suite's 20 random, end-speed and tiny paths (gap to a 3200-interval solve):
random and end-speed paths from +0.03…+0.26 % to +0.005…+0.19 %; tiny motions were not helped
(+0.24…+0.29 % → +0.23…+0.37 %: their loss is spread out, and they are refined to finer grids anyway), so
the planner relocates only where the predicted estimate is below its refinement target; above it, the
first solve is on the grid refined by the predicted room (`holding`, the planner's refinement) rather than
on one it would refine after solving. Plans θ̈ linear on the default grid skip it (`prepare`: it no longer
brought them closer to the optimum by much, for ~12 % of their planning time).
"""

from __future__ import annotations

import numpy as np

from ..limits.rows import tangent_point
from ..socp import stations as st
from ..verify import estimate_of, law_at, room_of
from .grid import rest_to_rest_law

SHARE = 0.8                        # halve the intervals that hold this share of the predicted room


def predicted_room(robot, theta, data, blocks_of, b_ref):
    """(room (N,), estimate) of the reachability profile on grid `theta`, or None where it does not apply.
    `data`: the path at u = 0, ¼, ½, ¾, 1 of every interval (the interpolation scheme's stations,
    `prepare.at_stations`), whose grid points give the rows and all of them the check's points
    (`station_rho`); `blocks_of(data, b_ref)` gives the planner's row blocks, `b_ref` (P,) the tangent
    point of √b terms."""
    grid = data.take(slice(0, theta.size))                  # the stations at the grid points come first
    law = rest_to_rest_law([blk.at(None) for blk in blocks_of(grid, b_ref)], theta, b_ref)
    if law is None:
        return None
    room = room_of(station_rho(robot, data, law), law)
    estimate = estimate_of(room, law)
    return None if estimate is None else (room, estimate)


def station_rho(robot, data, law) -> np.ndarray:
    """(N, 5) the largest ratio |value| / limit of joint torque, speed and acceleration at u = 0, ¼, ½, ¾, 1
    of every interval of `law` (θ̈ constant per interval), from the path data at those points (`data`, the
    interpolation scheme's stations): τ = m̃ θ̈ + c̃ θ̇² + d̃ (Safeea eq. 5, Coulomb friction at the sign of q′,
    at rest too: `motor_torques`' `direction`) and viscous F_v q̇ — the inverse dynamics `verify.check_time_law`
    evaluates there, from the coefficients the plan's rows use anyway."""
    N = law.theta.size - 1
    idx = st.station_index(N + 1, "interpolation")                       # (N, 5): u = 1 − λ = 0, ¼, ½, ¾, 1
    u = 1.0 - np.asarray(st.SCHEMES["interpolation"])
    b, a = law_at(law.b, None, np.diff(law.theta), np.arange(N)[:, None], u[None, :])
    b, a = np.maximum(b, 0.0)[..., None], np.broadcast_to(a, b.shape)[..., None]
    dq, ddq = data.dq[idx], data.ddq[idx]
    co = data.coefficients
    qd = dq * np.sqrt(b)
    tau = co.m[idx] * a + co.c[idx] * b + co.d[idx] + robot.viscous * qd
    rho = np.zeros(idx.shape)
    for value, limit in ((tau, robot.tau_max), (qd, robot.qd_max), (dq * a + ddq * b, robot.qdd_max)):
        if np.isfinite(limit).any():
            np.maximum(rho, (np.abs(value) / limit).max(axis=2), out=rho)
    return rho


def relocated(robot, path, theta, law, data, blocks_of, target: float, larger=None, fixed=None) -> np.ndarray:
    """The first grid: `theta` with points moved (`relocate`) where the reachability profile predicts the
    loss, if the predicted `gap_estimate` is at most `target`. Above it the first solve would be refined
    anyway: with `larger` (the planner's refinement, room → finer grid, or None) the planner then starts
    on the grid refined by the predicted room and skips that solve; otherwise `theta` as it is. `law` is
    the coarse profile that placed the grid (tangent point of √b terms); `data` the path at the stations of
    `theta` (`predicted_room`); `fixed`: the points that stay (default: the spline's knots)."""
    b_ref = tangent_point(np.interp(theta, law.theta, law.b))
    found = predicted_room(robot, theta, data, blocks_of, b_ref)
    if found is None:
        return theta
    if found[1] <= target:
        return relocate(theta, found[0], path.knots if fixed is None else fixed)
    return theta if larger is None else larger(found[0])


def holding(room: np.ndarray, share: float) -> np.ndarray:
    """(N,) bool: the intervals with the most room that together hold `share` of it."""
    order = np.argsort(-room, kind="stable")
    out = np.zeros(room.size, bool)
    out[order[:int(np.searchsorted(np.cumsum(room[order]), share * room.sum())) + 1]] = True
    return out


def relocate(theta: np.ndarray, room: np.ndarray, fixed=(), share: float = SHARE) -> np.ndarray:
    """`theta` (P,) with the intervals holding `share` of `room` (N,) halved (at most N/4 of them) and as
    many interior points removed where the room on both sides is smallest; the points in `fixed` (e.g.
    the spline's knots) and the ends stay. Returns a grid of the same size."""
    theta = np.asarray(theta, dtype=float)
    room = np.asarray(room, dtype=float)
    N = theta.size - 1
    if N < 8 or not np.isfinite(room).all() or room.sum() <= 0:
        return theta
    order = np.argsort(-room, kind="stable")
    k = min(int(holding(room, share).sum()), N // 4)
    halve = np.zeros(N, bool)
    halve[order[:k]] = True
    # removing interior point p merges intervals p − 1 and p
    score = room[:-1] + room[1:]
    blocked = halve[:-1] | halve[1:] | np.isin(theta[1:-1], np.asarray(fixed, dtype=float))
    score = np.where(blocked, np.inf, score)
    removed = np.zeros(theta.size, bool)
    need = k
    for i in np.argsort(score, kind="stable"):
        if need == 0 or not np.isfinite(score[i]):
            break
        p = i + 1
        if removed[p - 1] or removed[p + 1]:            # keep merges apart: at most two intervals become one
            continue
        removed[p] = True
        need -= 1
    if need:                                             # not enough room to take points from: halve fewer
        halve[:] = False
        halve[order[:k - need]] = True
    mids = 0.5 * (theta[:-1] + theta[1:])[halve]
    out = np.union1d(theta[~removed], mids)
    return out if out.size == theta.size else theta
