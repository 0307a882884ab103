"""Time-optimal speed profile along a fixed path as a second-order cone program (cvxpy).

Formulation (Verscheure et al. 2009; Lipp & Boyd 2014; Safeea et al. 2019 eq. 5):
grid θ_0 < … < θ_N, variables b_i = θ̇²(θ_i), r_i ≤ √b_i, t_j ≥ 0; a_j = θ̈ on interval j:

    minimise   Σ_j t_j                                                                    (1)
    subject to b_{j+1} − b_j = 2 a_j Δθ_j   (substituted: a_j is not a solver variable)  (2)
               r_i² ≤ b_i          ⇔  ‖(2 r_i, b_i − 1)‖ ≤ b_i + 1                        (3)
               t_j (r_j + r_{j+1}) ≥ 2Δθ_j  ⇔  ‖(2√(2Δθ_j), t_j − r_j − r_{j+1})‖ ≤ t_j + r_j + r_{j+1}   (4)
               lo ≤ A a_j + B b_i + C r_i ≤ hi   for i ∈ {j, j+1}   (`constraints`, canonical rows)  (5)

At the optimum t_j = 2Δθ_j/(√b_j + √b_{j+1}), the exact time of interval j when θ̈ is constant on it,
so (1) is the duration. (5) is enforced at *both* ends of every interval with that interval's a_j
("interpolation" scheme; "collocation" uses each point once with the following interval's a), so the
exact time law meets every limit at every grid point. Only the rows that can bind enter the problem
(`facets`: the edges of each point's feasible (a, b) polygon; the others are implied by them).
Between grid points the law is re-checked at sub-samples (`verify`); where a limit is exceeded by more
than `tol`, the offending intervals are split (or, with refine="tighten", the limit is lowered at their
ends) and the problem re-solved.

Default grid (`adaptive`): a first profile on 50 intervals (`reachability`, or a convex solve where that
does not apply), then 400 intervals placed where it loses time (`adapted_grid`). With θ̈ constant per interval the duration converges as O(1/N);
the adapted grid reaches ≤ 0.05 % of the converged duration on the benchmark paths (docs/planner.md).

The rows are affine in a few named scalars — the ten standard inertial parameters of the payload-carrying
body and the boundary speeds θ̇_start², θ̇_end² — and only these are cvxpy Parameters (DPP), so
re-planning with another payload or other boundary speeds skips cvxpy's compilation (`TimeOptimalPlanner`
keeps its compiled problems; `plan_time_optimal` keeps a few planners) as long as the rows that bind
with the new payload are in the compiled problem; otherwise it compiles once more with both sets
(`cover_payloads` declares payloads in advance). See docs/planner.md.
"""

from __future__ import annotations

import functools
import threading
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

import dynamics

from .constraints import (PAYLOAD_PARAMS, BoundaryVelocity, JointAccelerationLimit, JointTorqueLimit,
                          JointVelocityLimit, PathData, RowBlock, body_parameters)
from .errors import InfeasiblePathError, InputError
from .facets import row_masks
from .reachability import reachable_profile
from .path import JointPath, as_joint_path
from .trajectory import TimeLaw, TrajectorySample, joint_motion, sample_trajectory
from .verify import LimitCheck, SubSamples, check_time_law

DEFAULT_INTERVALS = 400            # final grid of the default adaptive grid; see docs/planner.md, "Grid"
COARSE_INTERVALS = 50              # first pass of the adaptive grid
DEFAULT_SUBSTEPS = 20
DEFAULT_TOL = 1e-3                 # allowed relative over-limit between grid points


class SolverError(RuntimeError):
    """No solver returned an accurate solution (and the problem was not shown infeasible)."""


# ====================================================================== the convex problem
_STATS = {"built": 0, "compiled": 0}
_STATS_LOCK = threading.Lock()


def problem_stats() -> dict:
    """How many `TimeOptimalProblem`s were built and how many cvxpy compilations happened (process-wide)."""
    with _STATS_LOCK:
        return dict(_STATS)


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


class TimeOptimalProblem:
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
        b, r, a, t = x[:P], x[P:2 * P], x[2 * P:2 * P + N], x[2 * P + N:]
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


@functools.lru_cache(maxsize=1)
def _installed_solvers() -> frozenset:
    return frozenset(cp.installed_solvers())         # cvxpy probes every solver on each call (~4 ms)


def _solver_chain(solver: str | None) -> list[tuple[str, dict]]:
    """The requested solver, then fallbacks that cvxpy has installed (Clarabel with other settings,
    ECOS, SCS). Clarabel's default primal feasibility tolerance (1e-8) is tighter than the problem's
    degenerate start/end (b = r = 0 on the cone boundary) allows; 1e-7 still gives durations to ~1e-8."""
    installed = _installed_solvers()
    chain = []
    first = (solver or "CLARABEL").upper()
    if first == "CLARABEL" and first in installed:
        # iterative refinement of the KKT solves roughly doubles the time per iteration and is not needed at
        # these tolerances (durations to ~1e-7); the fallback below keeps it for ill-conditioned problems
        chain.append(("CLARABEL", dict(tol_feas=1e-7, tol_gap_abs=1e-7, tol_gap_rel=1e-7,
                                       iterative_refinement_enable=False)))
    elif first in installed:
        chain.append((first, {}))
    else:
        raise InputError(f"solver: {first} is not available in cvxpy (installed: {', '.join(sorted(installed))})")
    if "CLARABEL" in installed:
        chain.append(("CLARABEL", dict(max_iter=500, tol_feas=1e-6, tol_gap_abs=1e-7, tol_gap_rel=1e-7,
                                       static_regularization_constant=1e-7, equilibrate_max_iter=50)))
    for name, opts in (("ECOS", dict(max_iters=500)), ("SCS", dict(eps_abs=1e-6, eps_rel=1e-6, max_iters=20_000))):
        if name in installed and name != first:
            chain.append((name, opts))
    return chain


