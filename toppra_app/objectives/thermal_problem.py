"""The convex problem of the thermal cycle limit (`objectives.thermal`): the least cycle time T for a given
tangent of the motion time.

All moves' variables side by side (each move's `socp.general.GeneralProblem` rows), per move, joint k and
interval j the energy cone ‖(τ̂_{j,k}, τ̂_{j+1,k})‖² ≤ s_{j,k}(r_j + r_{j+1}) (τ̂ = τ/τ_rms), and

    min T   s.t.   D = Σ_m Σ_j t_{m,j} ≤ T,     Σ_m Σ_j Δθ_j s_{m,j,k} + ĝ_k² (T − D_lin(b)) ≤ ρ_k T,

everything normalised by T₀ (time) and τ_rms (torque). The rating is linear in T (ρ_k T on the right,
ĝ_k² T on the left), so T is a variable of one convex problem — no bisection. The only non-convex part is
the idle time T − D_true, D_true(b) = Σ 2Δθ_j/(√b_j + √b_{j+1}) the motion time of the speed profile b:
D_true is convex in b (1/x of a positive concave function), so its tangent D_lin at any b̃ is a lower
bound, and charging the idle hold as ĝ²(T − D_lin) over-estimates its energy (conservative) and keeps the
problem convex. (The model's Σ t_j cannot be used there: it bounds D_true from above, and the idle term
rewards a larger D, so the solver would inflate t_j — seen: 5 % RMS excess. Nor a constant: the motion time
of the last solution, used before, under-charged slower motions' shorter idle and over-charged their
energy, and stopped 2.8 % above the least cycle time on the iiwa 7 test cycle.) The caller re-linearises
at each solution: that solution stays feasible (D_lin = D_true there), so T can only decrease from round
to round (a convex–concave procedure; it ends at a stationary point of the problem on this grid).
"""


from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from ..socp.general import GeneralProblem, end_torque_operator
from ..socp.solvers import SolverError, limited, solver_chain, time_limit


def motion_time_tangent(theta: np.ndarray, b: np.ndarray) -> tuple[float, np.ndarray]:
    """(c, g) with D_true(x) ≥ c + g·x for every x ≥ 0 with x_0 = x_end = 0 (rest to rest), equal at the
    interior point b̃ = max(b, 1e-4 max b): D_true = Σ_j 2Δθ_j/(√x_j + √x_{j+1}), ∂/∂x_i = −Σ_{j ∋ i}
    Δθ_j / ((√x_j + √x_{j+1})² √x_i). (The ends are fixed at rest, so no slope there; the floor keeps the
    slopes moderate where b is near 0 inside — any tangent of a convex function is a lower bound.)"""
    bt = np.maximum(np.asarray(b, dtype=float), 1e-4 * max(float(np.max(b)), 1e-300))
    bt[0] = bt[-1] = 0.0
    r = np.sqrt(bt)
    dth = np.diff(theta)
    den = r[1:] + r[:-1]
    w = dth / (den * den)
    g = np.zeros_like(bt)
    g[1:-1] = -(w[:-1] + w[1:]) / r[1:-1]
    return float(np.sum(2.0 * dth / den) - g @ bt), g


