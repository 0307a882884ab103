"""Following a sequence of targets: the recursive method sample by sample (Section 5.1, optionally from an
extrapolated start), or the closed-loop pseudo-inverse scheme of eq. 6."""

from __future__ import annotations

import numpy as np

from ..forward_kinematics import frame_jacobian
from ..model import RobotModel
from ..checks import short_repr
from .common import (IKError, TrackResult, _Chain, _as_q, _end_pose, _joint_limits, _on_limits, _options,
                     _parse_targets, _rot_angle, _rot_log, _target_array, _velocity_bound)
from .nicolato import _solve

SWEEPS_BEFORE_POLISH = 5        # recursive sweeps per sample before a Newton polish (tracking mode)


def track_path(robot: RobotModel, targets, q0, frame: str | None = None, *, method: str = "recursive",
               dt: float | None = None, qd_max=None, penalty: bool = False, tol_pos: float = 1e-5,
               tol_rot: float | None = None, max_sweeps: int = 500, rot_weight: float = 0.2, step: str = "paper",
               newton_steps: int = 30, polish_after: int = SWEEPS_BEFORE_POLISH, gain: float = 100.0, q_min=None,
               q_max=None, predict: bool = False, stop_at_failure: bool = False) -> TrackResult:
    """Joint positions following a sequence of targets (N positions (N, 3) or poses (N, 4, 4)).

    ``method="recursive"`` (Section 5.1): each sample is solved by the recursive sweeps starting from the
    previous solution (the first from ``q0``, e.g. a preferred posture), by default with the paper's step
    (eq. 21) and tolerance (Section 6: √h ≤ 10⁻⁵ m, applied to both parts of h, so ``tol_rot`` defaults to
    ``tol_pos / rot_weight``: the orientation error as an arc of radius L); position limits by clamping (eq. 22)
    or, with ``penalty``, slowed down by eq. 23–24; with ``dt`` and ``qd_max`` the joint velocities are
    limited per time step (eq. 22). Only a sample the first ``polish_after`` sweeps leave outside the
    tolerance is polished by up to ``newton_steps`` damped Gauss–Newton steps (an addition to the paper;
    ``newton_steps=0``: the paper's method alone, e.g. ``step="paper", newton_steps=0`` reproduces
    Fig. 4–7). `TrackResult.sweeps` / ``newton_steps`` count both per sample.
    ``method="pinv"``: the classical closed-loop pseudo-inverse scheme q̇ = J⁺(v + K e) (eq. 6, K = gain·1),
    integrated with explicit Euler over ``dt`` (required), v from finite differences of the targets.
    The first sample is then taken as reached by q0 (start on the path). Eq. 6 knows no joint limits: the joints
    are not clamped, and a sample counts as reached only within the tolerances and the position limits
    (``q_min``/``q_max``, the model's by default); ``penalty``, ``qd_max``, ``predict`` and ``stop_at_failure``
    are refused.

    ``predict`` (recursive method): start each sample's sweeps from the previous solution extrapolated
    linearly, q_{k−1} + (q_{k−1} − q_{k−2}) within the limits, instead of q_{k−1}. On densely sampled paths
    the start is then second-order close and a few sweeps replace ten; the self-motion of a redundant arm
    continues smoothly instead of restarting at rest each sample.

    ``stop_at_failure`` (recursive method): stop at the first sample not reached; the samples after it are
    not solved (``success`` False, ``q`` the last solution, ``pos_err``/``rot_err`` NaN, no sweeps). For
    callers that only report where a path leaves the reach: past that point every sample may cost
    ``max_sweeps`` sweeps and the Newton steps (seconds for a path)."""
    tol_rot, lo, hi, vmax_dt = _track_options(
        robot, method=method, dt=dt, qd_max=qd_max, penalty=penalty, tol_pos=tol_pos, tol_rot=tol_rot,
        max_sweeps=max_sweeps, rot_weight=rot_weight, step=step, newton_steps=newton_steps, polish_after=polish_after,
        gain=gain, q_min=q_min, q_max=q_max, predict=predict, stop_at_failure=stop_at_failure)
    targets = _target_array("targets", targets)
    N = targets.shape[0]
    q = _as_q(robot, q0)
    Q = np.empty((N, robot.n))
    pe = np.zeros(N)
    re = np.zeros(N)
    sw = np.zeros(N, int)
    ns = np.zeros(N, int)
    ok = np.zeros(N, bool)
    if method == "recursive":
        chain = _Chain(robot, frame)
        q = _on_limits(chain, q, lo, hi)
        parsed = _parse_targets("targets", targets)
        for k in range(N):
            start = np.clip(2.0 * q - Q[k - 2], lo, hi) if predict and k >= 2 else q.copy()
            res = _solve(chain, start, *parsed[k], tol_pos=tol_pos, tol_rot=tol_rot, max_sweeps=max_sweeps,
                         L2=float(rot_weight) ** 2, step=step, vmax_dt=vmax_dt if k > 0 else None, penalty=penalty,
                         newton_steps=newton_steps, newton_switch=0.0, newton_slow=None, damping=1e-4,
                         q_min=lo, q_max=hi, polish_after=int(polish_after))
            q = res.q
            Q[k], pe[k], re[k], sw[k], ns[k], ok[k] = q, res.pos_err, res.rot_err, res.sweeps, res.newton_steps, res.success
            if stop_at_failure and not res.success:
                Q[k + 1:], pe[k + 1:], re[k + 1:] = q, np.nan, np.nan
                break
        return TrackResult(Q, pe, re, sw, ok, ns)
    chain = _Chain(robot, frame)
    cols = np.array(chain.joints)
    parsed = _parse_targets("targets", targets)
    P = np.array([p for p, _ in parsed])
    V = np.gradient(P, dt, axis=0) if N > 1 else np.zeros_like(P)
    rot = parsed[0][1] is not None
    if rot:
        Rs = [R for _, R in parsed]
        W = np.zeros((N, 3))
        for k in range(N - 1):
            W[k] = _rot_log(Rs[k + 1] @ Rs[k].T) / dt
        W[-1] = W[-2] if N > 1 else 0.0
    for k in range(N):
        Te = _end_pose(chain, q)
        e = P[k] - Te[:3, 3]
        v = V[k]
        if rot:
            e = np.concatenate([e, _rot_log(Rs[k] @ Te[:3, :3].T)])
            v = np.concatenate([v, W[k]])
        Q[k] = q
        pe[k] = np.linalg.norm(P[k] - Te[:3, 3])
        re[k] = _rot_angle(Rs[k], Te[:3, :3]) if rot else 0.0
        # reached to the tolerance (not 1 mm whatever tol_pos said) and within the position limits, which eq. 6
        # does not know: the joints are not clamped, a sample beyond a limit is reported, not hidden
        ok[k] = pe[k] <= tol_pos and re[k] <= tol_rot and bool(np.all((lo <= q) & (q <= hi)))
        J = frame_jacobian(robot, q, frame)[:, cols]
        if not rot:
            J = J[:3]
        qd = np.linalg.pinv(J) @ (v + gain * e)                # eq. 6, J⁺ = Jᵀ(JJᵀ)⁻¹
        q = q.copy()
        q[cols] += dt * qd
    return TrackResult(Q, pe, re, sw, ok, ns)


