"""Row pruning (`toppra_app.socp.facets`): the rows it keeps describe the same feasible (θ̈, θ̇²) polygon as all
rows, checked against scipy's LP solver (HiGHS) on random half-plane sets (the planner's real rows:
test_facets_planner.py)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from toppra_app.socp.facets import binding_rows

BOX = 1e6                  # |a| ≤ BOX, 0 ≤ b ≤ BOX in the LP oracle
LP_TOL = 1e-7              # LP optima agree to this, relative to the size of the optimal points
SAMPLE_TOL = 1e-8          # points feasible for the kept rows violate no row by more than this (relative):
                           # facets treats slopes within TOL·(1 + |s| + |s'|) as parallel (TOL = 1e-9), which
                           # by design allows relative violations of a few TOL (1.09e-9 seen), not 1e-9
HIGHS = dict(primal_feasibility_tolerance=1e-10, dual_feasibility_tolerance=1e-10)
LP_FEAS = 1e-8             # HiGHS's solutions are feasible to ~1e-10 on its scaled model: ≲ 1e-9 on unit rows


# ====================================================================== the LP oracle
def _unit(alpha, beta, h):
    """Rows divided by max(|α|, |β|) (the same half-planes; rows 0 ≤ h stay as they are)."""
    n = np.maximum(np.abs(alpha), np.abs(beta))
    n = np.where(n > 0, n, 1.0)
    return alpha / n, beta / n, h / n


def _linprog(w, A, b, bounds):
    """scipy's HiGHS LP (simplex with tight tolerances; other HiGHS methods if it reports a numerical failure)."""
    res = None
    for method, options in (("highs", HIGHS), ("highs-ds", {}), ("highs-ipm", {})):
        res = linprog(-np.asarray(w, float), A_ub=A, b_ub=b, bounds=bounds, method=method, options=options)
        if res.status in (0, 2, 3):
            break
    return res


def lp_max(alpha, beta, h, w, box=BOX):
    """max w·(a, b) over {α a + β b ≤ h, b ≥ 0} ∩ {|a| ≤ box, b ≤ box}: (status, value, x, Σ|y|) with status
    "optimal" | "infeasible" and Σ|y| the size of the optimal dual (rows divided by max(|α|, |β|)): the value
    of a solution feasible to ε is accurate to ~ ε Σ|y|."""
    al, be, hh = _unit(alpha, beta, h)
    if (al == 0).all() and (be == 0).all() and (hh < 0).any():
        return "infeasible", None, None, 0.0               # 0 ≤ h < 0 (HiGHS's presolve would say so too)
    A, b = (np.column_stack([al, be]), hh) if al.size else (None, None)
    res = _linprog(w, A, b, [(-box, box), (0.0, box)])
    if res.status == 2:
        return "infeasible", None, None, 0.0
    if res.status != 0:
        raise AssertionError(f"LP oracle failed: {res.message}")
    y = np.abs(res.ineqlin.marginals).sum() if al.size else 0.0
    return "optimal", -res.fun, res.x, float(y)


