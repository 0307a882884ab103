"""Repairs after the between-grid check (`verify.check_time_law`) finds a limit exceeded inside an interval.

The rows at a station are exact for the constant-θ̈ time law (θ̇² is linear in θ inside an interval), so a
limit exceeded at a point between stations is best repaired by putting a station *there*: each interval
has two free stations (one per half, `socp.stations.FREE`), off at first; the first time an interval
exceeds a limit in one half, that half's free station is placed on the worst sub-sample and switched on. Exceedances that remain
(a free station already moved, several kinds in one half, Cartesian limits, the collocation scheme) lower
the limit at the interval's stations by the excess (tightening), conservatively; a torque limit keeps 5 %
of its headroom above the holding torque, so the robot can still stand still there. All of it changes
numbers only, never the structure of the compiled problem. With θ̈ linear per interval the rows at a station
are exact too, but an excess between stations mostly comes from a switch of the optimal θ̈ that a linear
θ̈ cannot follow: there the interval that gets a station is also tightened (`repair`), and a joint speed
over its limit lowers the interval's speed caps as well (`tighten_caps`). Where the first reference rides a
limit along a curved θ̈, the bulge between stations is predicted and the free stations switched on before
the first solve (`bending`, `bent`).
"""

from __future__ import annotations

import numpy as np

from ..socp import stations as st
from ..trajectory import inside
from ..verify import check_time_law, estimate_of, interval_room, swing_room
from .options import REFINE_SHARE
from .placement import holding

INNER_SLACK = 0.5                  # share of `tol` allowed at the stations inside the intervals
ACTIVE = 1e-5                      # a viscous tangent row within this (× τ_max) of its limit binds
BEND_SHARE = 0.3                   # `bent`: an interval's free stations on where its predicted bulge is above this × tol
SWING_TARGET = 1e-3                # θ̈ linear: split the grid where the swing estimate is above it (`for_the_swing`)
BEND_NEAR = 0.05                   # `bending`: ridden where the reference's θ̈ is within this of A
GAP_ORDER = 1.5                    # an interval cut in k keeps ~k^-this of its room (`pieces_for_gap`; the dense
                                   # Panda path's halved intervals kept 0.35 and 0.34 of theirs, 400 → 640 → 1024)


def tightening(ratio, tol: float):
    """The factor a limit found at `ratio` × itself between grid points is lowered by at the stations
    (and, `sequential`, grid points) around it: 1.2 × the excess and 0.2 tol more, between 0.5 and 1."""
    return np.clip(1.0 - 1.2 * (np.asarray(ratio) - 1.0) - 0.2 * tol, 0.5, 1.0)


def base_scales(limits, P: int, Ps: int, n: int, tol: float) -> dict:
    """Limits at the stations: the value itself at the grid points, 1 + tol/2 inside the intervals (the
    check between grid points allows 1 + tol; the sub-samples between stations get the other half)."""
    f = np.ones((Ps, n))
    f[P:] = 1.0 + INNER_SLACK * tol
    return {lim.kind: f for lim in limits}



def over_intervals(over: dict, N: int) -> np.ndarray:
    """(N,) bool: the intervals where the check found some limit over (`over`: kind → (N, sub-samples) bool),
    those a split grid halves where repairs stall."""
    bad = np.zeros(N, bool)
    for o in over.values():
        bad |= o.any(axis=1)
    return bad

def repair(lams, moved, scales, over, check, scheme: str, tol: float, hold, linear: bool = False
           ) -> tuple[int, int]:
    """Move free stations onto the worst points of the exceeding intervals, tighten the rest (in place);
    `linear` (θ̈ linear per interval), tighten those with a moved station too: there the excess mostly comes
    from a switch of the optimal θ̈ inside the interval, which a linear θ̈ cannot follow, so the value
    bends past the new station as well (on the planner suite this saved a solve on 5 of 9 paths that
    repaired). Returns (stations moved, intervals tightened)."""
    free = st.FREE[scheme]
    N = lams.shape[0]
    idx = st.station_index(N + 1, scheme)
    handled = np.zeros(N, bool)
    n_moved = 0
    if free:
        for kind, mask in over.items():
            if kind not in check.at:
                continue
            js, ks = np.nonzero(mask)
            if js.size == 0:
                continue
            # the worst joint of each exceeding interval
            ratio = np.where(mask, check.ratios[kind], -np.inf)
            js = np.unique(js)
            kbest = ratio[js].argmax(axis=1)
            uu = check.at[kind][js, kbest]
            side = (uu >= 0.5).astype(int) if len(free) == 2 else np.zeros(js.size, int)
            ok = (uu > 0) & (uu < 1) & ~moved[js, side] & ~handled[js]
            js, side, uu = js[ok], side[ok], uu[ok]
            lams[js, np.asarray(free)[side]] = 1.0 - uu
            moved[js, side] = True
            handled[js] = True
            n_moved += js.size
    n_tight = 0
    for kind, mask in over.items():
        if not linear:
            mask = mask & ~handled[:, None]
        js, ks = np.nonzero(mask)
        if js.size == 0:
            continue
        n_tight += np.unique(js).size
        sc = scales.get(kind)
        sc = scales[kind] = np.ones((idx.max() + 1, mask.shape[1])) if sc is None else sc.copy()
        f = tightening(check.ratios[kind][js, ks], tol)
        for s in range(idx.shape[1]):
            np.minimum.at(sc, (idx[js, s], ks), sc[idx[js, s], ks] * f)
        if kind == "torque":
            np.maximum(sc, hold + 0.05 * (1.0 - hold), out=sc, where=np.isfinite(hold))
    return n_moved, n_tight