def _track_options(robot, *, method, dt, qd_max, penalty, tol_pos, tol_rot, max_sweeps, rot_weight, step, newton_steps,
                   polish_after, gain, q_min, q_max, predict, stop_at_failure):
    """`track_path`'s checks of everything but the targets, q0 and the frame, one-line IKErrors before any work:
    (tol_rot, its default filled in; q_min, q_max; the velocity bound per step or None). `batch.track_paths`
    makes them once for all its paths, in the same words."""
    _options(counts={"max_sweeps": max_sweeps, "newton_steps": newton_steps, "polish_after": polish_after},
             numbers={"dt": dt, "tol_pos": tol_pos, "tol_rot": tol_rot, "rot_weight": rot_weight, "gain": gain},
             switches={"penalty": penalty, "predict": predict, "stop_at_failure": stop_at_failure},
             optional=("dt", "tol_rot"))
    if not isinstance(method, str) or not isinstance(step, str):
        raise IKError(f"method, step: expected names, got {short_repr(method)}, {short_repr(step)}")
    if predict and qd_max is not None and dt is not None:
        raise IKError("predict: not with a velocity limit (eq. 22 bounds the step from the previous sample)")
    if method not in ("recursive", "pinv"):
        raise IKError(f"method: expected 'recursive' or 'pinv', got {method!r}")
    if method == "pinv" and dt is None:
        raise IKError("dt: required for method='pinv' (eq. 6 is integrated in time)")
    if method == "pinv":                # (each was accepted and ignored)
        unused = [name for name, on in (("penalty", penalty), ("predict", predict), ("stop_at_failure", stop_at_failure),
                                        ("qd_max", qd_max is not None)) if on]
        if unused:
            raise IKError(f"{unused[0]}: not used by method='pinv' (eq. 6 has neither limits nor sweeps; the "
                          "recursive method's option)")
    if method == "recursive" and step not in ("exact", "paper"):
        raise IKError(f"step: expected 'exact' or 'paper', got {step!r}")
    lo, hi = _joint_limits(robot, q_min, q_max)
    return (tol_pos / rot_weight if tol_rot is None else tol_rot), lo, hi, _velocity_bound(robot, qd_max, dt)