def lp_batch(problems, box=BOX):
    """`lp_max` for many (α, β, h, w) at once: one block-diagonal LP, whose blocks are independent, so its
    optimum is optimal in every block (and it is much faster than many small `linprog` calls). Falls back
    to one LP each unless every block is optimal (a status belongs to one block, not to the sum)."""
    rows, cols, vals, rhs, w_all, starts = [], [], [], [], [], []
    m = 0
    for k, (alpha, beta, h, w) in enumerate(problems):
        al, be, hh = _unit(alpha, beta, h)
        zero = (al == 0) & (be == 0)
        if (hh[zero] < 0).any():
            return [lp_max(*p, box=box) for p in problems]
        al, be, hh = al[~zero], be[~zero], hh[~zero]
        r = m + np.arange(al.size)
        rows += [r, r]
        cols += [np.full(al.size, 2 * k), np.full(al.size, 2 * k + 1)]
        vals += [al, be]
        rhs.append(hh)
        w_all.append(np.asarray(w, float))
        starts.append(m)
        m += al.size
    K = len(problems)
    if m == 0 or any(s >= m for s in starts):
        return [lp_max(*p, box=box) for p in problems]
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(m, 2 * K))
    res = _linprog(np.concatenate(w_all), A, np.concatenate(rhs), [(-box, box), (0.0, box)] * K)
    if res.status != 0:
        return [lp_max(*p, box=box) for p in problems]
    X = res.x.reshape(K, 2)
    y = np.add.reduceat(np.abs(res.ineqlin.marginals), starts) * (np.diff(np.r_[starts, m]) > 0)
    out = []
    for p, w, x, yk in zip(problems, w_all, X, y):
        # the big LP is solved to HiGHS's tolerance on its own scaling, which can be looser for one block:
        # a block whose solution is not feasible to 1e-9 (rows of unit size and the bounds) is solved alone
        slack = max(violation(*p[:3], x), -x[1], abs(x[0]) - box, x[1] - box) / (1.0 + np.abs(x).max())
        out.append(("optimal", float(w @ x), x, float(yk)) if slack <= 1e-9 else lp_max(*p, box=box))
    return out


def violation(alpha, beta, h, x):
    """Largest violation of the rows at the points x = (a, b) (shape (2,) or (K, 2)), relative to the row
    size × (1 + |x|) + |h|."""
    x = np.atleast_2d(x)
    a, b = x[:, :1], x[:, 1:]
    n = np.maximum(np.abs(alpha), np.abs(beta))
    resid = alpha * a + beta * b - h
    scale = n * (1.0 + np.maximum(np.abs(a), np.abs(b))) + np.abs(h)
    scale = np.where(scale > 0, scale, 1.0)
    out = np.max(resid / scale, axis=1, initial=-np.inf)
    return float(out[0]) if out.size == 1 else out


def compare_lp(alpha, beta, h, keep, w, box, where, r_all=None, r_kept=None):
    """max w·x over all rows and over the kept rows (both with b ≥ 0 and the box) agree; returns the kept
    rows' optimum (None when empty). `r_all`, `r_kept`: the two LP results when already solved."""
    s_all, v_all, x_all, y_all = r_all or lp_max(alpha, beta, h, w, box)
    s_kept, v_kept, x_kept, y_kept = r_kept or lp_max(alpha[keep], beta[keep], h[keep], w, box)
    ctx = f"{where} w={w.tolist()} box={box:g}: all {s_all}, kept {s_kept}"
    if s_kept != "optimal":
        # fewer rows cannot make the polygon empty: the kept one is empty only if all of it is (HiGHS may
        # still call the all-rows polygon nonempty when it is empty by less than its tolerance)
        assert s_kept == "infeasible", ctx
        assert s_all == "infeasible" or violation(alpha, beta, h, x_all) <= LP_TOL, ctx
        return None
    # the kept rows' optimum must satisfy every row (this also catches dropped rows that make the polygon
    # empty: then all rows are infeasible and the kept optimum violates one of them) ...
    viol = violation(alpha, beta, h, x_kept)
    assert viol <= LP_TOL, f"{ctx}: kept optimum {x_kept.tolist()} violates a dropped row by {viol:.3e}"
    # ... and the optimal values agree, up to LP_TOL and HiGHS's own accuracy: its solutions are feasible to
    # ~1e-9 (rows of unit size), which moves the value by up to ~1e-9 × Σ|y| (large at a corner of nearly
    # parallel rows, or where a row with small |α|/|β| bounds a)
    if s_all == "optimal":
        size = np.abs(w).sum() * (1.0 + max(np.abs(x_all).max(), np.abs(x_kept).max()))
        tol = LP_TOL * size + LP_FEAS * (y_all + y_kept)
        assert abs(v_all - v_kept) <= tol, f"{ctx}: max {v_all!r} (all) != {v_kept!r} (kept), duals {y_all:.3g}, " \
                                           f"{y_kept:.3g}"
    return x_kept


