"""The tangent objective (1′) of `problem.StationProblem`: the duration model it expands, its gradient (the
weights) and the certificate of a solution.

The duration model is the objective of the time cones: (1) with θ̈ constant per interval,
T = Σ_j 2Δσ_j/(√β_j + √β_{j+1}), and with θ̈ linear the two half-interval times of (2′),
T = Σ_j Δσ_j (1/(√β_j + √β(½)_j) + 1/(√β(½)_j + √β_{j+1})), β(½)_j = (β_j + β_{j+1})/2 − ε_j/4, in scaled time
(`stations`). T is convex in (β, β(½)) (each term is a positive constant over a sum of concave functions), so
its tangent at any reference under-estimates it everywhere. The planner minimises the tangent at a
reference over the feasible set; T at that reference plus the tangent's minimum is then a lower bound
on the optimum of (1)–(2), and `tangent_bound` says how far from it the solution may be (the
Frank–Wolfe gap). With the reference at the previous solution the bound is ~1e-7 on the planner suite.
"""

from __future__ import annotations

import numpy as np

FLOOR = 1e-4                 # √β at least √(FLOOR · max β) in the model (at rest its gradient is unbounded)


def _roots(beta, beta_mid, floor: float, top: float):
    return (np.sqrt(np.maximum(beta, floor * top)),
            None if beta_mid is None else np.sqrt(np.maximum(beta_mid, floor * top)))


def model_time(beta: np.ndarray, beta_mid: np.ndarray | None, dsig: np.ndarray, top: float,
               floor: float = FLOOR) -> float:
    """The duration (1) (θ̈ constant) or the sum of the half-interval times of (2′) (θ̈ linear, `beta_mid`
    = β(½) at the interval middles) of a profile, in scaled time, every √β at least √(floor · top)."""
    s, m = _roots(beta, beta_mid, floor, top)
    if m is None:
        return float(np.sum(2.0 * dsig / (s[:-1] + s[1:])))
    return float(np.sum(dsig / (s[:-1] + m) + dsig / (m + s[1:])))


def model_time_gradient(beta, beta_mid, dsig, top: float, floor: float = FLOOR):
    """(∂T/∂β at the grid points, ∂T/∂β(½) or None) of `model_time`. Constant law: T = Σ 2Δσ_j/(s_j +
    s_{j+1}), s = √β, so ∂T/∂β_i = −Σ_j Δσ_j/((s_j + s_{j+1})² s_i) over the intervals j next to i.
    Linear: T = Σ Δσ_j (1/(s_j + m_j) + 1/(m_j + s_{j+1})), m_j = √β(½)_j."""
    s, m = _roots(beta, beta_mid, floor, top)
    g = np.zeros(s.size)
    if m is None:
        k = dsig / (s[:-1] + s[1:]) ** 2
        g[:-1] -= k / s[:-1]
        g[1:] -= k / s[1:]
        return g, None
    k1, k2 = dsig / (s[:-1] + m) ** 2, dsig / (m + s[1:]) ** 2
    g[:-1] -= 0.5 * k1 / s[:-1]
    g[1:] -= 0.5 * k2 / s[1:]
    return g, -0.5 * (k1 + k2) / m


def time_weights(beta: np.ndarray, beta_mid: np.ndarray | None, dsig: np.ndarray) -> np.ndarray:
    """The weights of the tangent objective (1′): the gradient of `model_time` at the reference profile
    (`beta` at the grid points, `beta_mid` at the middles for θ̈ linear) with respect to the solver's β
    and (linear) ε — β(½) = (β_j + β_{j+1})/2 − ε_j/4 — divided by its largest magnitude."""
    top = _top(beta, beta_mid)
    g, gm = model_time_gradient(beta, beta_mid, dsig, top)
    if gm is not None:
        g = g.copy()
        g[:-1] += 0.5 * gm
        g[1:] += 0.5 * gm
        g = np.concatenate([g, -0.25 * gm])
    return g / np.max(np.abs(g))


def tangent_bound(ref: tuple, sol: tuple, dsig: np.ndarray) -> float:
    """How much longer than the optimum of (1)–(2) (or (2′)) the solution `sol` = (β, β(½) or None) of the
    tangent objective taken at `ref` may be, relative: T is convex, so T(ref) + ∇T(ref)·(β − ref) ≤ T(β)
    for every β, and `sol` minimises that left side over the feasible set — it is a lower bound on the
    optimum (the Frank–Wolfe gap). Small when `ref` is near `sol`: the next solve's weights are taken
    at the last solution."""
    top = _top(ref[0], ref[1])
    g, gm = model_time_gradient(ref[0], ref[1], dsig, top)
    t_sol = model_time(sol[0], sol[1], dsig, top)
    lower = model_time(ref[0], ref[1], dsig, top) + float(g @ (sol[0] - ref[0]))
    if gm is not None:
        lower += float(gm @ (sol[1] - ref[1]))
    return (t_sol - lower) / t_sol


def _top(beta, beta_mid) -> float:
    return max(float(np.max(beta)), float(np.max(beta_mid)) if beta_mid is not None else 0.0, 1e-300)


def next_step(bound: float, rounds: int, last_bound: float, tol: float, max_rounds: int, shrink: float):
    """(step, rounds, last bound) after a solve of the tangent objective whose certificate is `bound`
    (`tangent_bound`): "certified" within `tol` (rounds and last bound reset); else "again", weighted at this
    solution, while fewer than `max_rounds` re-solves were made and the bound shrinks by `shrink` a solve;
    else "cones": not converging, the time cones (1)–(2) plan."""
    if bound <= tol:
        return "certified", 0, np.inf
    if rounds < max_rounds and bound < shrink * last_bound:
        return "again", rounds + 1, bound
    return "cones", rounds, bound
