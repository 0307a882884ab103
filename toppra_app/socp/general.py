"""The time-optimal problem with every number baked in, for the objectives and limits that change the
problem's *form*: the time–energy objective (`objectives`), torque-rate and jerk rows over several
intervals (`limits.rates`) and the thermal cycle problem (`objectives.thermal`). Compiled per use
(those plans are sequential convex schemes that rebuild their rows anyway); the plain time-optimal plan
uses the compiled-once `problem.StationProblem` instead.

Grid θ_0 < … < θ_N, variables b_i = θ̇²(θ_i), r_i ≤ √b_i, t_j ≥ 0; a_j = θ̈ on interval j:

    minimise   Σ_j t_j (+ energy term)                                                         (1)
    subject to b_{j+1} − b_j = 2 a_j Δθ_j   (substituted: a_j is not a solver variable)         (2)
               r_i² ≤ b_i          ⇔  ‖(2 r_i, b_i − 1)‖ ≤ b_i + 1                               (3)
               t_j (r_j + r_{j+1}) ≥ 2Δθ_j                                                        (4)
               lo ≤ A a_j + B b_i + C r_i ≤ hi   for i ∈ {j, j+1}   (canonical rows)              (5)

The rows may depend affinely on a few named scalars (`RowBlock.deltas`: the boundary speeds), which
are cvxpy Parameters.
"""

from __future__ import annotations

import threading
import time
import warnings

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from ..limits.rows import RowBlock
from .problem import _STATS, _STATS_LOCK

NEVER, NEGLIGIBLE = 1e3, 1e-9        # extra rows that cannot bind (`bindable_rows`)


def end_torque_operator(P: int, nx: int, m, c, d, v, j, e, k):
    """Torques at the ends of the intervals as an affine map of the variables x = (b, r, a, …):
    row i is joint k[i] at grid point p = j[i] + e[i] (end e ∈ {0, 1} of interval j) using that
    interval's acceleration, τ = m_p a_j + c_p b_p + v_p r_p + d_p (each coefficient (P, n), already
    scaled by the caller). Returns the sparse matrix G and the constant, so τ = G x + offset."""
    pt = j + e
    row = np.arange(pt.size)
    rows = np.concatenate([row, row, row])
    cols = np.concatenate([2 * P + j, pt, P + pt])
    vals = np.concatenate([m[pt, k], c[pt, k], v[pt, k]])
    keep = vals != 0
    return sp.csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(pt.size, nx)), d[pt, k]


def bindable_rows(G, lo, hi, x_max: float):
    """Extra rows (G, lo, hi) for `GeneralProblem`, each divided by its largest coefficient, with the bounds
    that cannot bind left out (±inf): beyond NEVER × `x_max` (a bound on |x|, so on |G_i x|/max|G_i|
    up to the row's width), or on rows whose coefficients are all below NEGLIGIBLE of the largest (met
    within the solver's tolerance by any x). Rows spread over many decades stalled Clarabel ("insufficient
    progress" with a jerk limit of 1e12)."""
    G = sp.csr_matrix(G)
    size = abs(G).max(axis=1).toarray().ravel()
    live = size > NEGLIGIBLE * size.max(initial=0.0)
    scale = 1.0 / np.where(live, size, 1.0)
    lo, hi = np.asarray(lo, float) * scale, np.asarray(hi, float) * scale
    with np.errstate(invalid="ignore"):
        lo = np.where(live & (lo >= -NEVER * x_max), lo, -np.inf)
        hi = np.where(live & (hi <= NEVER * x_max), hi, np.inf)
    return sp.diags(scale) @ G, lo, hi