def check_point(alpha, beta, h, keep, directions, rng, where=""):
    """Compare the polygon of all rows with the polygon of the kept rows at one grid point (1-d arrays):
    LP optima in the given directions and along every row's normal (with the box), unboundedness in the
    same directions (recession cones), and random points of the kept polygon. Returns the number of
    sample points checked."""
    ka, kb, kh = alpha[keep], beta[keep], h[keep]
    where = f"{where} rows α={alpha.tolist()} β={beta.tolist()} h={h.tolist()} keep={keep.tolist()}"
    # every row's own normal too: max α_i a + β_i b over the kept polygon is ≤ h_i iff row i is implied
    al, be, _ = _unit(alpha, beta, h)
    normals = np.unique(np.column_stack([al, be])[(al != 0) | (be != 0)], axis=0)
    directions = list(directions) + list(normals)
    r_all = lp_batch([(alpha, beta, h, w) for w in directions])
    r_kept = lp_batch([(ka, kb, kh, w) for w in directions])
    vertices = []
    for w, ra, rk in zip(directions, r_all, r_kept):
        x_kept = compare_lp(alpha, beta, h, keep, w, BOX, where, ra, rk)
        if x_kept is not None:
            vertices.append(x_kept)
    if not vertices or not any(r[0] == "optimal" for r in r_all):
        return 0
    # without the box: unbounded in the same directions. An LP over a nonempty polygon is unbounded in w iff
    # w·d > 0 for some d of its recession cone {d: α d_a + β d_b ≤ 0, d_b ≥ 0}; max w·d over that cone ∩ a unit
    # box is a bounded LP (HiGHS does not always tell "unbounded" from "bounded" when an edge is nearly
    # parallel to w, e.g. a far bound by a row with |α| ~ 1e-10), and the two cones must give the same maximum
    rec_all = lp_batch([(alpha, beta, np.zeros_like(h), w) for w in directions], box=1.0)
    rec_kept = lp_batch([(ka, kb, np.zeros_like(kh), w) for w in directions], box=1.0)
    for w, ra, rk in zip(directions, rec_all, rec_kept):
        assert ra[0] == rk[0] == "optimal", f"{where} w={w.tolist()}: recession LP {ra[0]}, {rk[0]}"
        unbounded_all, unbounded_kept = ra[1] > LP_TOL, rk[1] > LP_TOL
        assert abs(ra[1] - rk[1]) <= LP_TOL * np.abs(w).sum() + LP_FEAS * (ra[3] + rk[3]), \
            f"{where} w={w.tolist()}: unbounded: all {unbounded_all} ({ra[1]!r}), kept {unbounded_kept} " \
            f"({rk[1]!r}); recession directions {ra[2].tolist()}, {rk[2].tolist()}"
    # sampling: points of the kept polygon near its vertices, on its edges and inside it satisfy every row
    V = np.array(vertices)
    centre = V.mean(axis=0)
    lam = np.array([0.0, 1e-12, 1e-9, 1e-6, 1e-3, 0.1, 0.5])[None, :, None]
    pts = [(V[:, None, :] + lam * (centre - V)[:, None, :]).reshape(-1, 2)]
    i, j = rng.integers(0, len(V), size=(2, 100))
    t = rng.uniform(0.0, 1.0, size=(100, 1))
    pts.append(V[i] * t + V[j] * (1 - t))
    lo, hi = V.min(axis=0), V.max(axis=0)
    pad = 0.1 * (hi - lo) + 1e-9
    pts.append(rng.uniform(lo - pad, hi + pad, size=(400, 2)))
    X = np.vstack(pts)
    X = X[(X[:, 1] >= 0) & (np.abs(X[:, 0]) <= BOX) & (X[:, 1] <= BOX)]
    if ka.size:                                          # (exactly) in the kept polygon
        X = X[(ka * X[:, :1] + kb * X[:, 1:] - kh <= 0).all(axis=1)]
    if len(X):
        viol = np.atleast_1d(violation(alpha, beta, h, X))
        worst = int(np.argmax(viol))
        assert viol[worst] <= SAMPLE_TOL, f"{where}: point {X[worst].tolist()} meets every kept row but " \
                                          f"violates a dropped one by {viol[worst]:.3e}"
    return len(X)


