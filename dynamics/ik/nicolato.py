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

from __future__ import annotations

import math

import numpy as np

from ..model import RobotModel
from ..checks import short_repr
from .common import (TWO_PI, IKError, IKResult, _as_q, _Chain, _dot3, _end_pose, _joint_limits, _norm3, _on_limits,
                     _options, _parse_target, _rot_angle, _rot_log, _velocity_bound)
from .dls import _dls_steps


def penalty_weight(q, q_min, q_max):
    """Velocity penalty w = 4(θ_max − θ)(θ − θ_min)/(θ_max − θ_min)² (eq. 23); 1 for unlimited joints."""
    q, lo, hi = np.broadcast_arrays(np.asarray(q, float), np.asarray(q_min, float), np.asarray(q_max, float))
    w = np.ones_like(q)
    finite = np.isfinite(lo) & np.isfinite(hi) & (hi > lo)
    w[finite] = np.clip(4.0 * (hi[finite] - q[finite]) * (q[finite] - lo[finite]) / (hi[finite] - lo[finite]) ** 2,
                        0.0, 1.0)
    return w


def _weight(qj: float, lo: float, hi: float) -> float:
    """eq. 23 for one joint with finite limits (scalar form of `penalty_weight`)."""
    return min(max(4.0 * (hi - qj) * (qj - lo) / ((hi - lo) * (hi - lo)), 0.0), 1.0) if hi > lo else 1.0


# ------------------------------------------------------------------------------ one joint (eq. 18–21)
def _sinusoid_min(k1: float, k2: float, lo: float, hi: float) -> float:
    """Δ in [lo, hi] minimising k₁ cos Δ + k₂ sin Δ (the varying part of h, eq. 18 exact form)."""
    amp = math.hypot(k1, k2)
    if amp < 1e-300:
        return 0.0 if lo <= 0.0 <= hi else (lo if abs(lo) < abs(hi) else hi)
    star = math.atan2(-k2, -k1)                  # unconstrained minimiser in (−π, π]
    best = None
    for cand in (star, star - TWO_PI, star + TWO_PI):
        if lo <= cand <= hi and (best is None or abs(cand) < abs(best)):
            best = cand
    if best is not None:
        return best
    # no minimiser inside: the sinusoid is unimodal between minimisers, so an end point is optimal
    f_lo = k1 * math.cos(lo) + k2 * math.sin(lo)
    f_hi = k1 * math.cos(hi) + k2 * math.sin(hi)
    return lo if f_lo <= f_hi else hi


def _joint_step(z, o, p, R, p_d, R_d, L2, prismatic: bool, step: str, lo: float, hi: float) -> float:
    """Displacement in [lo, hi] of one joint (world axis z through o) bringing the end pose (p, R)
    nearest to (p_d, R_d) in the sense of h."""
    return _minimise(_step_problem(z, o, p, R, p_d, R_d, L2, prismatic, step), lo, hi)


def _minimise(problem: tuple, lo: float, hi: float) -> float:
    """The minimiser on [lo, hi] of a joint's 1-D problem (`_step_problem`): a quadratic's clamped vertex,
    or the sinusoid's minimiser."""
    if problem[0] == "vertex":
        return min(max(problem[1], lo), hi)
    return _sinusoid_min(problem[1], problem[2], lo, hi)


