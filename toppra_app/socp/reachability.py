"""A quick speed profile on a coarse grid by backward–forward reachability, to place the adaptive grid.

The optimiser of this product is the convex problem of `planner`. To spread its grid points where the
optimal θ̈ varies (`planner.adapted_grid`) it needs a rough profile first; this module computes one in
about a millisecond instead of a coarse convex solve, from the same canonical rows.

At grid point θ_i every row is a half-plane α a + β b ≤ h in (a, b) = (θ̈, θ̇²) (`facets.half_planes`).
Rows with α < 0 bound a from below, a ≥ c_k − s_k b (c = h/α, s = β/α), rows with α > 0 from above,
a ≤ c_l − s_l b, rows with α = 0 bound b. Each point's rows are used once, for the interval that
follows it, and b is linear in θ on each interval (b_{i+1} = b_i + 2Δθ_i a_i):

* b̄_i, the largest b at which some a meets every row (the maximum velocity curve): every pair of a
  lower row k and an upper row l needs c_k − s_k b ≤ c_l − s_l b, a bound on b in closed form;
* backward, the largest speeds from which the end is still reachable: K_N = b_end and
  K_i = max{b ≤ b̄_i : b + 2Δθ_i (c_k − s_k b) ≤ K_{i+1} for every lower row k}, again one bound per row;
* forward, the fastest profile inside these sets: b_0 = b_start,
  b_{i+1} = min(K_{i+1}, b_i + 2Δθ_i min_l (c_l − s_l b_i)).

The last point's rows also bound the last interval's a (so the result is the optimum of the collocation
scheme on that grid, which the tests check against the convex solve).

This is the reachability construction of Pham & Pham (2018, TOPP-RA) written for 2-D half-planes. It is
only an estimate for the grid (each point's rows used once, as in collocation); returns None where it
does not apply (rows with √b terms, a point that cannot be passed), and the planner then falls back to a
coarse convex solve.
"""

from __future__ import annotations

import numpy as np

from .facets import half_planes, prunable, unit_rows


def reachable_profile(blocks, theta, b_start: float, b_end: float) -> np.ndarray | None:
    """b = θ̇² at the grid points `theta` (P,), from the canonical rows of `blocks` (values applied,
    `RowBlock.at`); None when the rows are not all half-planes in (a, b) or the path looks impassable."""
    if any(not prunable(blk) for blk in blocks if not blk.equality):
        return None
    al, be, hh, _ = half_planes(blocks)
    theta = np.asarray(theta, dtype=float)
    P = theta.size
    if al.shape[0] != P:
        return None
    al, be, hh, flat = unit_rows(al, be, hh)
    lower, upper = ~flat & (al < 0), ~flat & (al > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(flat, 0.0, hh / np.where(flat, 1.0, al))
        s = np.where(flat, 0.0, be / np.where(flat, 1.0, al))
    b_top, b_low = _speed_range(flat, lower, upper, c, s, be, hh)
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
    shift_l = np.where(pos, shift, -np.inf).tolist()     # rows that bound nothing: (K + inf)·1 = inf
    inv_l = np.where(pos, inv, 1.0).tolist()
    stops = {i: shift[i, blocked[i]].tolist() for i in np.flatnonzero(blocked.any(axis=1))}
    top, low = top.tolist(), b_low.tolist()
    Kl = [0.0] * P
    Kl[-1] = float(b_end)
    for i in range(P - 2, -1, -1):                  # backward: largest b_i that can still reach K_{i+1}
        k1 = Kl[i + 1]
        bound = min([(k1 - sh) * iv for sh, iv in zip(shift_l[i], inv_l[i])], default=np.inf)
        if i in stops and any(k1 - sh < 0 for sh in stops[i]):
            bound = -np.inf
        Kl[i] = min(top[i], bound)
        if Kl[i] < low[i] - 1e-12:
            return None
    if b_start > Kl[0] * (1 + 1e-9) + 1e-12:
        return None
    cu, su = np.where(upper, c, np.inf).tolist(), np.where(upper, s, 0.0).tolist()
    d2 = (2.0 * dth).tolist()
    b = [0.0] * P
    b[0] = float(b_start)
    for i in range(P - 1):                          # forward: accelerate as hard as the rows allow
        bi = b[i]
        a_max = min([cc - ss * bi for cc, ss in zip(cu[i], su[i])], default=np.inf)
        b[i + 1] = max(min(Kl[i + 1], bi + d2[i] * a_max), 0.0)
    return np.array(b)


def _speed_range(flat, lower, upper, c, s, be, hh):
    """(b̄, b_low) per point: the range of b at which some a meets every row."""
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
