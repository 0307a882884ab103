"""The time-optimal SOCP of `problem.StationProblem` with two more blocks, for the controller profile
(`planning.controller`), compiled once per structure (N, R, K) like the plain one:

    p_i0 β_{c_i} + p_i1 β_{c_i+1} + p_i2 β_{c_i+2} ≤ h_i      (K point-row slots per grid point i)   (6)
    β_i ≤ β̄_i                                                  (a cap per grid point)                 (7)

with c_i = clip(i − 1, 0, N − 2): the three consecutive grid points around θ_i, whose β give both
accelerations a_{i−1}, a_i at θ_i (α_j = (β_{j+1} − β_j)/(2Δσ_j)) and b_i — what a jump of q̈ or τ at
θ_i and the smooth rate next to it are linear in (docs/controller.md, eqs. (C1)–(C4)). The coefficients
p, bounds h and caps β̄ are marker constants located in Clarabel's A and b once, as for (4); unused slots
and caps get `UNUSED` and are dropped by Clarabel's presolve.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .problem import StationProblem, _locate

_P0, _PH0, _C0 = 4e8, 6e8, 7e8            # marker offsets of p, h (6) and the caps (7)


def window_start(P: int) -> np.ndarray:
    """c_i of (6): the first of the three grid points whose β a row at grid point i may use."""
    return np.clip(np.arange(P) - 1, 0, P - 3)


class ControllerProblem(StationProblem):
    """`StationProblem(N, R)` plus K point-row slots per grid point (6) and a cap on every β_i (7).
    `solve(values, ...)` also takes "p" (P·K·3,), "ph" (P·K,) and "cap" (P,)."""

    def __init__(self, N: int, R: int, K: int):
        if N < 2 or K < 1:
            raise ValueError("ControllerProblem: need N >= 2 intervals and K >= 1 point-row slots")
        self.K = int(K)
        super().__init__(N, R)

    def _extra_constraints(self, x, beta) -> list:
        P, K = self.N + 1, self.K
        c = window_start(P)
        rows = np.repeat(np.arange(P * K), 3)
        cols = (np.repeat(c, K)[:, None] + np.arange(3)[None, :]).reshape(-1)
        G = sp.csr_matrix((_P0 + np.arange(3 * P * K, dtype=float), (rows, cols)), shape=(P * K, x.size))
        return [G @ x <= _PH0 + np.arange(P * K, dtype=float),                                 # (6)
                beta <= _C0 + np.arange(P, dtype=float)]                                        # (7)

    def _extra_positions(self, A, b) -> dict:
        P, K = self.N + 1, self.K
        return {"p": _locate(A.data, _P0, 3 * P * K), "ph": _locate(b, _PH0, P * K), "cap": _locate(b, _C0, P)}

    def _write_extra(self, data: dict, pos: dict, values: dict) -> None:
        sign, at = pos["p"]
        data["A"].data[at] = sign * np.asarray(values["p"], dtype=float).reshape(-1)
        for key in ("ph", "cap"):
            sign, at = pos[key]
            data["b"][at] = sign * np.asarray(values[key], dtype=float).reshape(-1)