def _step_problem(z, o, p, R, p_d, R_d, L2, prismatic: bool, step: str) -> tuple:
    """h along one joint's displacement Δ (world axis z through o; end pose (p, R)): ("vertex", Δ*) when
    h is quadratic in Δ (prismatic joint, or the paper's small-angle step), ("sinusoid", k₁, k₂) when
    h = k₀ + k₁ cos Δ + k₂ sin Δ (the exact step). Made once per joint move, minimised on any interval
    (`_minimise`: the penalty of eq. 23–24 asks for two)."""
    if prismatic:                               # h = |e − Δ z|², quadratic: Δ* = e·z
        return "vertex", _dot3(p_d - p, z)
    r = p - o                                   # ^{i−1}p_n in world axes (eq. 17)
    z0, z1, z2 = z.tolist()
    r0, r1, r2 = r.tolist()
    u = np.array((z1 * r2 - z2 * r1, z2 * r0 - z0 * r2, z0 * r1 - z1 * r0))   # z × r: ∂p/∂Δ at Δ = 0 (eq. 15–16)
    if step == "paper":
        # eq. 18–21 with R_z(Δ) ≈ 1 + Δ[z]× (eq. 15): h ≈ |e_p − Δu|² + L²|φ − Δz|² = k₀Δ² + k₁Δ + k₂
        k0 = _dot3(u, u)                        # eq. 19: c_x² + c_y², the part of r normal to z
        k1 = -2.0 * _dot3(p_d - p, u)
        if R_d is not None:
            phi = _rot_log(R_d @ R.T)           # world-frame rotation still to do
            k0 += L2
            k1 += -2.0 * L2 * _dot3(phi, z)
        if k0 <= 1e-300:                        # end frame on the axis: no contribution (Section 5.2)
            return "vertex", 0.0
        return "vertex", -k1 / (2.0 * k0)      # eq. 21 (the limits, eq. 22, by `_minimise`)
    # exact: h(Δ) = k₀ + k₁ cos Δ + k₂ sin Δ.  Position part: with d = p_d − o,
    # |d − R_z(Δ) r|² = |d|² + |r|² − 2[(d·z)(z·r) + cos Δ d·r⊥ + sin Δ d·(z × r)]
    d = p_d - o
    k1 = -2.0 * _dot3(d, r - _dot3(z, r) * z)
    k2 = -2.0 * _dot3(d, u)
    if R_d is not None:
        # orientation part L²(3 − tr(R_dᵀ R_z(Δ) R)) = L²(3 − tr(R_z(Δ) M)), M = R R_dᵀ, with
        # tr(R_z M) = zᵀMz + cos Δ (tr M − zᵀMz) + sin Δ tr([z]× M)
        M = R @ R_d.T
        zMz = _dot3(z @ M, z)
        Ao = float(M[0, 0] + M[1, 1] + M[2, 2]) - zMz
        Bo = float(z[0] * (M[1, 2] - M[2, 1]) + z[1] * (M[2, 0] - M[0, 2]) + z[2] * (M[0, 1] - M[1, 0]))
        k1 -= L2 * Ao
        k2 -= L2 * Bo
    return "sinusoid", k1, k2


def _limits_interval(q_k, qmin, qmax, q_start, vmax_dt):
    lo, hi = qmin - q_k, qmax - q_k
    if vmax_dt is not None:                     # |accumulated displacement| ≤ θ̇_max Δt (eq. 22)
        lo = max(lo, q_start - vmax_dt - q_k)
        hi = min(hi, q_start + vmax_dt - q_k)
    if lo > hi:                                 # already outside (e.g. a start outside the limits)
        lo = hi = min(max(0.0, lo), hi)
    return lo, hi