def directions(extra_angles=()):
    """The four axis directions, the four diagonals and a few more."""
    axes = [np.array(w, float) for w in ((1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1))]
    return axes + [np.array([np.cos(t), np.sin(t)]) for t in extra_angles]


# ====================================================================== random half-plane sets
_KINDS = ["upper", "lower", "utan", "utan", "utan", "ltan", "ltan", "ltan", "bcap", "bfloor", "tiny", "steep",
          "steep", "zero", "dup", "near", "near", "vertex"]


def _vertex(rows, i, j):
    """Intersection of rows i and j (None when (nearly) parallel)."""
    (a1, b1, h1), (a2, b2, h2) = rows[i], rows[j]
    det = a1 * b2 - a2 * b1
    if abs(det) <= 1e-6 * (abs(a1) + abs(b1)) * (abs(a2) + abs(b2)):
        return None
    return (h1 * b2 - h2 * b1) / det, (a1 * h2 - a2 * h1) / det


def _row(kind, draw, prev, curves, scale_a, scale_b):
    """One half-plane (α, β, h) of the given kind, in the coordinates (a, b) scaled by (scale_a, scale_b).
    "utan"/"ltan" rows are tangents of the point's concave upper curve a = A0 − k b − m b² / convex lower
    curve a = L0 + k2 b + m2 b² (b ∈ [0, B]), so that many rows are edges of the polygon."""
    fl = lambda lo, hi: draw(st.floats(lo, hi, allow_nan=False, allow_infinity=False))
    tiny_power = lambda lo, hi: draw(st.sampled_from([1, -1])) * 10.0 ** draw(st.integers(lo, hi))
    if kind in ("dup", "near", "vertex") and not prev:
        kind = "upper"
    A0, k, m, L0, k2, m2, B, ts = curves
    if kind in ("utan", "ltan"):
        # tangent at t ∈ [0, B], often close to an earlier tangent point (nearly parallel edges of the polygon)
        t = fl(0.0, B)
        if ts and draw(st.booleans()):
            t = min(max(ts[draw(st.integers(0, len(ts) - 1))] + tiny_power(-7, -1) * B, 0.0), B)
        ts.append(t)
    if kind == "utan":                                   # a ≤ f(t) + f'(t)(b − t),  f(b) = A0 − k b − m b²
        al, be, h = 1.0, k + 2 * m * t, A0 + m * t * t
    elif kind == "ltan":                                 # a ≥ g(t) + g'(t)(b − t),  g(b) = L0 + k2 b + m2 b²
        al, be, h = -1.0, k2 + 2 * m2 * t, -(L0 - m2 * t * t)
    elif kind == "upper":                                # a ≤ c − s b
        c, s = fl(-10.0, 10.0), fl(-10.0, 10.0)
        al, be, h = 1.0, s, c
    elif kind == "lower":                                # a ≥ c − s b  ⇔  −a − s b ≤ −c
        c, s = fl(-10.0, 10.0), fl(-10.0, 10.0)
        al, be, h = -1.0, -s, -c
    elif kind == "bcap":                                 # b ≤ c  (c < 0: empty)
        al, be, h = 0.0, 1.0, fl(-0.1, 1.5) * B
    elif kind == "bfloor":                               # b ≥ c  (c ≤ 0: no bound)
        al, be, h = 0.0, -1.0, -fl(-5.0, 3.0)
    elif kind == "tiny":                                 # |α| ≲ 1e-10 |β|: a b-bound, nearly
        al = draw(st.sampled_from([1e-10, -1e-10, 3e-11, -5e-10, 1e-12]))
        be, h = draw(st.sampled_from([1.0, -1.0])), fl(-1.0, 20.0)
    elif kind == "steep":                                # 2e-9 ≤ |α|/|β| ≤ 1e-4: a very steep a-bound
        al = draw(st.sampled_from([1, -1])) * draw(st.sampled_from([2e-9, 1e-8, 1e-7, 1e-6, 1e-4]))
        be, h = draw(st.sampled_from([1.0, -1.0])), fl(-1.0, 20.0)
    elif kind == "zero":                                 # 0 ≤ h
        al, be, h = 0.0, 0.0, draw(st.sampled_from([0.0, 1.0, -1.0]))
    elif kind == "dup":                                  # the same half-plane again
        return prev[draw(st.integers(0, len(prev) - 1))]
    elif kind == "near":                                 # nearly parallel to an earlier row, nearly through it
        al, be, h = prev[draw(st.integers(0, len(prev) - 1))]
        eps = tiny_power(-12, -2)
        dh = draw(st.sampled_from([0.0, tiny_power(-12, -2)]))
        size = abs(al) + abs(be)
        if draw(st.booleans()):
            al, be = al + eps * size, be
        else:
            al, be = al, be + eps * size
        return al, be, h + dh * (abs(h) + size)
    else:                                                # "vertex": through the corner of two earlier rows
        i, j = draw(st.integers(0, len(prev) - 1)), draw(st.integers(0, len(prev) - 1))
        x = _vertex(prev, i, j)
        t = fl(0.0, 2 * np.pi)
        al, be = np.cos(t), np.sin(t)
        if draw(st.booleans()):                          # between the two rows' normals: a tie at their corner
            lam = draw(st.sampled_from([0.5, 0.1, 0.9, 1e-3]))
            (a1, b1, _), (a2, b2, _) = prev[i], prev[j]
            n1, n2 = max(abs(a1), abs(b1), 1e-300), max(abs(a2), abs(b2), 1e-300)
            u, v = lam * a1 / n1 + (1 - lam) * a2 / n2, lam * b1 / n1 + (1 - lam) * b2 / n2
            if max(abs(u), abs(v)) > 1e-3:
                al, be = u, v
        if x is None or not np.isfinite(x).all() or max(abs(x[0]), abs(x[1])) > 1e4:
            return al, be, fl(-10.0, 10.0)
        off = draw(st.sampled_from([0.0, 0.0, 1e-12, -1e-12, 1e-8, -1e-8, 1e-5]))
        h = al * x[0] + be * x[1]
        return al, be, h + off * (1.0 + abs(h))
    return al / scale_a, be / scale_b, h