class GeneralProblem:
    """The SOCP (1)–(5) on one grid with the rows' numbers baked in as constants, except a few named
    scalar cvxpy Parameters on which the rows depend affinely (`RowBlock.deltas`: payload inertial
    parameters, boundary speeds). Built and compiled once; `solve(values)` only sets the Parameters.

    (Why not make every coefficient a Parameter: cvxpy's DPP canonicalisation of conic problems costs
    memory and time ∝ (#variables) × (#parameter entries), i.e. O(N²) — 30 s at N = 800 — whereas a
    dozen scalar Parameters keep it O(N).)"""

    def __init__(self, theta, blocks: list[RowBlock], scheme: str = "interpolation", energy: dict | None = None,
                 extra_rows=None, masks=None):
        theta = np.asarray(theta, dtype=float)
        P = theta.size
        if P < 2:
            raise ValueError("TimeOptimalProblem: need at least 2 grid points")
        if scheme not in ("interpolation", "collocation"):
            raise InputError(f"scheme: expected 'interpolation' or 'collocation', got {scheme!r}")
        self.theta, self.P, self.scheme = theta, P, scheme
        self.lock = threading.Lock()
        N = P - 1
        self.nx = nx = 2 * P + 2 * N
        dth = np.diff(theta)
        # the solver's variables are (b, r, t); a_j = (b_{j+1} − b_j)/(2Δθ_j) (2) is substituted, so every
        # row below is written on x = (b, r, a, t) = T (b, r, t)
        xr = cp.Variable(2 * P + N, name="x")
        j = np.arange(N)
        T = sp.csr_matrix((np.concatenate([np.ones(2 * P), -0.5 / dth, 0.5 / dth, np.ones(N)]),
                           (np.concatenate([np.arange(2 * P), 2 * P + j, 2 * P + j, 2 * P + N + j]),
                            np.concatenate([np.arange(2 * P), j, j + 1, 2 * P + j]))), shape=(nx, 2 * P + N))
        x = self.x = T @ xr
        b, r, t = x[:P], x[P:2 * P], x[2 * P + N:]              # (a = x[2P:2P+N] enters through the rows)
        self._b = slice(0, P)
        rs = r[:-1] + r[1:]
        # b ≥ 0 and t ≥ 0 follow from the cones (3), (4); r ≥ 0 keeps r = √b meaningful at rest points
        cons = [r >= 0,
                cp.SOC(b + 1.0, cp.vstack([2.0 * r, b - 1.0]), axis=0),                     # (3)
                cp.SOC(t + rs, cp.vstack([2.0 * np.sqrt(2.0 * dth), t - rs]), axis=0)]      # (4)
        names = sorted({name for blk in blocks for name in blk.deltas})
        self.names = names
        self.pvec = cp.Parameter(max(len(names), 1), name="p", value=np.zeros(max(len(names), 1)))
        # (5): gather (point, interval, row) entries of every block, per side: "le" (g ≤ hi, and −g ≤ −lo),
        # "eq" (g = lo) and, without masks, "box" (two-sided rows with Parameters, see below).
        # `masks` (`facets.row_masks`): per block None or the rows that can bind at each point ("hi"/"lo");
        # the others are implied by them and left out (the feasible set is the same)
        self.masks = masks = list(masks) if masks is not None else [None] * len(blocks)
        entries = {}
        for blk, mask in zip(blocks, masks):
            pairs = self._pairs(P) if blk.uses_a else np.stack([np.arange(P), np.zeros(P, int)], axis=1)
            if blk.points is not None:
                pairs = pairs[np.asarray(blk.points, bool)[pairs[:, 0]]]
            if blk.equality:
                sides = (("eq", np.ones(blk.size, bool), "lo"),)
            elif mask is not None:
                sides = (("le", blk.has_hi, "hi"), ("le", blk.has_lo, "lo"))
            else:
                # two-sided rows lo ≤ g ≤ hi with Parameters become one 2-dimensional cone |g − mid| ≤ half
                # ("box"): the same constraint, but cvxpy canonicalises g with its Parameter terms once, not twice
                both = blk.has_hi & blk.has_lo & bool(blk.deltas)
                sides = (("box", both, "box"), ("le", blk.has_hi & ~both, "hi"), ("le", blk.has_lo & ~both, "lo"))
            for side, has, bound in sides:
                rows = np.flatnonzero(has)
                if rows.size == 0 or pairs.shape[0] == 0:
                    continue
                pt, iv, col = (np.repeat(pairs[:, 0], rows.size), np.repeat(pairs[:, 1], rows.size),
                               np.tile(rows, pairs.shape[0]))
                if mask is not None and not blk.equality:
                    sel = mask[bound][pt, col]
                    pt, iv, col = pt[sel], iv[sel], col[sel]
                if pt.size:
                    entries.setdefault(side, []).append((blk, pt, iv, col, bound))
        self.n_rows = 0
        for side, items in entries.items():
            G0, h0, Gs, used, Hp = self._side_matrices(items, names)
            expr, rhs = G0 @ x, h0
            if used:                 # Σ_k p_k G_k x as one product: (G_k x stacked as columns) @ p
                expr = expr + cp.reshape(Gs @ x, (G0.shape[0], len(used)), order="F") @ self.pvec[used]
            if np.any(Hp):
                rhs = (rhs.T + Hp @ self.pvec).T if side != "box" else [h0[i] + Hp[i] @ self.pvec for i in range(2)]
            elif side == "box":
                rhs = list(h0)
            if side == "box":                        # rhs = (mid, half), both affine in the Parameters
                cons.append(cp.SOC(rhs[1], cp.reshape(expr - rhs[0], (1, G0.shape[0]), order="F"), axis=0))
            else:
                cons.append(expr <= rhs if side == "le" else expr == rhs)
            self.n_rows += G0.shape[0]
        if extra_rows is not None:                  # (G, lo, hi): rows over several intervals' a (rate_limits)
            G, lo, hi = extra_rows
            lo, hi = np.asarray(lo, float), np.asarray(hi, float)
            for mask, side in ((np.isfinite(hi), "hi"), (np.isfinite(lo), "lo")):
                if mask.any():
                    Gm = G[np.flatnonzero(mask)]
                    cons.append(Gm @ x <= hi[mask] if side == "hi" else Gm @ x >= lo[mask])
            self.n_rows += G.shape[0]
        objective = cp.sum(t)
        if energy is not None and energy["weight"] > 0:
            objective = objective + self._energy_term(energy, x, r, cons)
        self.problem = cp.Problem(cp.Minimize(objective), cons)
        self.n_solves = 0
        self.n_compiles = 0
        self.compile_time = 0.0
        with _STATS_LOCK:
            _STATS["built"] += 1

    def _energy_term(self, energy: dict, x, r, cons: list):
        """weight × Σ_j Δθ_j s_j with ‖(τ̂_j, τ̂_{j+1})‖² ≤ s_j (r_j + r_{j+1}) (the time–energy objective of
        Verscheure et al. 2009, see `objectives`): τ̂ = √R τ at both ends of interval j with its a_j, affine
        in (a, b, r): τ̂_i = m̂_i a_j + ĉ_i b_i + d̂_i + v̂_i r_i (v̂: viscous friction, √b ≈ r). At r = √b,
        Δθ_j s_j = t_j (τ̂_jᵀτ̂_j + τ̂_{j+1}ᵀτ̂_{j+1})/2, the trapezoidal ∫ τᵀRτ dt over the interval, and
        ‖X‖²/y (quad-over-lin) is jointly convex for y > 0, so the problem stays an SOCP."""
        P, N = self.P, self.P - 1
        m, c, d, v = (np.asarray(energy[k], dtype=float) for k in ("m", "c", "d", "v"))       # (P, n), × √R
        n = m.shape[1]
        # rows ordered (interval j, end e ∈ {left, right}, joint k) → X reshaped (2n, N) column j = interval j
        j = np.repeat(np.arange(N), 2 * n)
        e = np.tile(np.repeat([0, 1], n), N)
        k = np.tile(np.arange(n), 2 * N)
        G, offset = end_torque_operator(P, self.nx, m, c, d, v, j, e, k)
        X = cp.reshape(G @ x + offset, (2 * n, N), order="F")
        s = self.energy_s = cp.Variable(N, name="energy", nonneg=True)
        y = r[:-1] + r[1:]
        cons.append(cp.SOC(s + y, cp.vstack([2.0 * X, cp.reshape(s - y, (1, N), order="F")]), axis=0))
        return float(energy["weight"]) * (np.diff(self.theta) @ s)

    def _side_matrices(self, items, names):
        """The rows of `items` as G0 x (≤ or =) h0 + Σ_k p_k (h_k − G_k x): G0 (M × nx), h0 (M,) (for "box"
        (2, M): middle and half-width of [lo, hi]), the G_k of the parameters that occur stacked as Gs
        (len(used)·M × nx, parameter-major), `used` (their indices in `names`) and H = (h_k) (M, K) or (2, M, K).
        An item's bound "hi" gives g ≤ hi, "lo" gives −g ≤ −lo (or g = lo for equality rows)."""
        P, K = self.P, len(names)
        rows, cols, vals, dvals, h, dh = [], [], [], [], [], []
        offset = 0
        for blk, pt, iv, col, bound in items:
            M = pt.size
            m = offset + np.arange(M)
            sign = -1.0 if bound == "lo" and not blk.equality else 1.0
            deltas = [blk.deltas.get(name, {}) for name in names]
            for key, var_cols, used in (("B", pt, True), ("A", 2 * P + iv, blk.uses_a), ("C", P + pt, blk.uses_r)):
                if used:
                    rows.append(m)
                    cols.append(var_cols)
                    vals.append(sign * getattr(blk, key)[pt, col])
                    dvals.append(np.array([sign * d[key][pt, col] if key in d else np.zeros(M) for d in deltas])
                                 .reshape(K, M))

            def bound_values(src, key):
                return np.zeros(M) if src.get(key) is None else src[key][pt, col]
            base = {"lo": blk.lo, "hi": blk.hi}
            if bound == "box":
                lo, hi = bound_values(base, "lo"), bound_values(base, "hi")
                h.append(np.stack([0.5 * (lo + hi), 0.5 * (hi - lo)]))
                dlo = np.array([bound_values(d, "lo") for d in deltas]).reshape(K, M)
                dhi = np.array([bound_values(d, "hi") for d in deltas]).reshape(K, M)
                dh.append(np.stack([0.5 * (dlo + dhi), 0.5 * (dhi - dlo)], axis=1))          # (K, 2, M)
            else:
                h.append(sign * bound_values(base, bound))
                dh.append(sign * np.array([bound_values(d, bound) for d in deltas]).reshape(K, M))
            offset += M
        rows, cols, vals = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
        dvals = np.concatenate(dvals, axis=1)                                                  # (K, nnz)
        keep = vals != 0
        G0 = sp.csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(offset, self.nx))
        used = [k for k in range(K) if np.any(dvals[k])]
        Gs = None
        if used:
            nz = np.any(dvals[used] != 0, axis=0)
            r = (rows[nz][None, :] + offset * np.arange(len(used))[:, None]).ravel()
            Gs = sp.csr_matrix((dvals[used][:, nz].ravel(), (r, np.tile(cols[nz], len(used)))),
                               shape=(len(used) * offset, self.nx))
        h0 = np.concatenate(h, axis=-1)
        Hp = np.concatenate(dh, axis=-1)                                                       # (K, [2,] M)
        Hp = np.moveaxis(Hp, 0, -1)                                                            # ([2,] M, K)
        return G0, h0, Gs, used, Hp

    def _pairs(self, P: int) -> np.ndarray:
        """(point, interval) pairs at which rows that use a are enforced."""
        i = np.arange(P)
        if self.scheme == "collocation":
            return np.stack([i, np.minimum(i, P - 2)], axis=1)
        left = np.stack([i[:-1], i[:-1]], axis=1)           # interval j at its left end θ_j
        right = np.stack([i[1:], i[:-1]], axis=1)           # interval j at its right end θ_{j+1}
        return np.concatenate([left, right])

    def solve(self, values: dict, solver: str = "CLARABEL", **options) -> tuple[str, np.ndarray, float, float]:
        """Set the named Parameters and solve; returns (status, b, wall seconds, compile seconds)."""
        with self.lock:
            self.pvec.value = np.array([float(values.get(name, 0.0)) for name in self.names] or [0.0])
            before = self._compiled_program()
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.problem.solve(solver=solver, **options)
            wall = time.perf_counter() - t0
            # cvxpy keeps one compiled (solver-specific) program per problem; a new one means a compilation
            compiled = self._compiled_program() is not before
            compile_s = float(self.problem.compilation_time or 0.0) if compiled else 0.0
            if compiled:
                self.n_compiles += 1
                self.compile_time += compile_s
                with _STATS_LOCK:
                    _STATS["compiled"] += 1
            self.n_solves += 1
            xv = self.x.value
            b = None if xv is None else np.array(xv[self._b], dtype=float)
            return self.problem.status, b, wall, compile_s

    def _compiled_program(self):
        cache = getattr(self.problem, "_cache", None)
        return getattr(cache, "param_prog", None)
