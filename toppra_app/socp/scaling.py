"""Normalised variables for `general.GeneralProblem` (the energy objective's problem): the same change of
variables as the time-optimal `problem.StationProblem` (docs/planner.md, "Normalised variables").

With L = θ_N − θ_0 and a reference squared speed B̄ (here the time-optimal plan's largest θ̇², divided by
L²), the solver works on σ = (θ − θ_0)/L and β = b/(L² B̄) (≤ 1 for plans no faster than it), so

    a = L B̄ α,   b = L² B̄ β,   r = L √B̄ ρ,   t_j = t̂_j / √B̄,   Δθ_j s_j = Δσ_j ŝ_j / √B̄

and a row A a + B b + C r ≤ h becomes (L B̄ A) α + (L² B̄ B) β + (L √B̄ C) ρ ≤ h (bounds unchanged); the
energy's torque τ = m a + c b + v r + d the same way. Both terms of the objective Σ t_j + w Σ Δθ_j s_j
scale by 1/√B̄, so the minimiser is the same. In physical b the problem depended on the scale of the path
parameter: with s ∈ [0, 10⁻³] the solve failed (the motion stopped), with s ∈ [0, 10³] or a tiny motion
(b ~ 10⁴ on s ∈ [0, 1]) Clarabel returned plans up to 4× off the objective's optimum.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..limits.rows import RowBlock


def path_scale(theta, b) -> tuple[float, float]:
    """(L, B̄): the grid's length and the largest of the squared path speeds `b` (a reference profile) / L²."""
    theta = np.asarray(theta, dtype=float)
    L = float(theta[-1] - theta[0])
    top = float(np.max(np.asarray(b, dtype=float)))
    return L, (top if np.isfinite(top) and top > 0 else 1.0) / L ** 2


def _factors(L: float, Bbar: float) -> dict:
    return {"A": L * Bbar, "B": L * L * Bbar, "C": L * np.sqrt(Bbar)}


def scaled_blocks(blocks, L: float, Bbar: float) -> list[RowBlock]:
    """The rows in (α, β, ρ): coefficients of a, b, r (and their Parameter deltas) times L B̄, L² B̄, L √B̄.
    The other rows' coefficients are then as the path's scale leaves them (a torque row's m̃ = M q′ goes with
    1/L, its a with L); an equality row (the boundary speed's b_0 = θ̇_0², whose coefficient would become
    L² B̄) is divided by its largest coefficient: β_0 = θ̇_0²/(L² B̄). Dividing every row by its largest
    coefficient left Clarabel "optimal_inaccurate" on some energy problems that it solves without it."""
    f = _factors(L, Bbar)
    out = []
    for blk in blocks:
        A, B, C = blk.A * f["A"], blk.B * f["B"], blk.C * f["C"]
        w = np.ones_like(B)
        if blk.equality:
            size = np.maximum(np.maximum(np.abs(A), np.abs(B)), np.abs(C))
            w = 1.0 / np.where(np.isfinite(size) & (size > 0), size, 1.0)                 # (P, R)
        deltas = {name: {key: arr * w * f.get(key, 1.0) for key, arr in d.items()} for name, d in blk.deltas.items()}
        out.append(RowBlock(blk.kind, blk.joints, A * w, B * w, C * w, blk.lo * w, blk.hi * w, blk.has_lo,
                            blk.has_hi, blk.uses_a, blk.uses_r, blk.points, blk.equality, deltas))
    return out


def scaled_energy(energy: dict | None, L: float, Bbar: float) -> dict | None:
    """The energy term's torque coefficients (m on a, c on b, v on r; d unchanged) in (α, β, ρ)."""
    if energy is None:
        return None
    f = _factors(L, Bbar)
    return dict(energy, m=energy["m"] * f["A"], c=energy["c"] * f["B"], v=energy["v"] * f["C"])


def scaled_columns(G, P: int, L: float, Bbar: float):
    """Extra rows G over x = (b, r, a, t) (P, P, N, N entries; `GeneralProblem`'s `extra_rows`) written on
    (β, ρ, α, t̂): G diag(L² B̄, L √B̄, L B̄, 1/√B̄)."""
    N = P - 1
    f = _factors(L, Bbar)
    d = np.concatenate([np.full(P, f["B"]), np.full(P, f["C"]), np.full(N, f["A"]), np.full(N, 1.0 / np.sqrt(Bbar))])
    return sp.csr_matrix(G) @ sp.diags(d)
