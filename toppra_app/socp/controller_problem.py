"""The time-optimal SOCP of `problem.StationProblem` with two more blocks, for the controller profile
(`planning.controller`), compiled once per structure (N, R, K) like the plain one:

    p_i0 z_{c_i} + p_i1 z_{c_i+1} + p_i2 z_{c_i+2} ≤ h_i      (K point-row slots per grid point i)   (6)
    β_i ≤ β̄_i                                                  (a cap per grid point)                 (7)
    z_i = D_i β_i                                               (scaled copies of β)                   (8)

with c_i = clip(i − 1, 0, N − 2): the three consecutive grid points around θ_i, whose β give both
accelerations a_{i−1}, a_i at θ_i (α_j = (β_{j+1} − β_j)/(2Δσ_j)) and b_i — what a jump of q̈ or τ at
θ_i and the smooth rate next to it are linear in (docs/controller.md, eqs. (C1)–(C4)). The coefficients
p, bounds h, caps β̄ and scales D are marker constants located in Clarabel's A and b once, as for (4);
unused slots and caps get `UNUSED` and are dropped by Clarabel's presolve.

Why (8): near a rest end the rate-limited profile has β ~ 1e-5 while β ~ 1 elsewhere, and the rows bound
second differences of those β to ~1e-6; Clarabel's feasibility tolerance is relative to the largest
entries of the solution, and rows written on β itself were broken by up to 60 % at an "optimal" 1e-7
(tighter tolerances ended "inaccurate"). On z = D β with D_i ≈ 1/(expected β_i) the rows have O(1) terms,
and the residual of (8) in z is an error D_i times smaller in β.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from .problem import StationProblem, _locate

_P0, _PH0, _C0, _D0 = 4e8, 6e8, 7e8, 8e8      # marker offsets of p, h (6), the caps (7) and D (8)


def window_start(P: int) -> np.ndarray:
    """c_i of (6): the first of the three grid points whose β a row at grid point i may use."""
    return np.clip(np.arange(P) - 1, 0, P - 3)


class ControllerProblem(StationProblem):
    """`StationProblem(N, R)` plus K point-row slots per grid point (6) and a cap on every β_i (7).
    `solve(values, ...)` also takes "p" (P·K·3,), "ph" (P·K,), "cap" (P,) and "D" (P,)."""

    def __init__(self, N: int, R: int, K: int, linear: bool = False, objective: str = "cone", roots: bool = True):
        if N < 2 or K < 1:
            raise ValueError("ControllerProblem: need N >= 2 intervals and K >= 1 point-row slots")
        self.K = int(K)
        self.width = 5 if linear else 3                # coefficients per row of (6)
        super().__init__(N, R, linear, continuous=True, objective=objective, roots=roots)

    def _extra_variables(self, P: int) -> int:
        return P                                                                                # z of (8)

    def _extra_constraints(self, x, beta) -> list:
        P, K = self.N + 1, self.K
        z0 = self._x0
        c = window_start(P)
        W = self.width
        rows = np.repeat(np.arange(P * K), W)
        cols = z0 + np.repeat(c, K)[:, None] + np.arange(3)[None, :]
        if self.linear:              # and δ of the intervals c_i, c_i + 1 (θ̈ linear per interval)
            d0 = self._e0
            cols = np.hstack([cols, d0 + np.repeat(c, K)[:, None] + np.arange(2)[None, :]])
        G = sp.csr_matrix((_P0 + np.arange(W * P * K, dtype=float), (rows, cols.reshape(-1))),
                          shape=(P * K, x.size))
        z = x[z0:z0 + P]
        return [G @ x <= _PH0 + np.arange(P * K, dtype=float),                                 # (6)
                beta <= _C0 + np.arange(P, dtype=float),                                        # (7)
                z == cp.multiply(_D0 + np.arange(P, dtype=float), beta)]                        # (8)

    def _extra_positions(self, A, b) -> dict:
        P, K = self.N + 1, self.K
        return {"p": _locate(A.data, _P0, self.width * P * K), "ph": _locate(b, _PH0, P * K), "cap": _locate(b, _C0, P),
                "D": _locate(A.data, _D0, P)}

    def _write_extra(self, data: dict, pos: dict, values: dict) -> None:
        for key in ("p", "D"):
            sign, at = pos[key]
            x = np.array(values[key], dtype=float).reshape(-1)
            if key == "p" and self.linear:                 # on ε = δ Δσ of the intervals c_i, c_i + 1
                dsig = np.asarray(values["dsig"], dtype=float)
                c = np.repeat(window_start(self.N + 1), self.K)
                x = x.reshape(-1, self.width)
                x[:, 3] /= dsig[c]
                x[:, 4] /= dsig[c + 1]
            data["A"].data[at] = sign * x.reshape(-1)
        for key in ("ph", "cap"):
            sign, at = pos[key]
            data["b"][at] = sign * np.asarray(values[key], dtype=float).reshape(-1)