# ====================================================================== grids
def default_grid(path: JointPath, intervals: int = DEFAULT_INTERVALS) -> np.ndarray:
    """Grid adapted to the path: half the points uniform in θ, half uniform in joint-space arc length
    (more points where the path moves fast), merged with the spline knots; `intervals` + 1 points."""
    s0, s1 = path.s_start, path.s_end
    fine = np.linspace(s0, s1, 4 * intervals + 1)
    speed = np.linalg.norm(path.dq(fine), axis=1)
    arc = np.concatenate(([0.0], np.cumsum(0.5 * (speed[1:] + speed[:-1]) * np.diff(fine))))
    # density ∝ 1 + |q′|/mean|q′|: a blend of uniform-θ and uniform-arc-length spacing
    w = arc / arc[-1] if arc[-1] > 0 else np.zeros_like(arc)
    u = (fine - s0) / (s1 - s0)
    cum = 0.5 * (u + w)
    grid = np.interp(np.linspace(0.0, 1.0, intervals + 1), cum, fine)
    grid[0], grid[-1] = s0, s1
    return grid


def adapted_grid(law: TimeLaw, intervals: int = DEFAULT_INTERVALS, uniform_share: float = 0.3) -> np.ndarray:
    """Grid refined where a coarse profile loses time (a posteriori, for the default grid).

    With θ̈ constant per interval and every limit met at both ends, an interval whose optimal θ̈ would vary
    (a torque- or acceleration-limited arc) loses O(Δθ) in θ̈, so the duration converges as O(1/N).
    The loss of interval j is estimated by the jumps of the coarse θ̈ at its ends per unit θ, weighted by
    the time spent per unit θ (1/θ̇); grid density ∝ uniform_share + (1 − uniform_share) × that estimate
    (equidistributed). Falls back to the coarse grid's spacing where nothing varies."""
    th = law.theta
    dth = np.diff(th)
    N0 = dth.size
    jump = np.abs(np.diff(law.a))
    ind = np.zeros(N0)
    if N0 > 1:
        ind[1:] = np.maximum(ind[1:], jump)
        ind[:-1] = np.maximum(ind[:-1], jump)
    sd_mid = 0.5 * (law.sd_grid[1:] + law.sd_grid[:-1])
    w = 1.0 / np.maximum(sd_mid, 1e-3 * max(sd_mid.max(), 1e-12))
    dens = ind / dth * w
    total = float(np.sum(dens * dth))
    if not np.isfinite(total) or total <= 0:
        dens = np.ones(N0)
    else:
        dens = dens * (th[-1] - th[0]) / total
    dens = uniform_share + (1.0 - uniform_share) * dens
    cum = np.concatenate(([0.0], np.cumsum(dens * dth)))
    grid = np.interp(np.linspace(0.0, cum[-1], intervals + 1), cum, th)
    grid[0], grid[-1] = th[0], th[-1]
    return grid


