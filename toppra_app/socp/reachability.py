"""A quick speed profile on a coarse grid by backward–forward reachability, to place the adaptive grid.

The optimiser of this product is the convex problem of `planner`. To spread its grid points where the
optimal θ̈ varies (`planner.adapted_grid`) it needs a rough profile first; this module computes one in
about a millisecond instead of a coarse convex solve, from the same canonical rows.

At grid point θ_i every row is a half-plane α a + β b ≤ h in (a, b) = (θ̈, θ̇²) (`facets.half_planes`).
Rows with α < 0 bound a from below, a ≥ c_k − s_k b (c = h/α, s = β/α), rows with α > 0 from above,
a ≤ c_l − s_l b, rows with α = 0 bound b. Each point's rows are used for the interval that follows it,
and b is linear in θ on each interval (b_{i+1} = b_i + 2Δθ_i a_i):

* b̄_i, the largest b at which some a meets every row (the maximum velocity curve): every pair of a
  lower row k and an upper row l needs c_k − s_k b ≤ c_l − s_l b, a bound on b in closed form;
* backward, the largest speeds from which the end is still reachable: K_N = b_end and
  K_i = max{b ≤ b̄_i : b + 2Δθ_i (c_k − s_k b) ≤ K_{i+1} for every lower row k}, again one bound per row;
* forward, the fastest profile inside these sets: b_0 = b_start,
  b_{i+1} = min(K_{i+1}, b_i + 2Δθ_i min_l (c_l − s_l b_i)).

The last point's rows also bound the last interval's a (so the result is the optimum of the collocation
scheme on that grid, which the tests check against the convex solve).

**Near a turn.** Where the path turns back in joint space every q′ is 0, and around it every q′ is small:
a point's rows then hold θ̈ weakly (every row's |α| < `NEAR_TURN` × 2Δθ_i |β|, `_near_turn`: θ̇² may grow
over fourfold across the interval; judged on the rows without viscous friction, `turn_blocks`), and with its
own rows alone the profile leapt — a tiny out-and-back
motion's from θ̇² = 1.3e3 at the turn to 2e8 one point on; on an SO-101 path whose one moving joint turns
back, up 5× an interval to 870× the optimum's θ̇² at the turn. That profile places the grid and its top is
the planner's scale B̄: with it β sat at ~1e-6 near the rest ends, below what the solver resolves, and on
3200 intervals the plan came out 86× over a torque limit. At such a point interval i also takes the next
point's rows, written at point i with b_{i+1} = b_i + 2Δθ_i a: α a + β (b_i + 2Δθ_i a) ≤ h (`_both_ends`),
as the convex problem's station at the interval's end holds it. (Both ends at every point was tried: it
moved the grids of most paths — the planner suite 3 more solves, the 164 family paths of `study_families`
24 fewer, durations −0.04 … +0.03 % — and the greedy sweeps then stop short of the collocation optimum
where a row's bound on θ̇²_{i+1} falls as θ̇²_i rises: +0.19 % on a 60-interval test path.)

This is the reachability construction of Pham & Pham (2018, TOPP-RA) written for 2-D half-planes. It is
only an estimate for the grid (each point's rows used once, as in collocation); returns None where it
does not apply (rows with √b terms, a point that cannot be passed), and the planner then falls back to a
coarse convex solve.

`packed_profile` runs the same sweeps on the rows of the planner's own problem, as packed for the solver
(every station of an interval folded onto its two grid points, θ̈ linear: its δ eliminated): the first
reference of the tangent objective (`tangent`, through `reference_profile`), close enough that most plans are
certified by one solve.
"""

from __future__ import annotations

import numpy as np

from .facets import half_planes, prunable, unit_rows
from .problem import UNUSED

STARVED = 1e-3             # `reference_profile`: an interior β below this × both neighbours is raised (`_unstarved`)
NEAREST = 16                # θ̈ linear: the eliminated rows per interval kept for the sweeps (`packed_profile`)
NEAR_TURN = 0.35            # `_near_turn`: a point whose rows let θ̇² grow over ~4-fold across its interval