@st.composite
def half_plane_sets(draw):
    """(α, β, h) arrays (P, R): random half-planes per point in random coordinate and row scales."""
    P = draw(st.integers(1, 3))
    R = draw(st.integers(1, 12))
    # coordinate scales (a tiny or a huge polygon, a and b of different sizes) ...
    scale_a = 10.0 ** draw(st.sampled_from([-3, -1, 0, 0, 1, 3]))
    scale_b = 10.0 ** draw(st.sampled_from([-2, 0, 0, 2]))
    alpha, beta, h = np.zeros((P, R)), np.zeros((P, R)), np.zeros((P, R))
    fl = lambda lo, hi: draw(st.floats(lo, hi, allow_nan=False, allow_infinity=False))
    for p in range(P):
        curves = (fl(-2.0, 5.0), fl(-3.0, 3.0), fl(0.0, 5.0), fl(-5.0, 2.0), fl(-3.0, 3.0), fl(0.0, 5.0),
                  draw(st.sampled_from([0.1, 1.0, 1.0, 3.0])), [])
        rows = []
        for r in range(R):
            rows.append(_row(draw(st.sampled_from(_KINDS)), draw, rows, curves, scale_a, scale_b))
        alpha[p], beta[p], h[p] = np.array(rows).T
    # ... and each row multiplied by a positive factor (the same half-plane), from 1e-8 to 1e8
    row_scale = 10.0 ** np.array(draw(st.lists(st.integers(-8, 8), min_size=R, max_size=R)), float)
    return alpha * row_scale, beta * row_scale, h * row_scale


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(half_plane_sets(), st.lists(st.floats(0.0, 2 * np.pi), min_size=2, max_size=2), st.integers(0, 2**32 - 1))
def test_kept_rows_give_the_same_polygon(planes, angles, seed):
    alpha, beta, h = planes
    keep = binding_rows(alpha, beta, h)
    assert keep.shape == alpha.shape and keep.dtype == bool
    rng = np.random.default_rng(seed)
    for p in range(alpha.shape[0]):
        check_point(alpha[p], beta[p], h[p], keep[p], directions(angles), rng, where=f"point {p}")