def make_grid(path: JointPath, grid) -> np.ndarray:
    if grid is None or (isinstance(grid, str) and grid == "adaptive"):
        return default_grid(path, COARSE_INTERVALS)
    if isinstance(grid, str):
        raise InputError(f"grid: expected 'adaptive', a number of intervals or grid points, got {grid!r}")
    if np.isscalar(grid) and float(grid) == int(grid):
        k = int(grid)
        if k < 2:
            raise InputError(f"grid: need at least 2 intervals, got {k}")
        return default_grid(path, k)
    try:
        g = np.array(grid, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError("grid: expected a number of intervals or an increasing array of path parameters") from None
    if g.size < 3 or not np.isfinite(g).all() or (np.diff(g) <= 0).any():
        raise InputError("grid: expected at least 3 finite, strictly increasing path parameters")
    tol = 1e-9 * max(1.0, path.length)
    if abs(g[0] - path.s_start) > tol or abs(g[-1] - path.s_end) > tol:
        raise InputError(f"grid: must start at {path.s_start:g} and end at {path.s_end:g} (the path's parameter "
                         f"interval), got [{g[0]:g}, {g[-1]:g}]")
    g[0], g[-1] = path.s_start, path.s_end
    return g


# ====================================================================== results
@dataclass
class TimeOptimalPlan:
    """A planned motion: the speed profile on the grid, its exact time law and diagnostics."""
    robot: object                 # the robot the plan is for (payload merged)
    path: JointPath
    law: TimeLaw
    check: LimitCheck             # limits re-checked between grid points
    torques: np.ndarray           # (P, n) joint torques at the grid points (rigid body + friction)
    status: str
    solver: str
    timings: dict                 # seconds: coefficients, compile, solve, verify, total
    iterations: int               # number of convex solves
    reused_problem: bool          # the compiled cvxpy problem came from the cache
    planner: "TimeOptimalPlanner" = field(repr=False, default=None)
    payload: object = None
    sd_start: float = 0.0
    sd_end: float = 0.0
    refinements: list = field(default_factory=list)
    energy_weight: float = 0.0    # weight of the energy term in the objective (0: time-optimal)
    energy_R: np.ndarray = None   # (n,) diagonal of R in ∫ τᵀRτ dt
    rate_check: dict = None       # {"torque_rate"|"jerk": Worst} on the 1 ms samples (rate limits only)
    rate_info: dict = None        # rate-limit iterations, plain time-optimal duration, ...
    _energy: float = field(default=None, repr=False)

    @property
    def energy(self) -> float:
        """∫ τᵀRτ dt (R = diag(energy_R)) on the executed 1 ms samples, τ = RNEA + friction (`objectives`)."""
        if self._energy is None:
            from .objectives import energy_integral
            self._energy = energy_integral(self.robot, self.sample(1e-3), self.energy_R)
        return self._energy

    # grid quantities ----------------------------------------------------------------
    @property
    def duration(self) -> float:
        return self.law.duration

    @property
    def s(self) -> np.ndarray:
        """Grid points θ_i."""
        return self.law.theta

    @property
    def sd(self) -> np.ndarray:
        """θ̇ at the grid points."""
        return self.law.sd_grid

    @property
    def sdd(self) -> np.ndarray:
        """θ̈ at the grid points (constant per interval: the following interval's, the last at the end)."""
        return self.law.sdd_grid

    @property
    def t(self) -> np.ndarray:
        """Time at the grid points."""
        return self.law.t

    @property
    def grid(self) -> np.ndarray:
        return self.law.theta

    @property
    def worst(self) -> dict:
        """{kind: Worst} – largest |value|/limit between grid points per kind of limit."""
        return self.check.worst

    @property
    def worst_ratio(self) -> float:
        return self.check.worst_ratio

    @property
    def solve_time(self) -> float:
        return self.timings["solve"]

    def sample(self, dt: float = 1e-3) -> TrajectorySample:
        """t, q, q̇, q̈, τ (and θ, θ̇, θ̈) at controller rate from the exact time law."""
        return sample_trajectory(self.robot, self.path, self.law, dt)

    def replan(self, payload=None, sd_start=None, sd_end=None) -> "TimeOptimalPlan":
        """Plan again on the same path and grid with another payload (reuses the compiled problem)."""
        return self.planner.plan(payload=payload,
                                 sd_start=self.sd_start if sd_start is None else sd_start,
                                 sd_end=self.sd_end if sd_end is None else sd_end)

    def summary(self) -> dict:
        names = list(self.robot.joint_names)
        return dict(
            robot=self.robot.name, dof=self.robot.n, duration=self.duration, grid_points=int(self.s.size),
            sd_start=self.sd_start, sd_end=self.sd_end,
            payload_mass=None if self.payload is None else float(self.payload.mass),
            solver=self.solver, status=self.status, iterations=self.iterations,
            reused_compiled_problem=self.reused_problem, timings=dict(self.timings),
            worst_ratio=self.worst_ratio, worst={k: w.as_dict(names) for k, w in self.worst.items()},
            refinements=list(self.refinements),
            **(dict(energy_weight=self.energy_weight, energy=self.energy) if self.energy_weight > 0 else {}),
        )


# ====================================================================== the planner
class TimeOptimalPlanner:
    """Plans on one path and grid; `plan(payload=..., sd_start=..., sd_end=...)` can be called repeatedly
    and only the first call compiles the convex problem (payload and boundary speeds are Parameters).

    Options: `grid` – None (`DEFAULT_INTERVALS` intervals adapted to the path), a number of intervals, or
    the grid points; `scheme` – "interpolation" (limits at both ends of every interval, default) or
    "collocation"; `substeps` – sub-samples per interval for the between-grid check; `tol` – allowed
    relative over-limit there; `refine` – "split" (halve offending intervals, at most `max_splits` times,
    then tighten; default) or "tighten" (lower the limit at the ends of offending intervals);
    `max_rounds` – refinement rounds in all; `solver` – cvxpy solver name (Clarabel default;
    fallbacks are tried automatically); `payload_frame` – frame the payload is given in (default the
    tool frame); `payload_params` – keep the payload as Parameters (cheap re-planning; default True);
    `allow_overload` – accept payloads above the robot's rating; `energy_weight` (default 0: time-optimal)
    and `energy_R` – minimise duration + energy_weight × ∫ τᵀ diag(energy_R) τ dt instead (Verscheure et
    al. 2009; default energy_R = 1/τ_max², see `objectives`); `torque_rate_max`, `jerk_max` (a number or one
    per joint) – torque-rate and jerk limits on the trajectory sampled every `rate_dt` (1 ms), by a sequential
    convex scheme of at most `max_rate_iterations` solves (`rate_limits`).
    """

    def __init__(self, robot, path, grid=None, *, scheme: str = "interpolation", substeps: int = DEFAULT_SUBSTEPS,
                 tol: float = DEFAULT_TOL, refine: str = "split", max_rounds: int = 12, max_splits: int = 3,
                 solver: str = "CLARABEL",
                 check_position_limits: bool = True, limits=None, payload_frame: str | None = None,
                 payload_params: bool = True, max_viscous_iterations: int = 8, allow_overload: bool = False,
                 tool_speed_max: float | None = None, collision_energy_max: float | None = None,
                 cartesian_frame: str | None = None, contact_mass: float | None = None,
                 energy_weight: float = 0.0, energy_R=None, torque_rate_max=None, jerk_max=None,
                 rate_dt: float = 1e-3, max_rate_iterations: int = 40, prune: bool = True):
        path = as_joint_path(path)
        if path.dof != robot.n:
            raise InputError(f"waypoints: path has {path.dof} joint values per waypoint but robot '{robot.name}' "
                             f"has {robot.n} joints")
        if refine not in ("tighten", "split"):
            raise InputError(f"refine: expected 'tighten' or 'split', got {refine!r}")
        if scheme not in ("interpolation", "collocation"):
            raise InputError(f"scheme: expected 'interpolation' or 'collocation', got {scheme!r}")
        if int(substeps) < 1:
            raise InputError(f"substeps: must be >= 1, got {substeps}")
        if not (np.isfinite(tol) and tol >= 0):
            raise InputError(f"tol: must be a number >= 0, got {tol}")
        _solver_chain(solver)                                 # validates the solver name
        self.robot, self.path = robot, path
        self.scheme, self.substeps, self.tol, self.refine = scheme, int(substeps), float(tol), refine
        self.max_rounds, self.max_splits, self.solver = int(max_rounds), int(max_splits), solver
        self.max_viscous_iterations = int(max_viscous_iterations)
        self.prune = bool(prune)
        self.payload_frame = payload_frame
        self.allow_overload = bool(allow_overload)
        self.limits = list(limits) if limits is not None else [JointTorqueLimit(), JointVelocityLimit(),
                                                                JointAccelerationLimit()]
        from .cartesian_limits import cartesian_limits          # tool speed / collision energy (optional)
        self.limits += cartesian_limits(robot, tool_speed_max, collision_energy_max, cartesian_frame, contact_mass)
        if limits is None and len(self.limits) == 3 and not any(
                np.isfinite(getattr(robot, k)).any() for k in ("tau_max", "qd_max", "qdd_max")):
            raise InputError(f"robot '{robot.name}' has no joint torque, velocity or acceleration limit (all inf), so "
                             f"nothing bounds the path speed and the minimum time is 0; set limits with "
                             f"robot.with_limits(tau_max=..., qd_max=..., qdd_max=...)")
        if any(getattr(lim, "needs_merged_payload", False) for lim in self.limits):
            payload_params = False                              # rows not affine in the payload parameters
        from .objectives import energy_weights                  # time–energy objective (optional)
        self.energy_weight, self.energy_R = energy_weights(robot, energy_weight, energy_R)
        if self.energy_weight > 0:
            payload_params = False                              # the energy term uses the merged model's m̃ c̃ d̃
        self.payload_body = robot.frame(payload_frame)[0] if payload_params else None
        from .rate_limits import RateLimits                      # torque-rate / jerk limits (optional)
        self.rates = RateLimits(robot, torque_rate_max, jerk_max, rate_dt) if (
            torque_rate_max is not None or jerk_max is not None) else None
        if int(max_rate_iterations) < 1:
            raise InputError(f"max_rate_iterations: must be >= 1, got {max_rate_iterations}")
        self.max_rate_iterations = int(max_rate_iterations)
        self._problems: "OrderedDict[tuple, TimeOptimalProblem]" = OrderedDict()
        self._cover: list[dict] = []                            # payload values compiled problems cover
        self._grid_version = 0
        self._token = 0
        self._last_b = None
        self.adaptive = grid is None or (isinstance(grid, str) and grid == "adaptive")
        self.intervals = DEFAULT_INTERVALS
        self._set_grid(make_grid(path, grid))
        if check_position_limits:
            self._check_positions()

    # ------------------------------------------------------------------ grid and data
    def _set_grid(self, theta: np.ndarray) -> None:
        self.theta = np.asarray(theta, dtype=float)
        S = self.path.evaluate(self.theta)
        self.samples = S
        self.sub = SubSamples.build(self.path, self.theta, self.substeps)
        self._data = PathData(self.robot, self.theta, S.q, S.dq, S.ddq, self.payload_body)
        self._grid_version += 1

    @property
    def grid(self) -> np.ndarray:
        return self.theta

    def _check_positions(self) -> None:
        robot = self.robot
        q = self.sub.q
        th = self.sub.theta.reshape(-1)
        span = np.where(np.isfinite(robot.q_max - robot.q_min), robot.q_max - robot.q_min, 1.0)
        slack = 1e-6 * span
        over = (q > robot.q_max + slack) | (q < robot.q_min - slack)
        if over.any():
            i, k = np.argwhere(over)[0]
            lim = robot.q_max[k] if q[i, k] > robot.q_max[k] else robot.q_min[k]
            raise InfeasiblePathError(
                f"path leaves the position range of joint {robot.joint_names[k]} (#{k}) at θ = {th[i]:.6g}: "
                f"q = {q[i, k]:.6g} rad, limit {lim:.6g} rad (a waypoint is out of range or the spline "
                f"overshoots between waypoints)")

    def payload_values(self, payload) -> tuple[object, dict]:
        """The robot with `payload` merged, and the Parameter values (Δπ of the carrying body)."""
        if payload is None:
            return self.robot, {}
        kwargs = {"allow_overload": True} if self.allow_overload else {}
        robot_p = self.robot.with_payload(payload, frame=self.payload_frame, **kwargs)
        if self.payload_body is None:
            return robot_p, {}
        k = self.payload_body
        delta = body_parameters(robot_p, k) - body_parameters(self.robot, k)
        return robot_p, dict(zip(PAYLOAD_PARAMS, delta))

    # ------------------------------------------------------------------ diagnosis
    def _diagnose(self, robot, data: PathData, values: dict, sd_start: float, sd_end: float) -> None:
        k_lim = np.isfinite(robot.tau_max)
        if k_lim.any() and any(isinstance(l, JointTorqueLimit) for l in self.limits):
            d = data.coefficients.d                 # gravity + Coulomb friction (d̃), with the payload's share:
            if data.payload_body is not None:
                d = d + sum(values.get(name, 0.0) * basis.d for name, basis in zip(PAYLOAD_PARAMS, data.payload_basis))
            over = (np.abs(d) > robot.tau_max) & k_lim
            if over.any():
                i = int(np.nonzero(over)[0][0])
                ks = np.flatnonzero(over[i])
                k = int(ks[np.argmax(np.abs(d[i, ks]) / robot.tau_max[ks])])
                on_k = np.flatnonzero(over[:, k])
                raise InfeasiblePathError(
                    f"gravity alone exceeds the torque limit of joint {robot.joint_names[k]} (#{k}) at θ = "
                    f"{data.theta[i]:.6g} (grid index {i} of {data.size - 1}): |d̃| = {abs(d[i, k]):.6g} N·m > "
                    f"tau_max = {robot.tau_max[k]:.6g} N·m; the robot cannot hold the path there "
                    f"({on_k.size} grid points, θ ∈ [{data.theta[on_k[0]]:.6g}, {data.theta[on_k[-1]]:.6g}])")
        for name, i, sd in (("sd_start", 0, sd_start), ("sd_end", data.size - 1, sd_end)):
            if sd == 0:
                continue
            qd = data.dq[i] * sd
            ratio = np.abs(qd) / robot.qd_max
            if (ratio > 1 + 1e-9).any():
                k = int(np.argmax(ratio))
                raise InfeasiblePathError(
                    f"{name} = {sd:.6g} is too fast at θ = {data.theta[i]:.6g} (grid index {i}): joint "
                    f"{robot.joint_names[k]} (#{k}) would move at {abs(qd[k]):.6g} > qd_max = {robot.qd_max[k]:.6g}")
            self._check_point(robot, data, values, i, sd * sd, name)

    def _check_point(self, robot, data: PathData, values: dict, i: int, b: float, name: str) -> None:
        """Is there any θ̈ meeting every row at grid point i with θ̇² = b fixed?"""
        blocks = [blk.at(values) for blk in self._blocks(data, None, np.full(data.size, max(b, 1e-12)))]
        lo_a, hi_a, why_lo, why_hi = -np.inf, np.inf, None, None
        for blk in blocks:
            if blk.points is not None and not blk.points[i]:
                continue
            for r in range(blk.size):
                A, rest = blk.A[i, r], blk.B[i, r] * b + blk.C[i, r] * np.sqrt(b)
                sides = (("hi", True),) if blk.equality else (("hi", blk.has_hi[r]), ("lo", blk.has_lo[r]))
                for side, has in sides:
                    if not has:
                        continue
                    bound = (blk.hi if side == "hi" else blk.lo)[i, r] - rest
                    if abs(A) < 1e-12:
                        if (side == "hi" and bound < -1e-9) or (side == "lo" and bound > 1e-9):
                            self._raise_point(robot, data, i, name, blk, r, b)
                        continue
                    v = bound / A
                    upper = (side == "hi") == (A > 0)
                    if upper and v < hi_a:
                        hi_a, why_hi = v, (blk, r)
                    if not upper and v > lo_a:
                        lo_a, why_lo = v, (blk, r)
        if lo_a > hi_a + 1e-9 * max(1.0, abs(lo_a)):
            self._raise_point(robot, data, i, name, *why_hi, b, other=why_lo)

    @staticmethod
    def _raise_point(robot, data, i, name, blk, r, b, other=None):
        def label(bl, rr):
            k = int(bl.joints[rr])
            return f"{bl.kind} limit" + (f" of joint {robot.joint_names[k]} (#{k})" if k >= 0 else "")
        msg = (f"{name} = {np.sqrt(b):.6g} cannot be met at θ = {data.theta[i]:.6g} (grid index {i}): "
               f"no path acceleration satisfies the {label(blk, r)}")
        if other is not None and (other[0] is not blk or other[1] != r):
            msg += f" together with the {label(*other)}"
        raise InfeasiblePathError(msg)

    # ------------------------------------------------------------------ planning
    def _blocks(self, data, scales, b_ref):
        limits = self.limits + [BoundaryVelocity()]
        return [blk for blk in (l.rows(data, b_ref=b_ref, scales=scales) for l in limits) if blk is not None]

    def cover_payloads(self, payloads) -> None:
        """Payloads that later `plan` calls will use: problems compiled from now on also hold the rows that
        bind with each of them (`facets`), so re-planning with any of them skips compilation."""
        self._cover = [self.payload_values(p)[1] for p in payloads if p is not None]

    def _masks(self, blocks, values=None):
        """The rows that can bind (`facets.row_masks`), or None (all rows) when pruning is off."""
        return row_masks([blk.at(values) for blk in blocks]) if self.prune else None

    def _energy(self, data: PathData) -> dict | None:
        """The energy term's coefficients (× √R) for `TimeOptimalProblem`, None when energy_weight = 0."""
        if self.energy_weight <= 0:
            return None
        co, w = data.coefficients, np.sqrt(self.energy_R)
        return dict(weight=self.energy_weight, m=co.m * w, c=co.c * w, d=co.d * w,
                    v=data.robot.viscous * data.dq * w)

    def _problem(self, key, blocks, energy=None, values=None) -> tuple[TimeOptimalProblem, bool]:
        """The compiled problem for `key` if it holds every row that can bind with these parameter
        `values` (`facets`); otherwise a new one (see below)."""
        masks = self._masks(blocks, values)
        prob = self._problems.get(key)
        if prob is not None:
            if masks is None or _covers(prob.masks, masks):
                self._problems.move_to_end(key)
                return prob, True
            # another payload needs rows the compiled problem lacks: compile once more with the rows of both
            # (the set only grows; `cover_payloads` avoids this when the payloads are known in advance)
            masks = _union(prob.masks, masks)
        if masks is not None:
            for extra in self._cover:
                masks = _union(masks, self._masks(blocks, {**values, **extra}))
        prob = TimeOptimalProblem(self.theta, blocks, self.scheme, energy=energy, masks=masks)

        self._problems[key] = prob
        while len(self._problems) > 4:
            self._problems.popitem(last=False)
        return prob, False

    def plan(self, payload=None, sd_start: float = 0.0, sd_end: float = 0.0) -> TimeOptimalPlan:
        """Plan (rest-to-rest unless sd_start/sd_end, the path speeds θ̇ at the ends, are given)."""
        t_all = time.perf_counter()
        sd = []
        for name, v in (("sd_start", sd_start), ("sd_end", sd_end)):
            try:
                v = float(v)
            except (TypeError, ValueError):
                raise InputError(f"{name}: expected a number, got {v!r}") from None
            if not (np.isfinite(v) and v >= 0):
                raise InputError(f"{name}: must be a finite number >= 0, got {v}")
            sd.append(v)
        sd_start, sd_end = sd
        timings = dict(coefficients=0.0, build=0.0, compile=0.0, solve=0.0, verify=0.0)
        t0 = time.perf_counter()
        robot_p, values = self.payload_values(payload)
        values.update(BoundaryVelocity(sd_start, sd_end).values())
        const_payload = payload is not None and self.payload_body is None
        if self.adaptive:
            self._adapt(robot_p, values, payload, const_payload, sd_start, sd_end, timings)
        has_viscous = bool((robot_p.viscous[np.isfinite(robot_p.tau_max)] > 0).any())
        refinements, iterations, reused_first = [], 0, None
        scales = b_ref = law = check = status = solver_used = None
        prev_duration = None
        n_viscous = 0
        data = None
        for rnd in range(self.max_rounds + self.max_viscous_iterations + 1):
            if data is None or data.theta is not self.theta:
                t0 = time.perf_counter()
                data = self._data if not const_payload else PathData(robot_p, self.theta, self.samples.q,
                                                                      self.samples.dq, self.samples.ddq, None)
                _ = data.coefficients
                if data.payload_body is not None:
                    _ = data.payload_basis
                timings["coefficients"] += time.perf_counter() - t0
                if rnd == 0:
                    self._diagnose(robot_p, data, values, sd_start, sd_end)
                if has_viscous:
                    if law is not None:
                        b_ref = np.interp(self.theta, law.theta, law.b)
                    elif self._last_b is not None:
                        b_ref = np.interp(self.theta, *self._last_b)
                    else:
                        vel = JointVelocityLimit().b_max(data)
                        b_ref = np.where(np.isfinite(vel), vel, 1.0)
                    b_ref = np.maximum(b_ref, 1e-6 * max(b_ref.max(), 1e-12))
            t0 = time.perf_counter()
            blocks = self._blocks(data, scales, b_ref)
            base = scales is None and b_ref is None
            self._token += 1          # problems with tightened limits / viscous tangents / constant payloads
            key = (self._grid_version, "base" if base and not const_payload else self._token)   # are not shared
            problem, reused = self._problem(key, blocks, self._energy(data), values)
            timings["build"] += time.perf_counter() - t0
            reused_first = reused if reused_first is None else reused_first
            if np.isfinite(robot_p.tau_max).any():
                self.sub.prefetch(robot_p)          # forward kinematics of the between-grid check, during the solve
            status, b, solver_used, wall, compile_s = self._solve(problem, values)
            iterations += 1
            b = np.maximum(b, 0.0)
            b[0], b[-1] = values["b_start"], values["b_end"]        # exact boundary speeds (solver tol ~1e-8)
            timings["solve"] += wall - compile_s
            timings["compile"] += compile_s
            law = TimeLaw(self.theta, b)
            t0 = time.perf_counter()
            check = check_time_law(robot_p, self.sub, law.b)
            for lim in self.limits:                 # limits that check themselves (e.g. cartesian_limits)
                if hasattr(lim, "check_time_law"):
                    lim.check_time_law(robot_p, self.sub, law.b, check)
            timings["verify"] += time.perf_counter() - t0
            duration = law.duration
            over = {kind: check.ratios[kind] > 1.0 + self.tol for kind in check.ratios}
            n_over = int(sum(o.sum() for o in over.values()))
            viscous_moving = has_viscous and (prev_duration is None or abs(prev_duration - duration) > 1e-6 * duration)
            prev_duration = duration
            if has_viscous and viscous_moving and n_viscous < self.max_viscous_iterations:
                n_viscous += 1
                b_ref = np.maximum(law.b, 1e-6 * max(law.b.max(), 1e-12))       # tangent at the new solution
                if n_over == 0:
                    continue
            if n_over == 0 or len(refinements) >= self.max_rounds:
                break
            if self.refine == "split" and sum(r["action"] == "split" for r in refinements) < self.max_splits:
                bad = np.zeros(self.theta.size - 1, bool)
                for o in over.values():
                    bad |= o.any(axis=1)
                mids = 0.5 * (self.theta[:-1] + self.theta[1:])[bad]
                refinements.append(dict(action="split", intervals=int(bad.sum()), worst_ratio=check.worst_ratio))
                self._set_grid(np.sort(np.concatenate([self.theta, mids])))
                if scales is not None:
                    scales = None
            else:
                scales = {kind: np.ones((self.theta.size, robot_p.n)) for kind in over} if scales is None else \
                    {kind: v.copy() for kind, v in scales.items()}
                for kind in over:
                    js, ks = np.nonzero(over[kind])
                    if js.size == 0:
                        continue
                    excess = check.ratios[kind][js, ks] - 1.0
                    f = np.clip(1.0 - 1.2 * excess - 0.2 * self.tol, 0.5, 1.0)
                    for end in (js, js + 1):
                        np.minimum.at(scales[kind], (end, ks), scales[kind][end, ks] * f)
                refinements.append(dict(action="tighten", points=n_over, worst_ratio=check.worst_ratio))
        rate_check = rate_info = None
        if self.rates is not None:
            law, check, status, solver_used, rate_check, rate_info = self._rate_loop(
                robot_p, data, values, law, check, scales, has_viscous, sd_start, sd_end, timings)
            iterations += rate_info["solves"]
        if check.worst_ratio > 1.0 + self.tol:
            w = max(check.worst.values(), key=lambda x: x.ratio)
            which = f" of joint {robot_p.joint_names[w.joint]}" if w.joint >= 0 else ""
            warnings.warn(f"the plan still exceeds the {w.kind} limit{which} by "
                          f"{100 * (w.ratio - 1):.3f} % at θ = {w.theta:.6g} after {len(refinements)} refinements "
                          f"(tol {100 * self.tol:g} %); use a finer grid", RuntimeWarning, stacklevel=2)
        self._last_b = (law.theta.copy(), law.b.copy())
        torques = check.grid_torques            # the between-grid check's sub-samples include the grid points
        if torques is None:
            t0 = time.perf_counter()
            torques = joint_motion(robot_p, self.path, law.theta, law.sd_grid, law.sdd_grid, law.t).tau
            timings["verify"] += time.perf_counter() - t0
        timings["total"] = time.perf_counter() - t_all
        return TimeOptimalPlan(robot=robot_p, path=self.path, law=law, check=check, torques=torques,
                               status=status, solver=solver_used, timings=timings, iterations=iterations,
                               reused_problem=bool(reused_first), planner=self, payload=payload,
                               sd_start=sd_start, sd_end=sd_end, refinements=refinements,
                               energy_weight=self.energy_weight, energy_R=self.energy_R,
                               rate_check=rate_check, rate_info=rate_info)

    def _rate_loop(self, robot_p, data, values, law, check, scales, has_viscous, sd_start, sd_end, timings):
        """Torque-rate / jerk limits (`rate_limits`): starting from the time-optimal `law`, re-solve with the
        rate rows linearised around the last solution, check the Δt_c samples and the usual limits, and
        tighten where exceeded, until nothing exceeds `tol` and the duration stops moving."""
        from .rate_limits import RateLimits
        rates = self.rates
        rates.check_path(robot_p, self.path, self.theta)
        t0 = time.perf_counter()
        coeffs = rates.coefficients(robot_p, self.path, self.theta)
        timings["coefficients"] += time.perf_counter() - t0
        rest_start, rest_end = sd_start == 0, sd_end == 0
        P, n = self.theta.size, robot_p.n
        rscales = {kind: np.ones((P, n)) for kind in rates.limits}
        plain = law.duration
        prev, solves, tightened = None, 0, 0
        status = solver_used = None
        history = []
        for it in range(self.max_rate_iterations):
            t0 = time.perf_counter()
            b_ref = np.maximum(law.b, 0.0)
            blocks = self._blocks(data, scales, np.maximum(b_ref, 1e-6 * max(b_ref.max(), 1e-12))
                                  if has_viscous else None)
            G, lo, hi = rates.rows(coeffs, self.theta, b_ref, rscales, 2 * P + 2 * (P - 1), rest_start, rest_end)
            problem = TimeOptimalProblem(self.theta, blocks, self.scheme, energy=self._energy(data),
                                         extra_rows=(G, lo, hi), masks=self._masks(blocks, values))
            timings["build"] += time.perf_counter() - t0
            status, b, solver_used, wall, compile_s = self._solve(problem, values)
            solves += 1
            timings["solve"] += wall - compile_s
            timings["compile"] += compile_s
            b = np.maximum(b, 0.0)
            b[0], b[-1] = values["b_start"], values["b_end"]
            law = TimeLaw(self.theta, b)
            t0 = time.perf_counter()
            check = check_time_law(robot_p, self.sub, law.b)
            for lim in self.limits:
                if hasattr(lim, "check_time_law"):
                    lim.check_time_law(robot_p, self.sub, law.b, check)
            sample = sample_trajectory(robot_p, self.path, law, rates.dt_c)
            checked = rates.check_samples(robot_p, sample, rest_start, rest_end)
            timings["verify"] += time.perf_counter() - t0
            over = {kind: check.ratios[kind] > 1.0 + self.tol for kind in check.ratios}
            n_over = int(sum(o.sum() for o in over.values()))
            worst_rate = max(c[3].ratio for c in checked.values())
            history.append(dict(duration=law.duration, worst_rate_ratio=worst_rate, worst_ratio=check.worst_ratio))
            moving = prev is None or abs(prev - law.duration) > 1e-4 * law.duration
            prev = law.duration
            n_rate = RateLimits.tighten(rscales, checked, self.theta, self.tol)
            if n_over:
                scales = self._tighten_scales(scales, over, check, robot_p.n)
            tightened += bool(n_rate or n_over)
            if not n_rate and not n_over and not moving:
                break
        rate_check = {kind: c[3] for kind, c in checked.items()}
        worst = max(rate_check.values(), key=lambda w: w.ratio)
        if worst.ratio > 1.0 + self.tol:
            warnings.warn(f"the plan still exceeds the {worst.kind} limit of joint {robot_p.joint_names[worst.joint]} "
                          f"by {100 * (worst.ratio - 1):.3f} % at t = {worst.theta:.6g} s on the {1e3 * rates.dt_c:g} ms "
                          f"samples after {solves} rate-limit solves (tol {100 * self.tol:g} %); raise "
                          f"max_rate_iterations or use a finer grid", RuntimeWarning, stacklevel=3)
        info = dict(solves=solves, tightened=tightened, plain_duration=plain, history=history)
        return law, check, status, solver_used, rate_check, info

    def _tighten_scales(self, scales, over, check, n):
        """Lower the limits at the ends of the offending intervals by their excess (refine="tighten")."""
        P = self.theta.size
        scales = {kind: np.ones((P, n)) for kind in over} if scales is None else \
            {kind: v.copy() for kind, v in scales.items()}
        for kind in over:
            scales.setdefault(kind, np.ones((P, n)))
            js, ks = np.nonzero(over[kind])
            if js.size == 0:
                continue
            excess = check.ratios[kind][js, ks] - 1.0
            f = np.clip(1.0 - 1.2 * excess - 0.2 * self.tol, 0.5, 1.0)
            for end in (js, js + 1):
                np.minimum.at(scales[kind], (end, ks), scales[kind][end, ks] * f)
        return scales

    def _adapt(self, robot_p, values, payload, const_payload, sd_start, sd_end, timings) -> None:
        """First plan of an adaptive planner: solve on the coarse grid, then move to `adapted_grid`."""
        t0 = time.perf_counter()
        S = self.samples
        # the coarse problem is solved once: payload and boundary speeds are baked in as constants (a
        # problem without Parameters compiles several times faster, and needs no payload basis)
        data = PathData(robot_p, self.theta, S.q, S.dq, S.ddq, None)
        self._diagnose(robot_p, data, values, sd_start, sd_end)
        b_ref = None
        if (robot_p.viscous[np.isfinite(robot_p.tau_max)] > 0).any():
            vel = JointVelocityLimit().b_max(data)
            b_ref = np.where(np.isfinite(vel), vel, 1.0)
        blocks = [blk.at(values) for blk in self._blocks(data, None, b_ref)]
        timings["coefficients"] += time.perf_counter() - t0
        self.coarse_law = None
        if self.energy_weight <= 0:                     # time-optimal: a reachability estimate is enough
            t0 = time.perf_counter()
            b = reachable_profile(blocks, self.theta, values["b_start"], values["b_end"])
            if b is not None and np.isfinite(b).all():
                try:
                    self.coarse_law = TimeLaw(self.theta, b)
                except ValueError:                      # stops inside the path: leave it to the solver
                    pass
            timings["solve"] += time.perf_counter() - t0
        if self.coarse_law is None:
            problem = TimeOptimalProblem(self.theta, blocks, self.scheme, energy=self._energy(data),
                                         masks=self._masks(blocks))
            status, b, solver, wall, compile_s = self._solve(problem, values)
            timings["solve"] += wall - compile_s
            timings["compile"] += compile_s
            self.coarse_law = TimeLaw(self.theta, b)
        self._set_grid(adapted_grid(self.coarse_law, self.intervals))
        self.adaptive = False

    def _solve(self, problem: TimeOptimalProblem, values: dict):
        """Solve with the solver chain: the first accurate solution wins; an inaccurate one is kept
        and used only if no later solver is accurate (slow first-order solvers are skipped then)."""
        failures, candidate = [], None
        total_compile = 0.0
        for solver, options in _solver_chain(self.solver):
            if candidate is not None and solver not in ("CLARABEL", "ECOS"):
                break
            try:
                status, b, wall, compile_s = problem.solve(values, solver=solver, **options)
            except cp.error.SolverError as exc:
                failures.append(f"{solver}: {exc}")
                continue
            total_compile += compile_s
            ok = b is not None and np.isfinite(b).all()
            if status == cp.OPTIMAL and ok:
                return status, b, solver, wall, total_compile
            if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE) and not failures:
                self._raise_infeasible(status)
            failures.append(f"{solver}: {status}")
            if status == cp.OPTIMAL_INACCURATE and ok and candidate is None:
                candidate = (status, b, solver, wall, total_compile)
        if candidate is not None:
            warnings.warn(f"time-optimal problem solved only inaccurately ({'; '.join(failures)}); "
                          f"the between-grid check still applies", RuntimeWarning, stacklevel=3)
            return candidate
        raise SolverError(f"the time-optimal problem could not be solved ({'; '.join(failures)}); "
                          f"try another grid (grid=...) or solver (solver=...)")

    def _raise_infeasible(self, status: str):
        raise InfeasiblePathError(
            f"no speed profile satisfies the limits along the path (solver status: {status}). Every grid point "
            f"can be held at rest, so the boundary speeds (sd_start, sd_end) cannot be reached or left within "
            f"the limits on the {self.theta.size - 1}-interval grid")


