"""Inverse kinematics by Nicolato & Madrid's recursive one-joint-at-a-time algorithm (IFAC 2005).

The n-dimensional problem is split into 1-D problems: joints are moved one at a time, in a fixed order
(base to tip, as in the paper's Section 6), each by the displacement that minimises the error
function h (eq. 10) with the other joints frozen; sweeps repeat until √h is below the tolerance
(Section 5.1). No matrix is inverted.

Generalisation used here (see docs/inverse_kinematics.md):

* any revolute/prismatic chain of a `RobotModel` instead of a DH table: moving joint i by Δ rotates
  everything after it about the joint's world axis z (through the joint origin o) — the role of
  A'_i (eq. 13–14);
* position and orientation: with e_p = p_d − p (eq. 11) and L a length that weighs rotation against
  translation,

      h(Δ) = |p_d − p(Δ)|² + L² (3 − tr(R_dᵀ R(Δ)))            (eq. 10 extended; = |e_p|² + 2L²(1 − cos φ))

  For a revolute joint both terms are sinusoidal in Δ (Rodrigues: R_z(Δ) = zzᵀ + cos Δ (1 − zzᵀ)
  + sin Δ [z]×), so h(Δ) = k₀ + k₁ cos Δ + k₂ sin Δ, minimised *exactly* at Δ* = atan2(−k₂, −k₁).
  ``step="paper"`` uses instead the paper's small-angle version (eq. 15–21): h_i = k₀Δ² + k₁Δ + k₂,
  Δ* = −k₁/(2k₀), with orientation added as the rotation-vector residual (k₀ = |z × r|² + L²).
  A prismatic joint has h quadratic in Δ in both versions: Δ* = e_p·z.
* limits: the displacement is confined to the interval allowed by the position limits and, when a
  time step Δt is given, the velocity limits on the displacement accumulated in that time step
  (eq. 22); being the exact minimiser on that interval it is the "recalculated" Δθ of Section 5.1.
  The optional velocity penalty (eq. 23–24) scales a step that moves a joint towards its nearer limit.

Near the goal of a 6-D task on a 7-joint arm, coordinate descent converges only linearly; `solve_ik`
therefore finishes (``newton_steps > 0``) with a few damped Gauss–Newton steps when the sweeps slow
down — an addition to the paper, reported in `IKResult.newton_steps`. `solve_ik_dls` is the damped
least-squares (pseudo-inverse) solver for comparison, and `track_path(..., method="pinv")` the
closed-loop pseudo-inverse scheme q̇ = J⁺(v + K e) of eq. 6.
"""

# The algorithms live in `dynamics.ik` (one module each); this module keeps the old import path.
from .ik.common import IKError, IKResult, TrackResult, pose_error  # noqa: F401
from .ik.dls import solve_ik_dls  # noqa: F401
from .ik.nicolato import _joint_step, _sinusoid_min, _sweeps, penalty_weight, solve_ik  # noqa: F401
from .ik.tracking import track_path  # noqa: F401

__all__ = ["IKResult", "TrackResult", "solve_ik", "solve_ik_dls", "track_path", "pose_error", "penalty_weight"]
