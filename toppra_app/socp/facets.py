"""Which canonical rows can bind: the edges of the feasible (θ̈, θ̇²) polygon at every grid point.

At a grid point θ_i every row of the canonical form without the r ≤ √b term (`constraints`) is a
half-plane in (a, b) = (θ̈, θ̇²):

    α a + β b ≤ h          (a two-sided row lo ≤ A a + B b ≤ hi gives α = A, β = B, h = hi and
                            α = −A, β = −B, h = −lo)

and the point's feasible set is the intersection of these half-planes with b ≥ 0, a convex polygon.
Only the rows on its boundary can ever be active; the others are implied by them at *every* (a, b), so
dropping them leaves the optimisation problem exactly the same while the solver works on far fewer rows
(typically 3–6 per point instead of 2n + 2n + 1; see docs/planner.md, "Rows that can bind").

Rows with α > 0 bound a from above, a ≤ c − s b with c = h/α, s = β/α; row i is on the lower envelope
of these lines iff some b in the feasible b-range [0, b_top] makes it the smallest, i.e. iff the interval

    { b ∈ [0, b_top] : (s_j − s_i) b ≤ c_j − c_i  for all other j in the group }

is not empty (rows with α < 0 are the mirror image, a ≥ c − s b). Rows with α = 0 bound b alone; only
the tightest upper bound b ≤ h/β (β > 0) is kept. The test keeps a small superset (ties and near-ties
are kept, the polygon's b-range is taken from the α = 0 rows only), never fewer rows than needed.
Rows whose α is too small to divide by safely (|α| ≤ 1e-9 after scaling) are treated as bounds on b
alone: kept unless trivially met or looser than the tightest cap on b (an error of ~1e-9 relative).
"""

from __future__ import annotations

import numpy as np

SMALL_A = 1e-9          # |α| below this (rows are normalised by the limit, |β| ~ 1): α = 0 rows
TOL = 1e-9              # relative tolerance of the envelope test (ties are kept)


def half_planes(blocks) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """Stack the one-sided rows of the prunable blocks as α a + β b ≤ h, arrays (P, R), and the list of
    (block index, side "hi"/"lo", row) each column came from. Blocks with r terms, equality rows or
    rows on a subset of the points are not prunable (they are left out and kept whole)."""
    cols, al, be, hh = [], [], [], []
    for k, blk in enumerate(blocks):
        if not prunable(blk):
            continue
        for side, has, sign, bound in (("hi", blk.has_hi, 1.0, blk.hi), ("lo", blk.has_lo, -1.0, blk.lo)):
            rows = np.flatnonzero(has)
            if rows.size == 0:
                continue
            al.append(sign * blk.A[:, rows])
            be.append(sign * blk.B[:, rows])
            hh.append(sign * bound[:, rows])
            cols += [(k, side, int(r)) for r in rows]
    if not cols:
        return np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), []
    return np.hstack(al), np.hstack(be), np.hstack(hh), cols


def prunable(blk) -> bool:
    return not blk.equality and blk.points is None and not (blk.uses_r and np.any(blk.C))


def unit_rows(alpha, beta, h):
    """The rows scaled to max(|α|, |β|) = 1 (the same half-planes), and which of them bound b only
    (|α| ≤ SMALL_A: "flat")."""
    scale = np.maximum(np.abs(alpha), np.abs(beta))
    scale = np.where(scale > 0, scale, 1.0)
    al, be, hh = alpha / scale, beta / scale, h / scale
    return al, be, hh, np.abs(al) <= SMALL_A