def _covers(have, need) -> bool:
    """Do the row masks `have` include every row of `need`?"""
    return all(n is None or h is None or not any((n[side] & ~h[side]).any() for side in ("hi", "lo"))
               for h, n in zip(have, need))


def _union(a, b) -> list:
    return [None if x is None or y is None else {side: x[side] | y[side] for side in ("hi", "lo")}
            for x, y in zip(a, b)]


_PLANNERS: "OrderedDict[tuple, TimeOptimalPlanner]" = OrderedDict()
_PLANNERS_LOCK = threading.Lock()


def _grid_key(grid):
    if grid is None or np.isscalar(grid):
        return grid
    g = np.asarray(grid, dtype=float)
    return (g.size, g.tobytes())


def plan_time_optimal(robot, path, grid=None, payload=None, sd_start: float = 0.0, sd_end: float = 0.0,
                      **options) -> TimeOptimalPlan:
    """Minimum-time speed profile along `path` (a `JointPath`, a scipy spline or an (m, n) waypoint array)
    for `robot` with `payload` merged (`robot.with_payload`), rest-to-rest unless sd_start/sd_end (θ̇ at
    the ends) are given. Options as for `TimeOptimalPlanner`.

    The planner for (robot, path, grid, options) is kept (a few, most recent first), so calling again with
    the same robot and path objects but another payload or boundary speeds re-solves without compiling.
    Raises `InfeasiblePathError` (where and which limit) when the path cannot be traversed, `InputError`
    for bad inputs."""
    key = None
    if isinstance(path, JointPath):
        key = (id(robot), id(path), _grid_key(grid), tuple(sorted((k, repr(v)) for k, v in options.items())))
    planner = None
    if key is not None:
        with _PLANNERS_LOCK:
            cached = _PLANNERS.get(key)
            if cached is not None and cached.robot is robot and cached.path is path:
                planner = cached
                _PLANNERS.move_to_end(key)
    if planner is None:
        planner = TimeOptimalPlanner(robot, path, grid, **options)
        if key is not None:
            with _PLANNERS_LOCK:
                _PLANNERS[key] = planner
                while len(_PLANNERS) > 4:
                    _PLANNERS.popitem(last=False)
    return planner.plan(payload=payload, sd_start=sd_start, sd_end=sd_end)
