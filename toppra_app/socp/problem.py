"""The time-optimal second-order cone program on one grid *structure*, compiled once per process.

Variables, all dimensionless (`stations` scales the path parameter to σ ∈ [0, 1] and the squared speed
by a reference B̄): β_i = σ̇²(σ_i)/B̄ at the P = N + 1 grid points, r_i ≤ √β_i and one time variable t_j per
interval (Verscheure et al. 2009; Lipp & Boyd 2014; Safeea et al. 2019 eq. 5 for the torques):

    minimise   Σ_j t_j                                                                         (1)
    subject to t_j (r_j + r_{j+1}) ≥ 2Δσ_j   ⇔  ‖(2√(2Δσ_j), t_j − r_j − r_{j+1})‖ ≤ t_j + r_j + r_{j+1}   (2)
               r_i² ≤ β_i                  ⇔  ‖(2 r_i, β_i − 1)‖ ≤ β_i + 1,   r_i ≥ 0                  (3)
               u β_j + w β_{j+1} + g_l r_j + g_r r_{j+1} ≤ h      (R row slots per interval j)       (4)
               β_0 = β_start,  β_N = β_end                                                        (5)

At the optimum t_j = 2Δσ_j/(√β_j + √β_{j+1}), the exact time of interval j when θ̈ is constant on it,
so (1) is the duration in scaled time. The rows (4) are the limits at the "stations" of every interval
written on (β_j, β_{j+1}, r_j, r_{j+1}) (`stations`).

The tangent objective (`objective="tangent"`, the planner's default) replaces (1)–(2) by the duration's
first-order expansion at a reference profile β̂ (the sweeps on the packed rows, `reachability.packed_profile`,
then the last solution):

    minimise   ∇T(β̂) · β          (∇T < 0: every β pushed up, weights from `tangent`)          (1′)

a linear program — with the cones (3) only when a row has a √β term (viscous friction), no time cones,
and about a third of the variables. T is convex, so (1′) under-estimates it everywhere; its minimiser is
the time-optimal profile exactly when the feasible set has a greatest element (a profile at least as
fast everywhere as any other, which then minimises every positive weighting), and nearly so on a fine
grid where the rows couple only neighbouring β: on the 32-path planner suite
the durations equal those of (1)–(2) to ≤ 1e-4 (median 1e-6; some are shorter, (1) itself being
an approximation of the time law's duration), 5 % noise on β̂ changed them by < 1e-8, and a solve
took 10–15 ms instead of 40–58 ms (19–24 Clarabel iterations instead of 28–40).

Compiled once per structure (N, R): the numbers u, w, g_l, g_r, h, Δσ and the boundary speeds enter the
solver's data *linearly and one to one* (each is one entry of the conic form's matrix A or vector b),
so the structure is modelled in cvxpy once with distinct marker numbers, compiled with
`Problem.get_problem_data`, and the markers located in A and b. A plan then writes its numbers into
those entries and solves without canonicalising again. For Clarabel the compiled data go to
`clarabel.DefaultSolver` directly, with the cones cvxpy's interface would build (made once per
structure) and the status mapped by cvxpy's own table; only the variable vector is read back (saves
~1.5 ms of ~35 ms a solve at N = 200: cvxpy's `unpack_results` and per-call setup). Unused slots get
h = 1e21 and are left out before Clarabel sees them (its presolve would drop them too; leaving them out
here saved ~6 % of a solve at N = 200, with bit-identical solutions). Other solvers go through cvxpy's
solving chain (`solve_via_data`, `unpack_results`) and get those slots as bounds that never bind. (cvxpy's own mechanism for this, DPP
Parameters, costs memory and time quadratic in the number of Parameter entries — 0.7 GB and 2 s at
N = 200, 14 GB at N = 1000 — so is not used.)
"""

from __future__ import annotations

import threading
import time
import warnings

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