def test_obviously_redundant_rows_are_dropped():
    # a ≤ 1, a ≤ 2, a ≥ −1, a ≥ −3, b ≤ 1, b ≤ 3, a + b ≤ 10, 0 ≤ 1, −b ≤ 0.5: the box [−1, 1] × [0, 1]
    alpha = np.array([[1.0, 1.0, -1.0, -1.0, 0.0, 0.0, 1.0, 0.0, 0.0]])
    beta = np.array([[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, -1.0]])
    h = np.array([[1.0, 2.0, 1.0, 3.0, 1.0, 3.0, 10.0, 1.0, 0.5]])
    keep = binding_rows(alpha, beta, h)
    assert keep[0].tolist() == [True, False, True, False, True, False, False, False, False]
    # the same rows scaled by positive factors, at two points: the same answer
    f = np.array([[1e-6, 3.0, 1e5, 0.5, 2.0, 1e-3, 7.0, 1.0, 1e4]])
    keep2 = binding_rows(np.vstack([alpha, alpha]) * f, np.vstack([beta, beta]) * f, np.vstack([h, h]) * f)
    assert (keep2 == keep[0]).all()


def test_no_rows_and_empty_polygon():
    assert binding_rows(np.zeros((3, 0)), np.zeros((3, 0)), np.zeros((3, 0))).shape == (3, 0)
    # b ≤ −1 makes the polygon empty: the kept rows must be empty too
    alpha = np.array([[0.0, 1.0, -1.0, 1.0]])
    beta = np.array([[1.0, 0.0, 0.0, 1.0]])
    h = np.array([[-1.0, 1.0, 1.0, 5.0]])
    keep = binding_rows(alpha, beta, h)[0]
    assert lp_max(alpha[0][keep], beta[0][keep], h[0][keep], (0.0, 1.0))[0] == "infeasible"


def test_steep_row_does_not_hide_a_needed_row():
    # regression: the walk's "steeper" test once used TOL·(1 + max |s|) over the whole point, so one steep
    # row made nearly every other slope look parallel and hid rows that bind
    # a ≤ 0;  a ≤ 1e-3 − 0.05 b (below a ≤ 0 for b > 0.02);  a ≤ −1e8 (b − 10) (steep, irrelevant);
    # b ≤ 5;  a ≥ −1e3.  Row 1 binds on b ∈ [0.02, 5] ((a, b) = (0, 1) meets every other row but not row 1).
    alpha = np.array([[1.0, 1.0, 1.0, 0.0, -1.0]])
    beta = np.array([[0.0, 0.05, 1e8, 1.0, 0.0]])
    h = np.array([[0.0, 1e-3, 1e9, 5.0, 1e3]])
    keep = binding_rows(alpha, beta, h)[0]
    assert keep[1], f"needed row 1 dropped: keep = {keep.tolist()}"
    check_point(alpha[0], beta[0], h[0], keep, directions(), np.random.default_rng(0))