def binding_rows(alpha, beta, h) -> np.ndarray:
    """(P, R) bool: the half-planes α a + β b ≤ h (arrays (P, R)) that can bind at each point."""
    alpha, beta, h = (np.asarray(x, dtype=float) for x in (alpha, beta, h))
    P, R = alpha.shape
    if R == 0:
        return np.zeros((P, 0), bool)
    al, be, hh, flat = unit_rows(alpha, beta, h)
    upper_b = flat & (be > SMALL_A)                               # b ≤ h/β
    with np.errstate(divide="ignore", invalid="ignore"):
        b_bound = np.where(upper_b, hh / np.where(upper_b, be, 1.0), np.inf)
    b_top = np.maximum(b_bound.min(axis=1), 0.0)                  # (P,) the α = 0 rows' b-range [0, b_top]
    keep = ~flat                                                   # envelope test below may drop these
    # α = 0 rows: the tightest b ≤ h/β is kept; β ≤ 0 rows (b ≥ …, or 0 ≤ h) are kept unless trivially met
    tight = upper_b & (b_bound <= b_top[:, None] * (1 + TOL) + TOL)
    trivial = flat & ~upper_b & (be <= 0) & (hh >= 0)             # −|β| b ≤ h with h ≥ 0: holds for all b ≥ 0
    keep |= flat & ~upper_b & ~trivial
    keep |= tight
    if P and (~flat).any():
        for sign in (1.0, -1.0):                                  # α > 0: a ≤ c − s b;  α < 0: a ≥ c − s b
            grp = ~flat & (sign * al > 0)
            if grp.any():
                with np.errstate(divide="ignore", invalid="ignore"):
                    c = np.where(grp, sign * hh / al, np.inf)     # in the group's orientation sign·a ≤ c − s b
                    s = np.where(grp, sign * be / al, 0.0)
                keep &= ~grp | _lower_envelope(c, s, grp, b_top)
    return keep


def _lower_envelope(c, s, grp, b_top) -> np.ndarray:
    """(P, R) bool: the lines a = c − s b of `grp` that are lowest somewhere on b ∈ [0, b_top].

    Walks the envelope from b = 0, all points at once: the lowest line there, then repeatedly the line
    crossing the current one first among the steeper ones, until b_top. Lines through (nearly) the same
    vertex are all kept and the walk goes on with the steepest of them. Each step takes only the points
    still walking (each point's walk is its own: the same lines as stepping them all)."""
    P, R = c.shape
    keep = np.zeros((P, R), bool)
    cmin = c.min(axis=1)
    active = np.isfinite(cmin)
    tie = grp & (c <= (cmin + TOL * (1.0 + np.abs(cmin)))[:, None])
    keep |= tie & active[:, None]
    at = np.flatnonzero(active)                                   # the points still walking, their line, b
    cur, b_cur = np.argmax(np.where(tie, s, -np.inf), axis=1)[at], np.zeros(at.size)
    for _ in range(R):
        if at.size == 0:
            break
        ca, sa, ga, ra = c[at], s[at], grp[at], np.arange(at.size)
        sc, cc = sa[ra, cur][:, None], ca[ra, cur][:, None]
        steeper = ga & (sa - sc > TOL * (1.0 + np.abs(sa) + np.abs(sc)))    # (nearly) parallel: not steeper
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            cross = np.where(steeper, (ca - cc) / (sa - sc), np.inf)
        cross = np.maximum(cross, b_cur[:, None])                 # (rounding: never behind the walk)
        b_next = cross.min(axis=1)
        on = np.isfinite(b_next) & (b_next <= b_top[at] * (1.0 + TOL) + TOL)
        tie = steeper & (cross <= (b_next + TOL * (1.0 + np.abs(b_next)))[:, None]) & on[:, None]
        keep[at] |= tie
        cur, b_cur, at = np.argmax(np.where(tie, sa, -np.inf), axis=1)[on], b_next[on], at[on]
    return keep


def row_masks(blocks) -> list:
    """For each block: None (keep all rows) or {"hi": (P, R) bool, "lo": (P, R) bool}, the rows that can
    bind (`binding_rows`). Blocks must already have their parameter values applied (`RowBlock.at`)."""
    al, be, hh, cols = half_planes(blocks)
    out = [None] * len(blocks)
    if not cols:
        return out
    keep = binding_rows(al, be, hh)
    for k, blk in enumerate(blocks):
        if prunable(blk):
            out[k] = {"hi": np.zeros(blk.A.shape, bool), "lo": np.zeros(blk.A.shape, bool)}
    for col, (k, side, r) in enumerate(cols):
        out[k][side][:, r] = keep[:, col]
    return out