UNUSED = 1e21            # bound of an unused row slot (Clarabel's presolve drops rows with |h| ≥ 1e20)
# a used row's bound h goes to the solver as at most this. Rows are scaled to coefficients ≤ 1 and β to the
# coarse profile's top (~1), so the cap cuts only profiles with some β (or |ε|) above 2e5 — θ̇ ~450× that top —
# and conservatively even then. Next to a turn back every q′ → 0 and the speed rows b ≤ q̇_max²/q′² grow
# without bound: 4.9e10 at a station 1.4e-7 of the path from a puma560's turn (3200 intervals). Clarabel's
# tolerances are relative to its largest bound: the linear program with every row ended "almost solved" (and
# "solved" with the bounds capped at 1e9, its objective 2e-5 off), the time cones "dual infeasible" at the
# second iteration (a ray with β < 0, no certificate), and the chain went on to SCS for minutes. Capped at
# 1e6 both are solved (the linear program within 4e-7 of HiGHS's optimum); the planner suite's largest bound
# is 113 (its plans bitwise the same)
ROW_BOUND_MAX = 1e6

_G0, _H0, _S0, _E0 = 1e3, 1e8, 2e8, 3e8      # marker offsets (exact integers in float64)
_C0, _S2 = 9e8, 2.5e8                        # θ̈-continuity coefficients (6), second half-interval spans (linear law)
_W0 = 5e8                                    # weights of the tangent objective (1′), in c
OBJECTIVES = ("cone", "tangent")

_STATS = {"built": 0, "compiled": 0}
_STATS_LOCK = threading.Lock()


def problem_stats() -> dict:
    """How many structures were built and how many cvxpy compilations happened (process-wide)."""
    with _STATS_LOCK:
        return dict(_STATS)


