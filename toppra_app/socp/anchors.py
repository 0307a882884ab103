"""Rows kept in a solve that leaves far rows out (`stations.without`) so the reduced tangent program stays
bounded: at most one row per variable that no kept row presses on, bounding it alone."""

from __future__ import annotations

import numpy as np

from .problem import UNUSED

ANCHOR_BOUND = 1e3          # rows bounding a β (scaled to the coarse profile's top, ~1) or ε by more than this
                            # are no anchors (`anchors`: a Clarabel failure next to a turn)


def anchors(values: dict, left_out: np.ndarray) -> np.ndarray:
    """(N·R,) bool: for each β_i on which no kept row (not `left_out`) has a positive coefficient, the row bounding
    it alone most tightly, and (θ̈ linear) for each ε_j no kept row has a negative one on, the row bounding it
    from below alone most tightly — among rows with u, w, g_l, g_r ≥ 0, so with β ≥ 0 (a constraint of the
    problem) u β_j ≤ h, w β_{j+1} ≤ h (v = 0) or v ε_j ≤ h (v < 0). With every row left out the anchors alone
    bound every variable (ε from above by β(½) ≥ 0), so the program has an optimum; with some kept this is a cheap
    test, not a proof (kept rows may still leave a ray), and a reduced solve that fails is still solved again
    with every row. Only rows whose bound is at most `ANCHOR_BOUND` qualify, and only the uncovered variables
    get one: with the tightest such row of every interval kept (~3000 of them left out otherwise) Clarabel took
    137 iterations instead of 42 on the puma560's turn on 3200 intervals (tests/test_planner_any_path.py), and
    without the bound (speed rows next to a turn reach `problem.ROW_BOUND_MAX`) the so101's turn failed in
    Clarabel after 2.2 s, then took 5 s with every row."""
    h, u, w, gl, gr = (np.asarray(values[k], float) for k in ("h", "u", "w", "gl", "gr"))
    v = np.asarray(values["v"], float) if "v" in values else np.zeros_like(h)
    N = values["dsig"].size if "dsig" in values else values["span"].size
    R = h.size // N
    used = h < UNUSED
    kept = (used & ~left_out).reshape(N, R)
    covered = np.zeros(N + 1, bool)                                  # β_i bounded by a kept row with u or w > 0
    covered[:-1] |= (kept & (u.reshape(N, R) > 0)).any(axis=1)
    covered[1:] |= (kept & (w.reshape(N, R) > 0)).any(axis=1)
    floor = (kept & (v.reshape(N, R) < 0)).any(axis=1) | ~np.any(v)  # ε_j (θ̈ linear) bounded from below
    ok = used & (u >= 0) & (w >= 0) & (gl >= 0) & (gr >= 0)
    out = np.zeros(h.size, bool)
    first = np.arange(N) * R
    best = []
    for on, c in ((ok & (v == 0) & (u > 0), u), (ok & (v == 0) & (w > 0), w), (ok & (v < 0), -v)):
        bound = np.where(on, h / np.where(on, c, 1.0), np.inf)            # β_j, β_{j+1} ≤ bound; ε_j ≥ −bound
        bound = np.where(np.abs(bound) <= ANCHOR_BOUND, bound, np.inf).reshape(N, R)
        k = np.argmin(bound, axis=1)
        best.append((first + k, bound[np.arange(N), k]))
    (lk, lb), (rk, rb), (ek, eb) = best
    # β_i: the tighter of interval i's row on β_j (i < N) and interval i − 1's on β_{j+1} (i > 0)
    left, right = np.r_[lb, np.inf], np.r_[np.inf, rb]
    want = ~covered & np.isfinite(np.minimum(left, right))
    use_left = want & (left <= right)
    out[np.r_[lk, 0][use_left]] = True
    out[np.r_[0, rk][want & ~use_left]] = True
    out[ek[~floor & np.isfinite(eb)]] = True
    return out