def reachable_profile(blocks, theta, b_start: float, b_end: float, turn_blocks=None) -> np.ndarray | None:
    """b = θ̇² at the grid points `theta` (P,), from the canonical rows of `blocks` (values applied,
    `RowBlock.at`); None when the rows are not all half-planes in (a, b) or the path looks impassable.
    `turn_blocks`: the rows that tell the points near a turn (`_near_turn`), if not `blocks` (the same rows
    before viscous friction went onto its tangent: near a rest end that adds F_v q′/(2√b_ref) to every β)."""
    if any(not prunable(blk) for blk in blocks if not blk.equality):
        return None
    al, be, hh, _ = half_planes(blocks)
    theta = np.asarray(theta, dtype=float)
    P = theta.size
    if al.shape[0] != P:
        return None
    al, be, hh, flat = unit_rows(al, be, hh)
    same = turn_blocks is None or all(t is blk for t, blk in zip(turn_blocks, blocks))   # (no viscous rows: as read)
    tal, tbe, _, tflat = (al, be, hh, flat) if same else unit_rows(*half_planes(turn_blocks)[:3])
    weak = _near_turn(tal, tbe, tflat, np.diff(theta))
    if weak.any():
        al, be, hh, flat = unit_rows(*_both_ends(al, be, hh, flat, weak, np.diff(theta)))
    lower, upper, c, s = bounds_on_a(al, be, hh, flat)
    b_top, b_low = speed_range(flat, lower, upper, c, s, be, hh)
    if not (b_low <= b_top * (1 + 1e-9) + 1e-12).all() or b_start > b_top[0] or b_end > b_top[-1]:
        return None
    dth = np.diff(theta)
    # the last point's rows apply to the last interval's a (as in the convex problem's collocation):
    # a_{N−1} ≥ c_k − s_k b_end, i.e. b_{N−1} ≤ b_end − 2Δθ (c_k − s_k b_end)
    k = lower[-1]
    last = b_end - 2.0 * dth[-1] * np.max(c[-1, k] - s[-1, k] * b_end, initial=-np.inf)
    # per interval and lower row k: b_i ≤ (K_{i+1} − 2Δθ_i c_k) / (1 − 2Δθ_i s_k) where the divisor is
    # positive; other rows padded so that they bound nothing (divisor 1, numerator +inf)
    coef = np.where(lower[:-1], 1.0 - 2.0 * dth[:, None] * s[:-1], 1.0)
    shift = np.where(lower[:-1], 2.0 * dth[:, None] * c[:-1], -np.inf)
    pos = coef > 0
    inv = np.where(pos, 1.0 / np.where(pos, coef, 1.0), 0.0)
    blocked = lower[:-1] & (coef == 0)                 # rows whose bound is 0 ≤ K − 2Δθ c
    top = b_top.copy()
    top[-2] = min(top[-2], last)
    # the sweeps are sequential in i: plain floats per point (a handful of rows each) cost ~1 µs a point
    # where numpy calls on short arrays cost ~20 (the same arithmetic, so the same numbers)
    # the rows that bound something: their bound grows with K_{i+1} (≥ −1e-12, below), so one above b̄_i
    # where K_{i+1} is least never does
    with np.errstate(invalid="ignore"):
        useful = (-1e-12 - shift) * inv < (top + 1e-9 * np.abs(top))[:-1, None]
    (shift_l, inv_l), bo = _per_interval(lower[:-1] & pos & useful, shift, inv)
    stops = {i: shift[i, blocked[i]].tolist() for i in np.flatnonzero(blocked.any(axis=1))}
    top, low = top.tolist(), b_low.tolist()
    Kl = [0.0] * P
    Kl[-1] = float(b_end)
    for i in range(P - 2, -1, -1):                  # backward: largest b_i that can still reach K_{i+1}
        k1, r = Kl[i + 1], slice(bo[i], bo[i + 1])
        bound = min([(k1 - sh) * iv for sh, iv in zip(shift_l[r], inv_l[r])], default=np.inf)
        if i in stops and any(k1 - sh < 0 for sh in stops[i]):
            bound = -np.inf
        Kl[i] = min(top[i], bound)
        if Kl[i] < low[i] - 1e-12:
            return None
    if b_start > Kl[0] * (1 + 1e-9) + 1e-12:
        return None
    # b_i lies in [0, K_i]: rows for which b_i + 2Δθ_i (c − s b_i) stays above K_{i+1} there never bind
    reach = _below(c[:-1] * (2.0 * dth)[:, None], (2.0 * dth)[:, None] * s[:-1] - 1.0, Kl, b_start)
    (cu, su), fo = _per_interval(upper[:-1] & reach, c[:-1], s[:-1])
    d2 = (2.0 * dth).tolist()
    b = [0.0] * P
    b[0] = float(b_start)
    for i in range(P - 1):                          # forward: accelerate as hard as the rows allow
        bi, r = b[i], slice(fo[i], fo[i + 1])
        a_max = min([cc - ss * bi for cc, ss in zip(cu[r], su[r])], default=np.inf)
        b[i + 1] = max(min(Kl[i + 1], bi + d2[i] * a_max), 0.0)
    return np.array(b)