class StationProblem:
    """The SOCP (1)–(5) for N intervals and R row slots per interval. `solve(values, solver, options)`
    writes the numbers and solves. Not thread-safe by itself: `planning.cache.acquire` hands out one
    instance per thread.

    `linear=True`: θ̈ linear per interval (`trajectory.TimeLaw` with d): one more variable δ_j per
    interval (the normalised change of θ̈ across it), a fifth coefficient v per row of (4) on it,

        u β_j + w β_{j+1} + g_l r_j + g_r r_{j+1} + v δ_j ≤ h,                                  (4')

    and, `continuous` (the controller's rate rows need it, `controller_problem`), continuity of θ̈ at the
    inner grid points, with ᾱ_j = (β_{j+1} − β_j)/(2Δσ_j),

        (δ_{j−1} + δ_j)/2 = ᾱ_j − ᾱ_{j−1},   j = 1 … N − 1.                                       (6)

    Without (6) θ̈ may jump at grid points, as with the constant law, and each δ_j is priced by its own
    interval alone. With (6) an alternating δ_j (a zigzag of θ̈) changes nothing but the sag inside the
    intervals, and from 512 intervals on Clarabel's solves ended inaccurate or failed (32-case suite: 1 at
    512, 2 at 640, 9 at 800); without it none did (28 suite paths on 512, 800 and 1600 intervals).

    `solve` then returns (β, δ) concatenated."""

    def __init__(self, N: int, R: int, linear: bool = False, continuous: bool = False, objective: str = "cone",
                 roots: bool = True):
        if N < 1 or R < 1:
            raise ValueError("StationProblem: need N >= 1 intervals and R >= 1 row slots")
        if objective not in OBJECTIVES:
            raise ValueError(f"StationProblem: objective must be one of {OBJECTIVES}, got {objective!r}")
        self.N, self.R = N, R = int(N), int(R)
        self.linear = bool(linear)
        self.continuous = self.linear and bool(continuous)
        self.tangent = objective == "tangent"
        self.roots = bool(roots) or not self.tangent
        P = N + 1
        self.M = M = N * R
        nd = N if self.linear else 0
        if self.tangent:                     # β, r (rows with √β terms only), ε, then the extra blocks
            self.nd = nd
            self._r0, self._e0 = (P if self.roots else None), (2 * P if self.roots else P)
        else:                                # β, r, t, then ε, t′, r_{j+½} (linear), then the extra blocks
            self.nd = 3 * nd
            self._r0, self._e0 = P, 2 * P + N
        self._x0 = self._e0 + self.nd        # the extra blocks' first variable
        size = self._x0 + self._extra_variables(P)
        # the solver's variable is ε_j = δ_j Δσ_j: δ_j multiplies Δσ_j/4 in β(½) but 1/2 in (6) against
        # 1/(2Δσ_j) on β, and on 1000–1600 intervals Clarabel failed ("solver error") on δ itself
        x = cp.Variable(size, name="x")
        beta = x[:P]
        j = np.repeat(np.arange(N), R)
        self._keys = ("u", "w") + (("gl", "gr") if self.roots else ()) + (("v",) if self.linear else ())
        width = len(self._keys)
        rows = np.repeat(np.arange(M), width)
        cols = [j, j + 1] + ([self._r0 + j, self._r0 + j + 1] if self.roots else []) + \
            ([self._e0 + j] if self.linear else [])
        cols = np.stack(cols, axis=1).reshape(-1)
        G = sp.csr_matrix((_G0 + np.arange(width * M, dtype=float), (rows, cols)), shape=(M, x.size))
        cons = [G @ x <= _H0 + np.arange(M, dtype=float),                                      # (4)
                beta[0] == _E0, beta[N] == _E0 + 1.0]                                          # (5)
        if self.roots:
            r = x[self._r0:self._r0 + P]
            cons += [cp.SOC(beta + 1.0, cp.vstack([2.0 * r, beta - 1.0]), axis=0)]             # (3)
        if self.tangent:
            # (1′): the first-order expansion of the duration (1) at a reference profile, w·β (+ w_ε·ε),
            # the weights written per plan (`tangent.time_weights`); β ≥ 0 (and, linear, β(½) ≥ 0) as (3) and (2′) hold
            # them otherwise
            weighted = self._weighted()
            objective = (_W0 + np.arange(weighted.size, dtype=float)) @ x[weighted]
            if not self.roots:
                cons.append(beta >= 0)
            if self.linear:
                eps = x[self._e0:self._e0 + N]
                cons.append(0.5 * (beta[:-1] + beta[1:]) - 0.25 * eps >= 0)
        else:
            r, t = x[P:2 * P], x[2 * P:2 * P + N]
            rs = r[:-1] + r[1:]
            objective = cp.sum(t)
            cons.append(r >= 0)
            if not self.linear:
                cons.append(cp.SOC(t + rs, cp.vstack([_S0 + np.arange(N, dtype=float), t - rs]), axis=0))  # (2)
            else:
                # (2′): each half of an interval, with r_{j+½} ≤ √β(½), β(½) = (β_j + β_{j+1})/2 − ε_j/4:
                # t_j (r_j + r_{j+½}) ≥ Δσ_j and t′_j (r_{j+½} + r_{j+1}) ≥ Δσ_j (spans 2√Δσ_j). The objective
                # then sees the inside of the interval (a sag of θ̇² below the chord costs time, and its
                # middle stays ≥ 0), which the grid points alone do not
                eps, t2, rm = (x[2 * P + N + k * N:2 * P + N + (k + 1) * N] for k in range(3))
                a1, a2 = r[:-1] + rm, rm + r[1:]
                bm = 0.5 * (beta[:-1] + beta[1:]) - 0.25 * eps
                cons += [cp.SOC(t + a1, cp.vstack([_S0 + np.arange(N, dtype=float), t - a1]), axis=0),
                         cp.SOC(t2 + a2, cp.vstack([_S2 + np.arange(N, dtype=float), t2 - a2]), axis=0),
                         cp.SOC(bm + 1.0, cp.vstack([2.0 * rm, bm - 1.0]), axis=0), rm >= 0]
                objective = objective + cp.sum(t2)
        if self.continuous and N >= 2:                                                         # (6)
            k = np.arange(1, N)
            d0 = self._e0
            er = np.repeat(np.arange(N - 1), 5)
            ec = np.stack([d0 + k - 1, d0 + k, k - 1, k, k + 1], axis=1).reshape(-1)
            ev = np.stack([_C0 + 5 * (k - 1) + m for m in range(5)], axis=1).reshape(-1)
            E = sp.csr_matrix((ev, (er, ec)), shape=(N - 1, x.size))
            cons.append(E @ x == 0.0)
        cons += self._extra_constraints(x, beta)
        self.problem = cp.Problem(cp.Minimize(objective), cons)
        self.x, self.P = x, P
        self.lock = threading.Lock()
        self._templates: dict = {}
        self.compile_time = 0.0
        with _STATS_LOCK:
            _STATS["built"] += 1

    def _weighted(self) -> np.ndarray:
        """Indices into x of the variables the tangent objective weighs: β, then ε (linear)."""
        P = self.N + 1
        return np.r_[np.arange(P), self._e0 + np.arange(self.N if self.linear else 0)]

    # hooks for structures with more variables and constraints (`socp.controller_problem`): none here
    def _extra_variables(self, P: int) -> int:
        return 0

    def _extra_constraints(self, x, beta) -> list:
        return []

    def _extra_positions(self, A, b) -> dict:
        return {}

    def _write_extra(self, data: dict, pos: dict, values: dict) -> None:
        return None

    @property
    def compiled(self) -> bool:
        return bool(self._templates)

    def _template(self, solver: str):
        """(data, chain, inverse data, positions) of the compiled problem for `solver`."""
        if solver in self._templates:
            return self._templates[solver], 0.0
        t0 = time.perf_counter()
        data, chain, inverse = self.problem.get_problem_data(solver)
        if "A" not in data or "b" not in data or "G" in data:
            raise cp.error.SolverError(f"{solver} takes its problem in a form the compiled template does not "
                                       f"support (only A x + s = b, s in K: Clarabel, SCS)")
        A = data["A"]
        if not sp.isspmatrix_csc(A):
            A = data["A"] = sp.csc_matrix(A)
        b = data["b"]
        pos = {"G": _locate(A.data, _G0, len(self._keys) * self.M), "h": _locate(b, _H0, self.M),
               "ends": _locate(b, _E0, 2)}
        if self.tangent:
            pos["weights"] = _locate(data["c"], _W0, self._weighted().size)
        else:
            pos["span"] = _locate(b, _S0, self.N)
        if self.linear and not self.tangent:
            pos["span2"] = _locate(b, _S2, self.N)
            if self.N >= 2 and self.continuous:
                pos["cont"] = _locate(A.data, _C0, 5 * (self.N - 1))
        pos.update(self._extra_positions(A, b))
        offsets = getattr(inverse[-2], "var_offsets", None) if len(inverse) >= 2 else None
        pos["direct"] = solver == "CLARABEL" and offsets == {self.x.id: 0} and data["c"].size == self.x.size
        if pos["direct"]:
            import clarabel
            from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import dims_to_solver_cones
            cones = dims_to_solver_cones(data["dims"])
            nonneg = [k for k, cone in enumerate(cones) if isinstance(cone, clarabel.NonnegativeConeT)]
            zero, count = data["dims"].zero, data["dims"].nonneg
            rows_h = pos["h"][1]
            if len(nonneg) == 1 and ((rows_h >= zero) & (rows_h < zero + count)).all():
                pos["cones"], pos["nonneg"], pos["nonneg_rows"] = cones, nonneg[0], (zero, count)
                pos["P"] = sp.csc_matrix((self.x.size, self.x.size))
            else:
                pos["direct"] = False
        template = (data, chain, inverse, pos)
        self._templates[solver] = template
        dt = time.perf_counter() - t0
        self.compile_time += dt
        with _STATS_LOCK:
            _STATS["compiled"] += 1
        return template, dt

    def solve(self, values: dict, solver: str, options: dict) -> tuple[str, np.ndarray | None, float, float]:
        """Write `values` (u, w, gl, gr, h: (N·R,); span: (N,) = 2√(2Δσ); ends: (2,)) and solve with `solver`.
        Returns (status, β or None, wall seconds, compile seconds)."""
        t0 = time.perf_counter()
        (data, chain, inverse, pos), compile_s = self._template(solver)
        if not self.roots and (np.any(values["gl"]) or np.any(values["gr"])):
            raise ValueError("StationProblem: rows with √β terms need a structure with roots=True")
        coeff = np.stack([values[k] for k in self._keys], axis=1)
        dsig = np.asarray(values["dsig"], dtype=float) if self.linear else None
        if self.linear:                       # on ε_j = δ_j Δσ_j
            coeff[:, -1] /= np.repeat(dsig, self.R)
        coeff = coeff.reshape(-1)
        sign_g, at_g = pos["G"]
        data["A"].data[at_g] = sign_g * coeff
        if "span2" in pos:
            sign, at = pos["span2"]
            data["b"][at] = sign * np.asarray(values["span"], dtype=float)
        if "cont" in pos:                     # (6): (ε_{j−1}/Δσ_{j−1} + ε_j/Δσ_j)/2 − (ᾱ_j − ᾱ_{j−1}) = 0
            c = 0.5 / dsig
            sign_c, at_c = pos["cont"]
            data["A"].data[at_c] = sign_c * np.stack([c[:-1], c[1:], -c[:-1], c[:-1] + c[1:], -c[1:]],
                                                     axis=1).reshape(-1)
        for key in ("h", "span", "ends"):
            if key in pos:
                sign, at = pos[key]
                x = np.asarray(values[key], dtype=float)
                if key == "h":                # (unused slots stay `UNUSED`: left out below, or never binding)
                    x = np.where(x < UNUSED, np.minimum(x, ROW_BOUND_MAX), x)
                data["b"][at] = sign * x
        if "weights" in pos:                  # (1′): on β, then on the solver's ε
            sign, at = pos["weights"]
            data["c"][at] = sign * np.asarray(values["weights"], dtype=float)
        self._write_extra(data, pos, values)
        if pos["direct"]:
            status, v = _clarabel(data, pos, options)
            return status, self._unpack(v, dsig), time.perf_counter() - t0, compile_s
        inverse[-1].solver_options = dict(options)          # (what `Problem.solve` passes along)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            solution = chain.solve_via_data(self.problem, data, False, False, dict(options))
            self.problem.unpack_results(solution, chain, inverse)
        return self.problem.status, self._unpack(self.x.value, dsig), time.perf_counter() - t0, compile_s

    def _unpack(self, v, dsig):
        """β (and, linear, δ = ε/Δσ after it) from the solution vector."""
        if v is None:
            return None
        v = np.asarray(v, dtype=float)
        if not self.linear:
            return np.array(v[:self.P])
        d0 = self._e0
        return np.concatenate([v[:self.P], v[d0:d0 + self.N] / dsig])