class CycleProblem:
    """min T/T₀ subject to the rows above; Parameters: ρ_k (the (tightened rating / rating)²) and the
    tangent of the motion time (`linearise`). Joints k are the rated ones: `tau_rms`, `g_end` and the moves'
    torque coefficients m, c, d, v hold their columns only (the caller leaves unrated joints out)."""

    def __init__(self, moves: list, tau_rms: np.ndarray, g_end: np.ndarray, T0: float, scheme: str):
        self.T0 = T0
        self.g2 = (g_end / tau_rms) ** 2
        n = tau_rms.size
        self.Tn = cp.Variable(name="Tn", nonneg=True)              # T / T₀, minimised
        self.rho = cp.Parameter(n, name="rho", value=np.ones(n))
        cons, time_terms, energy_terms, lin_terms = [], [], [], []
        self.moves, self.thetas, self.slopes = [], [], []
        self.lin_c = cp.Parameter(name="lin_c", value=1.0)
        for mv in moves:
            prob = GeneralProblem(mv["theta"], mv["blocks"], scheme)
            cons += list(prob.problem.constraints)
            P, N, x = prob.P, prob.P - 1, prob.x
            time_terms.append(cp.sum(x[2 * P + N:]))
            energy_terms.append(self._energy(prob, mv, tau_rms, cons))
            slope = cp.Parameter(P, name=f"slope{len(self.moves)}", value=np.zeros(P))
            lin_terms.append(slope @ x[:P])
            self.moves.append(prob)
            self.thetas.append(np.asarray(mv["theta"], dtype=float))
            self.slopes.append(slope)
        D = sum(time_terms) / T0
        E = sum(energy_terms) / T0                                 # (n,) ≥ Σ ∫ τ̂_k² dt / T₀
        D_lin = self.lin_c + sum(lin_terms)                        # ≤ D_true / T₀ (the slopes are divided by T₀)
        cons += [D <= self.Tn, E <= cp.multiply(self.rho - self.g2, self.Tn) + cp.multiply(self.g2, D_lin)]
        self.problem = cp.Problem(cp.Minimize(self.Tn), cons)

    def linearise(self, bs: list) -> None:
        """Charge the idle hold with the tangent of the motion time at the speed profiles `bs` (one per move,
        on the problem's grids)."""
        c_all = 0.0
        for theta, b, slope in zip(self.thetas, bs, self.slopes):
            c, g = motion_time_tangent(theta, b)
            c_all += c
            slope.value = g / self.T0
        self.lin_c.value = c_all / self.T0

    @staticmethod
    def _energy(prob: GeneralProblem, mv: dict, tau_rms: np.ndarray, cons: list):
        """(n,) expression Σ_j Δθ_j s_{j,k} with ‖(τ̂_{j,k}, τ̂_{j+1,k})‖² ≤ s_{j,k} (r_j + r_{j+1})."""
        P, N, nx = prob.P, prob.P - 1, prob.nx
        m, c, d, v = (np.asarray(mv[k], dtype=float) / tau_rms for k in ("m", "c", "d", "v"))   # (P, n)
        n = m.shape[1]
        # rows: (end e, joint k, interval j) → flat e + 2 (k N + j), so an F-order reshape to (2, nN) puts
        # the two ends of (k, j) in column k N + j
        e = np.tile([0, 1], n * N)
        col = np.repeat(np.arange(n * N), 2)
        k, j = col // N, col % N
        G, offset = end_torque_operator(P, nx, m, c, d, v, j, e, k)
        X = cp.reshape(G @ prob.x + offset, (2, n * N), order="F")
        jj = np.arange(n * N) % N
        Y = sp.csr_matrix((np.ones(2 * n * N), (np.repeat(np.arange(n * N), 2),
                                                 np.stack([P + jj, P + jj + 1], axis=1).reshape(-1))),
                          shape=(n * N, nx))
        y = Y @ prob.x
        s = cp.Variable(n * N, nonneg=True)
        cons.append(cp.SOC(s + y, cp.vstack([2.0 * X, cp.reshape(s - y, (1, n * N), order="F")]), axis=0))
        dth = np.diff(prob.theta)
        W = sp.csr_matrix((np.tile(dth, n), (np.repeat(np.arange(n), N), np.arange(n * N))), shape=(n, n * N))
        return W @ s

    def solve(self, rho: np.ndarray, solver: str, first_only: bool = False) -> tuple[float, list] | None:
        """The least T / T₀ with the current tangent and ratings ρ, and the per-move speed profiles b there
        (the planner's solver chain; `SolverError` when none solves it). `first_only`: only the chain's
        first solver, None when it fails (a later round: the fallback SCS took ~60 s and returned an
        inaccurate T there). Where the careful Clarabel try fails, Clarabel with the planner's own settings
        (`FAST_CLARABEL`, `solver_chain`) is tried before SCS, and Clarabel and SCS stop at the planner's time limit for the
        problem's rows (`solvers.time_limit`; a try stopped there is a failure): on a two-move iiwa 7 cycle the
        careful try ended "insufficient progress" and SCS then ran 250 s, where the planner's settings solve it
        in 0.7 s."""
        self.rho.value = np.asarray(rho, dtype=float)
        last = None
        chain = solver_chain(solver, normalised=False)
        limit = time_limit(sum(con.size for con in self.problem.constraints))
        chain = [(name, limited(name, opts, limit)) for name, opts in chain]
        for name, opts in chain[:1] if first_only else chain:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self.problem.solve(solver=name, **opts)
            except cp.error.SolverError as exc:
                last = f"{name}: {exc}"
                continue
            status = self.problem.status
            stats = self.problem.solver_stats
            if name in ("CLARABEL", "SCS") and stats is not None and (stats.solve_time or 0.0) >= limit:
                last = f"{name}: stopped by its time limit ({limit:.3g} s)"       # (SCS: "optimal_inaccurate")
                continue
            if status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) and self.Tn.value is not None:
                bs = [None if prob.x.value is None else np.maximum(np.array(prob.x.value[:prob.P], float), 0.0)
                      for prob in self.moves]
                if all(b is not None and np.isfinite(b).all() for b in bs) and np.isfinite(self.Tn.value):
                    return float(self.Tn.value), bs
                last = f"{name}: no values"
                continue
            last = f"{name}: {status}"
        if first_only:
            return None
        raise SolverError(f"the thermal cycle problem could not be solved ({last})")