def _near_turn(al, be, flat, dth) -> np.ndarray:
    """(N,) bool: the points i < N whose rows hold interval i's θ̈ weakly — every row's |α| below `NEAR_TURN`
    × 2Δθ_i |β|, so that they let θ̇² grow more than (1 + 1/NEAR_TURN)-fold across the interval: every q′ is
    small there, the path turning back at or next to the point (every row bounds b alone where all q′ = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(al[:-1]) / (2.0 * dth[:, None] * np.abs(be[:-1]))        # (inf where β = 0: a bound on a)
    return np.where(flat[:-1], 0.0, ratio).max(axis=1, initial=0.0) < NEAR_TURN


def _both_ends(al, be, hh, flat, at, dth):
    """The rows (P, 2R): at each point i of `at` (N,) its own rows and point i + 1's, written on interval i's a
    with b_{i+1} = b_i + 2Δθ_i a: (α + 2Δθ_i β) a + β b_i ≤ h; elsewhere rows that bound nothing (0 ≤ inf),
    also for point i + 1's rows on b alone (`flat`: its speed bound, which the sweeps meet at point i + 1)."""
    extra = np.zeros((3,) + al.shape)
    extra[2] = np.inf
    on = ~flat[1:] & at[:, None]
    extra[0, :-1] = np.where(on, al[1:] + 2.0 * dth[:, None] * be[1:], 0.0)
    extra[1, :-1] = np.where(on, be[1:], 0.0)
    extra[2, :-1] = np.where(on, hh[1:], np.inf)
    return np.hstack([al, extra[0]]), np.hstack([be, extra[1]]), np.hstack([hh, extra[2]])