def _clarabel(data: dict, pos: dict, options: dict):
    """Solve the compiled conic form with Clarabel, the unused row slots (bound `UNUSED`: the plain rows',
    and any other block's, e.g. the controller's point rows and caps) left out here rather than by
    Clarabel's presolve (the same problem, set up faster); (cvxpy status, x or None)."""
    import clarabel
    from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import CLARABEL
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    for key, value in options.items():
        setattr(settings, key, value)
    A, b, cones = data["A"], data["b"], pos["cones"]
    zero, count = pos["nonneg_rows"]
    unused = np.abs(b[zero:zero + count]) >= UNUSED
    if unused.any():
        keep = np.ones(b.size, bool)
        keep[zero:zero + count] = ~unused
        A, b = A[keep], b[keep]
        cones = list(cones)
        cones[pos["nonneg"]] = clarabel.NonnegativeConeT(count - int(unused.sum()))
    solution = clarabel.DefaultSolver(pos["P"], data["c"], A, b, cones, settings).solve()
    status = CLARABEL.STATUS_MAP.get(str(solution.status), cp.SOLVER_ERROR)
    present = status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)
    return status, (np.asarray(solution.x) if present else None)


def _locate(arr: np.ndarray, offset: float, count: int) -> tuple[float, np.ndarray]:
    """Where the markers offset + k (k = 0 … count−1) stand in `arr` (each exactly once, one sign)."""
    for sign in (1.0, -1.0):
        k = sign * arr - offset
        hit = (k >= -0.25) & (k <= count - 0.75) & (np.abs(k - np.round(k)) < 1e-6)
        idx = np.flatnonzero(hit)
        if idx.size == count:
            at = np.empty(count, dtype=np.int64)
            at[np.round(k[idx]).astype(np.int64)] = idx
            if np.unique(at).size == count:
                return sign, at
    raise cp.error.SolverError("StationProblem: cvxpy's compiled form does not hold the rows one to one "
                       "(an unsupported cvxpy version?)")
