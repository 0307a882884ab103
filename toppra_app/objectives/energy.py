"""Time–energy trade-off along a fixed path (Verscheure, Demeulenaere, Swevers, De Schutter & Diehl 2009,
"Time-optimal path tracking for robots: a convex optimization approach", IEEE TAC 54(10), eq. 17–18).

With b = θ̇², a = θ̈ and τ = m̃ a + c̃ b + d̃ (+ viscous F_v q′ √b) the objective

    J = T + w ∫₀ᵀ τᵀ R τ dt = ∫ (1 + w τᵀRτ) / √b dθ

is convex in (a, b): τ is affine in (a, b, √b) and τ²/√b is a quadratic-over-concave form. The planner
(`TimeOptimalProblem._energy_term`) discretises the energy per interval j with both ends, as the limit
rows are, ‖(√R τ_j, √R τ_{j+1})‖² / (r_j + r_{j+1}) Δθ_j ≤ Δθ_j s_j with r ≤ √b — at r = √b exactly
t_j (τ_jᵀRτ_j + τ_{j+1}ᵀRτ_{j+1})/2, the trapezoidal integral over the interval in time, finite also at
rest-to-rest ends (b_0 = 0). Viscous friction enters through r (√b ≈ r, tight at the optimum).

`energy_R` default: 1/τ_max,k² per joint (1 for joints without a torque limit), so τᵀRτ ≤ n and the energy
integral is in seconds: `energy_weight` is dimensionless (w = 1 weighs one second of cycle time like one
second of all joints at full torque). `energy_weight = 0` (default) builds exactly the time-optimal problem.
"""

from __future__ import annotations

import numpy as np


from ..checks import real
from ..errors import InputError
from ..errors import short_repr


# the largest weight: the plans have converged to the least-energy motion long before (an iiwa 7 path: 3.3666 s at
# 1e6, 3.3715 s at 1e8), while the problem degrades — at 1e12 the solve ended after 22 s with a motion that stops
# (and `palletize` with 1e300 ended in a SolverError after 18 s); refused up front instead
MAX_WEIGHT = 1e6


def energy_weights(robot, energy_weight=0.0, energy_R=None) -> tuple[float, np.ndarray]:
    """Validated (weight, R diagonal (n,)); R defaults to 1/τ_max² (1 where τ_max is infinite)."""
    w = real(energy_weight, "energy_weight", 0.0, None)           # (text is not a number: as sd_start)
    if w > MAX_WEIGHT:
        raise InputError(f"energy_weight: must be at most {MAX_WEIGHT:g}, got {short_repr(energy_weight)} (beyond it the "
                         f"duration no longer counts: the least-energy motion, and an ill-conditioned problem)")
    tau = np.asarray(robot.tau_max, dtype=float)
    default = np.where(np.isfinite(tau) & (tau > 0), 1.0 / np.where(np.isfinite(tau) & (tau > 0), tau, 1.0) ** 2, 1.0)
    if energy_R is None:
        R = default
    else:
        try:
            raw = np.asarray(energy_R)
            if raw.dtype.kind not in "iuf":                              # text, bool, complex, objects
                raise TypeError
            R = np.array(np.broadcast_to(raw.astype(float), (robot.n,)))
        except (TypeError, ValueError):
            raise InputError(f"energy_R: expected {robot.n} numbers >= 0 (one per joint), got {short_repr(energy_R)}") from None
        if not (np.isfinite(R).all() and (R >= 0).all()):
            raise InputError(f"energy_R: expected finite numbers >= 0, got {short_repr(energy_R)}")
        # the weight's cap holds for w R as a multiple of the default 1/τ_max² (w = 1, R = 1e300 planned with a
        # weight of ~1e304 and returned the time-optimal plan, its "energy" 4e303)
        with np.errstate(over="ignore"):
            top = float(np.max(R / default, initial=0.0))
        if w * top > MAX_WEIGHT:
            raise InputError(f"energy_R: energy_weight × energy_R must be at most {MAX_WEIGHT:g} × the default "
                             f"1/tau_max² per joint, got {w * top:.3g} × (energy_R {short_repr(energy_R)})")
    return w, R


def energy_integral(sample, R) -> float:
    """∫ τᵀ diag(R) τ dt (trapezoidal) on a sampled trajectory (its τ: RNEA + friction of the plan's robot)."""
    tau = np.asarray(sample.tau, dtype=float)
    p = np.einsum("ik,k,ik->i", tau, np.asarray(R, dtype=float), tau)
    t = np.asarray(sample.t, dtype=float)
    return float(np.sum(0.5 * (p[1:] + p[:-1]) * np.diff(t)))