def bounds_on_a(al, be, hh, flat):
    """(lower, upper, c, s) of the unit rows (`facets.unit_rows`) α a + β b ≤ h: which rows bound a from below
    (α < 0) and from above (α > 0), each as a ≥ c − s b or a ≤ c − s b (c = h/α, s = β/α; 0 for `flat` rows)."""
    lower, upper = ~flat & (al < 0), ~flat & (al > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(flat, 0.0, hh / np.where(flat, 1.0, al))
        s = np.where(flat, 0.0, be / np.where(flat, 1.0, al))
    return lower, upper, c, s


def speed_range(flat, lower, upper, c, s, be, hh):
    """(b̄, b_low) per point: the range of b at which some a meets every row (`bounds_on_a`)."""
    P = flat.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        bf = hh / np.where(flat, be, 1.0)
    top = np.where(flat & (be > 0), bf, np.inf).min(axis=1)
    low = np.maximum(np.where(flat & (be < 0), bf, -np.inf).max(axis=1), 0.0)
    top = np.where((flat & (be == 0) & (hh < 0)).any(axis=1), -np.inf, top)
    # lower row k, upper row l: (s_l − s_k) b ≤ c_l − c_k
    ds = s[:, None, :] - s[:, :, None]                       # [p, k, l] = s_l − s_k
    dc = c[:, None, :] - c[:, :, None]
    pair = lower[:, :, None] & upper[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        cut = dc / ds
    top = np.minimum(top, np.where(pair & (ds > 0), cut, np.inf).reshape(P, -1).min(axis=1))
    low = np.maximum(low, np.where(pair & (ds < 0), cut, -np.inf).reshape(P, -1).max(axis=1))
    top = np.where((pair & (ds == 0) & (dc < 0)).any(axis=(1, 2)), -np.inf, top)
    return top, low


def packed_profile(values: dict, N: int, near: np.ndarray | None = None):
    """(β at the grid points, β(½) at the interval middles or None) of the greatest profile found by
    backward–forward sweeps like those above on the packed rows of `stations.packed` (boundary values
    taken in, `stations.with_ends`), the reference of the tangent objective's first solve (`tangent`).
    Every row of interval j is u β_j + w β_{j+1} + v δ_j ≤ h — its stations and speed caps included, each
    folded onto the interval's two grid points (and, θ̈ linear, its change δ_j). With θ̈ linear δ_j is
    eliminated first (Fourier–Motzkin: every row with v > 0 combined with every row with v < 0 — a few
    times twenty rows per interval, of which the `NEAREST` nearest to binding at the constant law's
    profile on the same rows are kept; `near`, e.g. a coarse profile, where that has none), and β(½) is
    then the most the rows let θ̇² bulge at the middle of each interval between the sweeps' β_j, β_{j+1}. The sweeps reach the linear program's optimum where
    the rows have a greatest profile; a row with u, w > 0 (a speed bound inside an interval) trades β_j
    against β_{j+1}, and there it is only close. None where a row has a √β term or the sweeps find none."""
    if np.any(values["gl"]) or np.any(values["gr"]):
        return None
    U, W, H = (np.asarray(values[k], dtype=float).reshape(N, -1) for k in ("u", "w", "h"))
    live = H < UNUSED
    V = np.asarray(values["v"], dtype=float).reshape(N, -1) if "v" in values else np.zeros_like(U)
    (U, W, H, V), live = _first(live, U, W, H, V)
    if "v" in values:                                       # eliminate δ_j
        # the constant law's profile on the same rows (δ_j = 0: a feasible restriction) says which of the
        # eliminated rows are near binding (near a stop the coarse profile `near` is ~0, where the rows that
        # bound the speed have all their slack)
        constant = _sweeps(U, W, np.where(live, H, np.inf), live, np.asarray(values["ends"], dtype=float))
        near = constant if constant is not None else near
        (Up, Wp, Hp, Vp), on_p = _first(live & (V > 0), U, W, H, V)
        (Un, Wn, Hn, Vn), on_n = _first(live & (V < 0), U, W, H, V)
        both = (on_p[:, :, None] & on_n[:, None, :]).reshape(N, -1)
        comb = [(-Vn[:, None, :] * a[:, :, None] + Vp[:, :, None] * b[:, None, :]).reshape(N, -1)
                for a, b in ((Up, Un), (Wp, Wn), (Hp, Hn))]
        terms = [(np.abs(Vn[:, None, :] * a[:, :, None]) + np.abs(Vp[:, :, None] * b[:, None, :])).reshape(N, -1)
                 for a, b in ((Up, Un), (Wp, Wn))]
        U, W, H = (np.hstack([np.where(live & (V == 0), x, 0.0), c]) for x, c in zip((U, W, H), comb))
        live = np.hstack([live & (V == 0), both])
        size = np.maximum(np.abs(U), np.abs(W))
        # a combination whose coefficients cancel (two rows alike in β) bounds nothing but rounding
        live &= size > 1e-9 * np.hstack([size[:, :live.shape[1] - both.shape[1]], np.maximum(*terms)])
        size = np.where(size > 0, size, 1.0)
        U, W, H = U / size, W / size, H / size
        if near is not None and U.shape[1] > NEAREST:       # the rows nearest to binding there
            slack = np.where(live, (H - U * near[:-1, None] - W * near[1:, None]) / (1.0 + np.abs(U) + np.abs(W)),
                             np.inf)
            order = np.argpartition(slack, NEAREST, axis=1)[:, :NEAREST]
            U, W, H, live = (np.take_along_axis(x, order, axis=1) for x in (U, W, H, live))
    beta = _sweeps(U, W, np.where(live, H, np.inf), live, np.asarray(values["ends"], dtype=float))
    if beta is None or "v" not in values:
        return beta if beta is None else (beta, None)
    U, W, H, V = (np.asarray(values[k], dtype=float).reshape(N, -1) for k in ("u", "w", "h", "v"))
    live = H < UNUSED
    rest = H - U * beta[:-1, None] - W * beta[1:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(live & (V < 0), rest / np.where(V < 0, V, 1.0), -np.inf).max(axis=1)
        hi = np.where(live & (V > 0), rest / np.where(V > 0, V, 1.0), np.inf).min(axis=1)
    delta = np.where(np.isfinite(lo), np.minimum(lo, hi), np.where(np.isfinite(hi), np.minimum(hi, 0.0), 0.0))
    mids = 0.5 * (beta[:-1] + beta[1:]) - 0.25 * delta * values["dsig"]
    return (beta, np.maximum(mids, 0.0)) if np.isfinite(mids).all() else None


def reference_profile(values: dict, N: int, near: np.ndarray | None = None):
    """`packed_profile` as the tangent objective's first reference: each interior point the forward sweep
    starved raised (`_unstarved`), the middles β(½) of its two intervals then on their chords. Not always
    feasible (`packed_profile` is): a linearisation point, the solve keeps every row."""
    found = packed_profile(values, N, near)
    if found is None:
        return None
    beta, mids = found
    raised = _unstarved(beta)
    if mids is not None:
        moved = raised != beta
        mids = np.where(moved[:-1] | moved[1:], 0.5 * (raised[:-1] + raised[1:]), mids)
    return raised, mids


def _unstarved(beta: np.ndarray) -> np.ndarray:
    """β with each interior point the forward sweep starved — below `STARVED` × both its neighbours, which are
    near the profile's top (above a tenth of it) — raised to the lower of them. A row u β_j + w β_{j+1} ≤ h
    with w ≪ u (a station's row, δ eliminated, next to a cusp of the path) is a bound on β_j that the sweep
    meets exactly, leaving β_{j+1} ≤ (h − u β_j)/w = 0: a stop the optimum does not make (the suite's iiwa
    out-and-back path: β 0.13 → 0 → 0.13 at the cusp, top 0.131, and the tangent objective's first weights
    30 % off, two more solves). Next to a stop the path must make the profile is low (θ̇² ∝ the distance to
    it), so that is kept."""
    inner = np.minimum(beta[:-2], beta[2:])
    out = beta.copy()
    low = (beta[1:-1] < STARVED * inner) & (inner > 0.1 * beta.max())
    out[1:-1][low] = inner[low]
    return out


def _sweeps(U, W, H, live, ends):
    """β (N + 1,): the greatest profile under u β_j + w β_{j+1} ≤ h (rows (N, R), `live` where used)."""
    N = U.shape[0]
    if (live & (U == 0) & (W == 0) & (H < 0)).any():
        return None
    U, W = np.where(live, U, 0.0), np.where(live, W, 0.0)
    lower, upper = live & (W < 0), live & (W > 0)               # y = β_{j+1} ≥ or ≤ (h − u x)/w
    with np.errstate(divide="ignore", invalid="ignore"):
        # x = β_j at most: rows without y (u x ≤ h), y ≥ 0 under every upper row, and every lower row below
        # every upper one ((h_r − u_r x) w_s ≥ (h_s − u_s x) w_r for r lower, s upper)
        own = np.where((live & (W == 0) | upper) & (U > 0), H / U, np.inf).min(axis=1)
        (Ul, Wl, Hl), lo_on = _first(lower, U, W, H)
        (Uu, Wu, Hu), up_on = _first(upper, U, W, H)
        D = Ul[:, :, None] * Wu[:, None, :] - Uu[:, None, :] * Wl[:, :, None]       # [j, r, s]
        num = Hl[:, :, None] * Wu[:, None, :] - Hu[:, None, :] * Wl[:, :, None]
        pair = lo_on[:, :, None] & up_on[:, None, :] & (D > 0)
        own = np.minimum(own, np.where(pair, num / np.where(pair, D, 1.0), np.inf).reshape(N, -1).min(
            axis=1, initial=np.inf))
        # backward rows: x ≤ c − s K_{j+1} (lower rows with u > 0); forward rows: y ≤ c − s x (upper rows)
        # (their x-bound c − s K_{j+1} grows with K_{j+1} ≥ 0 (s < 0): one above x's own bound at 0 never binds)
        back = lo_on & (Ul > 0) & (Hl / Ul < (own + 1e-9 * np.abs(own))[:, None])
        (bc, bs), bo = _per_interval(back, Hl / Ul, Wl / Ul)
        fc, fs = np.where(up_on, Hu / Wu, np.inf), np.where(up_on, Uu / Wu, 0.0)
    own = own.tolist()
    K = [0.0] * (N + 1)
    K[N] = float(ends[1])
    for j in range(N - 1, -1, -1):          # backward: the largest β_j from which β_{j+1} ≤ K_{j+1} is reachable
        k1, r = K[j + 1], slice(bo[j], bo[j + 1])
        k = min([own[j]] + [c - s * k1 for c, s in zip(bc[r], bs[r])])
        if not k >= -1e-12:
            return None
        K[j] = max(k, 0.0)
    if ends[0] > K[0] * (1.0 + 1e-9) + 1e-12:
        return None
    # the forward sweep's β_j lies in [0, K_j]: a row above K_{j+1} (by more than rounding) at both ends of
    # that range is above it throughout and never the minimum — left out, the same numbers at less cost
    (fc, fs), fo = _per_interval(up_on & _below(fc, fs, K, ends[0]), fc, fs)
    b = [0.0] * (N + 1)
    b[0] = float(ends[0])
    for j in range(N):                      # forward: as fast as the rows allow
        x, r = b[j], slice(fo[j], fo[j + 1])
        b[j + 1] = max(min([K[j + 1]] + [c - s * x for c, s in zip(fc[r], fs[r])]), 0.0)
    beta = np.array(b)
    beta[N] = ends[1]
    return beta if np.isfinite(beta).all() and beta.max() > 0 else None


def _below(c, s, K, start: float) -> np.ndarray:
    """(N, R) where the line c − s x comes below K_{j+1} (× (1 + 1e-9)) for some x in [0, K_j] (j = 0:
    up to the start value too): the forward sweeps' rows that can bind."""
    K = np.asarray(K, dtype=float)
    top = K[:-1].copy()
    top[0] = max(top[0], float(start))
    bound = (K[1:] * (1.0 + 1e-9))[:, None]
    with np.errstate(invalid="ignore"):
        return (c < bound) | (c - s * top[:, None] < bound)


def _per_interval(mask, *arrays):
    """The entries of (N, R) arrays where `mask`, as flat lists (interval by interval), and the offsets of
    each interval's in them (interval j: [off[j], off[j + 1])): plain floats for the sequential sweeps."""
    off = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]).tolist()
    return [x[mask].tolist() for x in arrays], off


def _first(mask, *arrays):
    """The entries of each (N, R) array where `mask`, moved to the front of their rows and cut to the
    longest such row, and the mask of those entries."""
    R = int(mask.sum(axis=1).max(initial=0))
    order = np.argsort(~mask, axis=1, kind="stable")[:, :R]
    return [np.take_along_axis(x, order, axis=1) for x in arrays], np.take_along_axis(mask, order, axis=1)