def _sweeps(chain: _Chain, q: np.ndarray, p_d, R_d, L2, *, tol_pos, tol_rot, max_sweeps, step,
            q_start=None, vmax_dt=None, use_penalty=False, q_min=None, q_max=None, slow_ratio=None):
    """Repeat the fixed joint sequence until the goal is reached or no joint can contribute.

    Returns (q, pos_err, rot_err, sweeps, status)."""
    robot = chain.robot
    q_min = robot.q_min if q_min is None else q_min
    q_max = robot.q_max if q_max is None else q_max
    if q_start is None:
        q_start = q.copy()
    m = len(chain.joints)
    prev_h = math.inf
    stall = 0
    sweeps = 0
    status = "max_iterations"
    while True:
        # current error (sweep start)
        tails = chain.tails(q)
        Tw = np.eye(4)
        Te = None
        moved = 0.0
        for k in range(m):
            j = chain.joints[k]
            F = Tw @ chain.P[k]                            # joint frame before its motion (eq. 13)
            z = F[:3, :3] @ chain.axes[k]
            Te = F @ tails[k]                              # end pose (eq. 16 at Δθ = 0)
            if sweeps == 0 and k == 0:
                e_p0 = _norm3(p_d - Te[:3, 3])
                e_r0 = 0.0 if R_d is None else _rot_angle(R_d, Te[:3, :3])
                if e_p0 <= tol_pos and e_r0 <= tol_rot:
                    return q, e_p0, e_r0, 0, "converged"
            if sweeps >= max_sweeps:
                break
            lo, hi = _limits_interval(q[j], q_min[j], q_max[j], q_start[j], None if vmax_dt is None else vmax_dt[j])
            problem = _step_problem(z, F[:3, 3], Te[:3, 3], Te[:3, :3], p_d, R_d, L2, chain.prismatic[k], step)
            if use_penalty and np.isfinite(q_min[j]) and np.isfinite(q_max[j]):
                # eq. 23–24: slow a joint down when it moves towards its nearer position limit
                free = _minimise(problem, -math.pi, math.pi) if not chain.prismatic[k] else _minimise(problem, -np.inf, np.inf)
                if (q[j] - 0.5 * (q_min[j] + q_max[j])) * free > 0:
                    delta = min(max(free * _weight(q[j], q_min[j], q_max[j]), lo), hi)
                elif lo <= free <= hi:              # |free| ≤ π: also the minimiser on [lo, hi]
                    delta = free
                else:
                    delta = _minimise(problem, lo, hi)
            else:
                delta = _minimise(problem, lo, hi)
            if delta != 0.0:
                q[j] += delta
                moved = max(moved, abs(delta))
            Tw = F @ chain.joint_transform(k, q[j])
        if sweeps >= max_sweeps:
            break
        sweeps += 1
        Te = Tw @ chain.T_end
        e_p = _norm3(p_d - Te[:3, 3])
        e_r = 0.0 if R_d is None else _rot_angle(R_d, Te[:3, :3])
        if e_p <= tol_pos and e_r <= tol_rot:
            return q, e_p, e_r, sweeps, "converged"
        h = e_p * e_p + L2 * 2.0 * (1.0 - math.cos(e_r))
        # no joint contributes any more (Δθ* = 0 for all i, Section 5.1): goal out of reach / limits
        if moved < 1e-15 or h >= prev_h * (1.0 - 1e-12):
            stall += 1
            if stall >= 3:
                status = "stalled"
                break
        else:
            stall = 0
        # linear convergence has become slow (h shrinks by less than 1 − slow_ratio per sweep)
        if slow_ratio is not None and sweeps >= 5 and h > slow_ratio * prev_h:
            status = "slow"
            break
        prev_h = h
        if sweeps >= max_sweeps:
            break
    Te = _end_pose(chain, q)
    e_p = _norm3(p_d - Te[:3, 3])
    e_r = 0.0 if R_d is None else _rot_angle(R_d, Te[:3, :3])
    return q, e_p, e_r, sweeps, status


def solve_ik(robot: RobotModel, target, q0, frame: str | None = None, *, tol_pos: float = 1e-6,
             tol_rot: float = 1e-6, max_sweeps: int = 500, rot_weight: float = 0.2, step: str = "exact",
             qd_max=None, dt: float | None = None, penalty: bool = False, newton_steps: int = 30,
             newton_switch: float = 1e-3, newton_slow: float | None = 0.9, damping: float = 1e-4, q_min=None,
             q_max=None, polish_after: int | None = None) -> IKResult:
    """Recursive inverse kinematics (Nicolato & Madrid 2005) of ``frame`` (default the tool frame).

    ``target``: a position (3,) or a pose (4, 4) in the base frame. ``q0``: start (the "current joint
    configuration" θ_{i,0}); joints not moving ``frame`` are left unchanged. ``rot_weight`` is the length
    L (m) weighing orientation against position in h. ``step``: "exact" (sinusoid minimiser) or "paper"
    (small-angle eq. 21). Position limits are always respected (``q_min``/``q_max`` override the model's);
    with ``dt`` and ``qd_max`` (array or "robot") the total displacement is limited to q̇_max Δt (eq. 22).
    ``penalty`` enables eq. 23–24.

    Newton finish (an addition to the paper, ``newton_steps > 0``): up to ``newton_steps`` damped
    Gauss–Newton steps take over when the sweeps have brought the error below ``newton_switch`` (m and
    rad), or h shrinks by less than a factor ``newton_slow`` per sweep (None: never), or the sweeps stop
    progressing short of the tolerance. With ``polish_after`` = k the sweeps instead run to the tolerance
    itself (the switch radius and the slow test are off) and the Newton steps only *polish* a pose the
    first k sweeps did not bring within the tolerance (the tracking mode of `track_path`).
    ``newton_steps=0``: the pure recursive method."""
    chain, qlo, qhi, vmax_dt = _prepared(robot, frame, step=step, tol_pos=tol_pos, tol_rot=tol_rot,
                                         max_sweeps=max_sweeps, rot_weight=rot_weight, qd_max=qd_max, dt=dt,
                                         penalty=penalty, newton_steps=newton_steps, newton_switch=newton_switch,
                                         newton_slow=newton_slow, damping=damping, q_min=q_min, q_max=q_max,
                                         polish_after=polish_after)
    p_d, R_d = _parse_target(target)
    q = _on_limits(chain, _as_q(robot, q0), qlo, qhi)
    return _solve(chain, q, p_d, R_d, tol_pos=tol_pos, tol_rot=tol_rot, max_sweeps=max_sweeps,
                  L2=float(rot_weight) ** 2, step=step, vmax_dt=vmax_dt, penalty=penalty,
                  newton_steps=newton_steps, newton_switch=newton_switch, newton_slow=newton_slow, damping=damping,
                  q_min=qlo, q_max=qhi, polish_after=polish_after)