def checked(robot, sub, law, limits, dense: bool, allowed: float):
    """(check, over, points over) of the time law `law`: the joint limits between grid points
    (`verify.check_time_law`; `dense`: at every knot inside an interval too) and every limit's own check;
    `over` (kind → (N, sub-samples) bool) where a value exceeds its limit by more than `allowed`."""
    check = check_time_law(robot, sub, law.b, law.d, True if dense else None)
    for lim in limits:
        lim.check_time_law(robot, sub, law.b, check, law.d)
    over = {kind: check.ratios[kind] > 1.0 + allowed for kind in check.ratios}
    return check, over, int(sum(o.sum() for o in over.values()))


def repaired(lams, moved, scales, caps, over, check, scheme: str, tol: float, hold, linear: bool) -> dict:
    """One repair round (`repair`, then `tighten_caps`; in place) and its record for `plan.refinements`."""
    n_moved, n_tight = repair(lams, moved, scales, over, check, scheme, tol, hold, linear)
    tighten_caps(caps, over, check, tol)
    return dict(action="repair", points=int(sum(o.sum() for o in over.values())), moved=n_moved,
                tightened=n_tight, worst_ratio=check.worst_ratio)


def tighten_caps(caps, over: dict, check, tol: float) -> None:
    """Lower the joint-speed caps (`prepare.speed_caps`, a plan's copy; in place) of the intervals where the
    check found a joint speed over its limit by the excess, as `repair` lowers the rows at the stations:
    with θ̈ linear the speed may peak between caps, where neither a station nor a cap stands."""
    if caps is None or "velocity" not in over:
        return
    js = np.flatnonzero(over["velocity"].any(axis=1))
    if js.size == 0:
        return
    f = tightening(check.ratios["velocity"][js].max(axis=1), tol) ** 2
    caps[1][js] *= f[:, None]                                           # (b ∝ speed²)
    caps[2][js] *= f


def for_the_swing(check, law, sizes, gap_target: float = np.inf) -> tuple[np.ndarray, dict] | None:
    """(intervals to halve (N,) bool, refinement record) for a θ̈-linear plan whose swing estimate (the
    `verify.swing_room` over the duration) is above `SWING_TARGET` or a lower `gap_target`, or None: the
    intervals with the most swing room, as many as take the grid to the next size of `sizes`
    (`grid.LINEAR_SIZES`: a compiled structure other paths share) — none past twice the grid."""
    room = swing_room(check, law)
    estimate = estimate_of(room, law)
    N = law.theta.size - 1
    larger = [k for k in sizes if N < k <= 2 * N]
    if estimate is None or estimate <= min(SWING_TARGET, gap_target) or not larger:
        return None
    bad = np.zeros(N, bool)
    bad[np.argsort(-room, kind="stable")[:larger[0] - N]] = True
    return bad, dict(action="refine", points=int(bad.sum()), swing_estimate=estimate)


def for_the_gap(check, law, estimate: float, over=None) -> tuple[np.ndarray, dict]:
    """(intervals to halve (N,) bool, refinement record) for a plan whose gap estimate is above target:
    the intervals holding `REFINE_SHARE` of the room (`verify.interval_room`), and those in `over` (N,) bool
    (a first plan over a limit there: the split grid is repaired rather than this one, whose repairs would
    not have brought the estimate below target — they lower the profile, which leaves more room)."""
    bad = holding(interval_room(check, law), REFINE_SHARE) | (False if over is None else over)
    return bad, dict(action="refine", points=int(bad.sum()), gap_estimate=estimate)


def pieces_for_gap(check, law, estimate: float, target: float, sizes, kmax: int, over=None
                   ) -> tuple[np.ndarray, dict]:
    """(pieces to cut each interval into (N,) int, refinement record) for a plan whose gap estimate is above
    `target`, in one split where halvings would take several planners: the room (`verify.interval_room`)
    left of interval j cut into k is taken as room_j k^-`GAP_ORDER`, and the fewest pieces that bring the
    sum under target go where the room is, k_j ∝ room_j^(1/(1 + GAP_ORDER)) up to `kmax`, neighbours at least
    half as many (split grids keep their intervals within 2× of their neighbours' as `grid.split_grid`); the
    first of `sizes` (increasing) whose prediction is within target, else the last; those in `over` (N,) bool
    at least halved, as `for_the_gap`."""
    room = interval_room(check, law)
    w = room ** (1.0 / (1.0 + GAP_ORDER))
    for size in sizes:
        pieces = _allotted(w, size, kmax, over)
        predicted = float((room * pieces ** -GAP_ORDER).sum() / law.duration)
        if predicted <= target:
            break
    return pieces, dict(action="refine", points=int((pieces > 1).sum()), gap_estimate=estimate,
                        predicted=predicted)


def _allotted(w: np.ndarray, size: int, kmax: int, over=None) -> np.ndarray:
    """(N,) pieces, c·w rounded down within [1, kmax] (2 at least in `over`), each at least half its neighbours'
    — for the largest c (bisection) whose pieces add up to at most `size`."""
    def pieces(c):
        k = np.clip(np.floor(c * w), 1, kmax).astype(int)
        k = np.maximum(k, 2 * over) if over is not None else k
        for _ in range(int(np.log2(kmax)) + 1):       # (each pass lets a cut spread one interval further)
            k = np.maximum(k, (np.maximum(np.r_[k[1:], 1], np.r_[1, k[:-1]]) + 1) // 2)
        return k
    some = w[w > 0]
    if some.size == 0:
        return pieces(0.0)
    lo, hi = np.log(1.0 / some.max()), np.log(kmax / some.min())   # (all 1 … all `kmax` where w > 0)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if pieces(np.exp(mid)).sum() <= size else (lo, mid)
    return pieces(np.exp(lo))


def tangent_gap(robot, data, b_ref, law, lams, scheme: str, scales, on=None, convex: bool = False) -> float:
    """Largest error of the viscous tangent where it matters: |F_v q′| (√b_ref/2 + b/(2√b_ref) − √b) / τ_max
    at the stations whose tangent row is active (its value within `ACTIVE` of the limit) for the solution
    (the time law `law`, θ̈ constant or linear per interval). A tangent row that does not bind changes
    nothing: the solution is then also optimal with the exact √b (loosening constraints that are inactive
    at a convex optimum). `convex`: the convex side of the friction is on the tangent too (the tangent
    objective's linear program, `stations.packed`), where it is optimistic by the same amount: its error
    counts where the exact row is within `ACTIVE` of its limit or beyond it."""
    lim = np.flatnonzero(np.isfinite(robot.tau_max))
    if lim.size == 0 or not (robot.viscous[lim] > 0).any():
        return 0.0
    idx = st.station_index(law.theta.size, scheme)                      # (N, S) samples
    b, a = inside(law.b[:-1, None], law.b[1:, None], law.a[:, None], law.d[:, None], np.diff(law.theta)[:, None],
                  1.0 - lams)                                           # (N, S) θ̇², θ̈ at the stations
    tau = robot.tau_max[lim]
    co = data.coefficients
    m, c, d = (x[idx][..., lim] / tau for x in (co.m, co.c, co.d))      # (N, S, k)
    v = robot.viscous[lim] * data.dq[idx][..., lim] / tau
    sq, sr = np.sqrt(np.maximum(b, 0.0))[..., None], np.sqrt(b_ref[idx])[..., None]
    value = m * a[..., None] + c * b[..., None] + d + v * sq              # τ/τ_max, exact
    gap = np.abs(v) * (0.5 * sr + 0.5 * b[..., None] / sr - sq)
    limit = np.broadcast_to(scales.get("torque", 1.0), (data.size, robot.n))[idx][..., lim] if scales else 1.0
    tangent_value = np.where(v >= 0, value, -value) + gap                 # the row with the tangent, ≤ limit
    active = tangent_value >= limit - ACTIVE
    if convex:
        active |= np.where(v >= 0, -value, value) >= limit - ACTIVE
    if on is not None:
        active &= on[..., None]
    return float(np.where(active, gap, 0.0).max(initial=0.0))


def bending(rows, beta, beta_mid, theta, scheme: str) -> np.ndarray:
    """(N,) the largest excess between stations that a plan with θ̈ linear per interval is predicted to have
    in each interval, in units of the limits (`OneSided` rows), with only the stations u = 0, ½, 1 on.
    Where the optimum rides a limit, the θ̈ that holds a row exactly at its limit, A(u) = (h − β b − γ √b)/α,
    curves inside the interval; a linear θ̈ that meets it at u = ½ and 1 misses it at u = ¾ by
    (A(½) + A(1))/2 − A(¾), which the row's α turns into an excess where A bends the wrong way (meeting it
    at 0 and ½: at u = ¼). The reference profile (β at the grid points, β(½); e.g. the sweeps',
    `packed_profile`) gives b and θ̈ at the stations and the rows it rides: its θ̈ within `BEND_NEAR`
    (relative) of A at both stations the linear θ̈ meets, by a row whose α keeps at least half its size in
    the interval. A row ridden in b instead (α not steady: a joint's acceleration where its q′ turns) that
    the reference holds within `BEND_NEAR` of its limit at both meeting stations: its value at the reference
    at the station between. The interpolation scheme's five stations (u = 1 − λ = 0, ¼, ½, ¾, 1) are
    assumed."""
    P = theta.size
    idx = st.station_index(P, scheme)
    u = 1.0 - np.asarray(st.SCHEMES[scheme])                            # 0, ¼, ½, ¾, 1
    dsig = np.diff(theta) / (theta[-1] - theta[0])
    b0, bm, b1 = np.maximum(beta[:-1], 0.0), np.maximum(beta_mid, 0.0), np.maximum(beta[1:], 0.0)
    b = (b0[:, None] * ((1 - u) * (1 - 2 * u)) + bm[:, None] * (4 * u * (1 - u)) + b1[:, None] * (u * (2 * u - 1)))
    b = np.maximum(b, 0.0)[..., None]                                   # (N, S, 1): the quadratic through them
    a = ((b1 - b0) / (2.0 * dsig))[:, None] + st.delta_of(beta, beta_mid, dsig)[:, None] * (u - 0.5)
    al, be, ga, h = rows.al[idx], rows.be[idx], rows.ga[idx], rows.h[idx]     # (N, S, R)
    rest = be * b + ga * np.sqrt(b) - h                                 # the row is al θ̈ + rest ≤ 0
    with np.errstate(invalid="ignore", divide="ignore"):
        ride = -rest / np.where(al != 0, al, 1.0)                           # A(u)
        # ridden: the reference's θ̈ within `BEND_NEAR` of A (a row only approached, or whose α is too small
        # for θ̈ to hold it — where a joint's q′ crosses zero — has an A far from it) ...
        near = (np.abs(ride - a[..., None]) <= BEND_NEAR * np.maximum(np.abs(ride), np.abs(a[..., None])))
        near &= al != 0
        # ... by a row whose α keeps its size in the interval
        steady = np.abs(al) >= 0.5 * np.abs(al).max(axis=1, keepdims=True)
        # a row ridden in b (its α crossing zero: a joint's acceleration where its q′ turns, held by θ̇² alone):
        # tight at both meeting stations, the reference's own value at the one between
        value = al * a[..., None] + rest
        tight = (value >= -BEND_NEAR * np.abs(h)) & np.isfinite(h)
        out = np.zeros(P - 1)
        for k, (m0, m1) in ((3, (2, 4)), (1, (0, 2))):                  # at ¾ meeting at ½, 1; at ¼ at 0, ½
            ex = al[:, k] * 0.5 * (ride[:, m0] + ride[:, m1]) + rest[:, k]
            use = near[:, m0] & near[:, m1] & steady[:, m0] & steady[:, m1] & steady[:, k]
            ex = np.where(use & np.isfinite(ex), ex, 0.0)
            in_b = tight[:, m0] & tight[:, m1] & ~(steady[:, m0] & steady[:, m1] & steady[:, k])
            ex = np.maximum(ex, np.where(in_b & np.isfinite(value[:, k]), value[:, k], 0.0))
            out = np.maximum(out, ex.max(axis=1, initial=0.0))
    return out


def bent(rows, beta, beta_mid, theta, scheme: str, tol: float, moved, scales) -> bool:
    """Switch on the free stations of the intervals `bending` flags at `BEND_SHARE` × tol (`moved`, in place)
    and hold every limit at their inner stations to the limit itself (`scales`, in place: between two
    stations a quarter apart the value still bulges by a quarter of the bend, within the check's tol);
    whether anything changed (the rows are then built again)."""
    flag = (bending(rows, beta, beta_mid, theta, scheme) > BEND_SHARE * tol) & ~moved.all(axis=1)
    if not flag.any():
        return False
    moved[flag] = True
    idx = st.station_index(theta.size, scheme)[flag][:, st.inner_columns(scheme)].reshape(-1)
    for kind, f in list(scales.items()):
        scales[kind] = f = f.copy()
        f[idx] = np.minimum(f[idx], 1.0)
    return True