def _prepared(robot, frame, *, step, tol_pos, tol_rot, max_sweeps, rot_weight, qd_max, dt, penalty, newton_steps,
              newton_switch, newton_slow, damping, q_min, q_max, polish_after):
    """`solve_ik`'s checks of everything but the target and the start, one-line IKErrors before any work:
    (the chain to ``frame``, q_min, q_max, the velocity bound per step or None). `batch.solve_ik_batch` makes
    them once for all its targets, in the same words."""
    if not isinstance(step, str) or step not in ("exact", "paper"):
        raise IKError(f"step: expected 'exact' or 'paper', got {short_repr(step)}")
    _options(counts={"max_sweeps": max_sweeps, "newton_steps": newton_steps, "polish_after": polish_after},
             numbers={"tol_pos": tol_pos, "tol_rot": tol_rot, "rot_weight": rot_weight, "newton_switch": newton_switch,
                      "newton_slow": newton_slow, "damping": damping}, switches={"penalty": penalty},
             optional=("polish_after", "newton_slow"))
    chain = _Chain(robot, frame)
    qlo, qhi = _joint_limits(robot, q_min, q_max)
    return chain, qlo, qhi, _velocity_bound(robot, qd_max, dt)


def _solve(chain: _Chain, q: np.ndarray, p_d, R_d, *, tol_pos, tol_rot, max_sweeps, L2, step, vmax_dt, penalty,
           newton_steps, newton_switch, newton_slow, damping, q_min, q_max, polish_after=None) -> IKResult:
    """`solve_ik` on a parsed target and a prepared chain (`track_path` re-uses one chain for every sample)."""
    q_start = q.copy()
    nsteps = 0
    if newton_steps > 0 and polish_after is not None:
        # tracking: the sweeps to the tolerance (Section 5.1), at most polish_after of them
        switch_pos, switch_rot, slow, first = tol_pos, tol_rot, None, min(polish_after, max_sweeps)
    elif newton_steps > 0:
        switch_pos, switch_rot = max(tol_pos, newton_switch), max(tol_rot, newton_switch)
        slow, first = newton_slow, max_sweeps
    else:
        switch_pos, switch_rot, slow, first = tol_pos, tol_rot, None, max_sweeps
    q, e_p, e_r, total, status = _sweeps(chain, q, p_d, R_d, L2, tol_pos=switch_pos, tol_rot=switch_rot,
                                         max_sweeps=first, step=step, q_start=q_start, vmax_dt=vmax_dt,
                                         use_penalty=penalty, q_min=q_min, q_max=q_max, slow_ratio=slow)
    ok = e_p <= tol_pos and e_r <= tol_rot
    if not ok and newton_steps > 0:
        lo_box = None if vmax_dt is None else q_start - vmax_dt
        hi_box = None if vmax_dt is None else q_start + vmax_dt
        q, e_p, e_r, nsteps, ok = _dls_steps(chain.robot, chain, q, p_d, R_d, None, tol_pos=tol_pos,
                                             tol_rot=tol_rot, max_steps=newton_steps, damping=damping,
                                             q_min=q_min, q_max=q_max, lo_box=lo_box, hi_box=hi_box)
        if not ok:
            # Newton failed to converge (far from goal): let the sweeps continue to the end
            q, e_p, e_r, s2, status = _sweeps(chain, q, p_d, R_d, L2, tol_pos=tol_pos, tol_rot=tol_rot,
                                              max_sweeps=max(max_sweeps - total, 0), step=step, q_start=q_start,
                                              vmax_dt=vmax_dt, use_penalty=penalty, q_min=q_min, q_max=q_max)
            total += s2
            ok = e_p <= tol_pos and e_r <= tol_rot
    return IKResult(q=q, success=bool(ok), pos_err=e_p, rot_err=e_r, sweeps=total, newton_steps=nsteps,
                    status="converged" if ok else status)
