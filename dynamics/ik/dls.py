"""Damped least squares (Levenberg–Marquardt pseudo-inverse) IK, for comparison with Nicolato & Madrid
and as the Newton finish of `nicolato.solve_ik`."""

from __future__ import annotations

import numpy as np

from ..model import RobotModel
from .common import IKResult, _Chain, _as_q, _joint_limits, _on_limits, _options, _parse_target, _rot_angle, _rot_log


# ------------------------------------------------------------------------------ damped least squares
def _dls_steps(robot, chain, q, p_d, R_d, frame, *, tol_pos, tol_rot, max_steps, damping, q_min, q_max,
               lo_box=None, hi_box=None):
    """Damped Gauss–Newton (Levenberg–Marquardt) steps Δq = Jᵀ(JJᵀ + λ²1)⁻¹e with joints clamped to
    their limits (a joint at a limit that pushes outwards is frozen for the next step)."""
    cols = np.array(chain.joints)
    lo_q = np.maximum(q_min, lo_box) if lo_box is not None else np.array(q_min)
    hi_q = np.minimum(q_max, hi_box) if hi_box is not None else np.array(q_max)
    steps = 0
    free = np.ones(len(cols), bool)
    while True:
        Te, J = chain.jacobian(q)
        e_p = p_d - Te[:3, 3]
        if R_d is None:
            e = e_p
        else:
            e = np.concatenate([e_p, _rot_log(R_d @ Te[:3, :3].T)])
        pe = float(np.linalg.norm(e_p))
        re = 0.0 if R_d is None else _rot_angle(R_d, Te[:3, :3])
        if (pe <= tol_pos and re <= tol_rot) or steps >= max_steps:
            return q, pe, re, steps, (pe <= tol_pos and re <= tol_rot)
        if R_d is None:
            J = J[:3]
        Jf = J[:, free]
        lam2 = damping ** 2
        dq_free = Jf.T @ np.linalg.solve(Jf @ Jf.T + lam2 * np.eye(J.shape[0]), e)
        dq = np.zeros(len(cols))
        dq[free] = dq_free
        new = np.clip(q[cols] + dq, lo_q[cols], hi_q[cols])
        at_limit = (new <= lo_q[cols]) & (dq < 0) | (new >= hi_q[cols]) & (dq > 0)
        free = ~at_limit if (~at_limit).any() else np.ones(len(cols), bool)
        q[cols] = new
        steps += 1


def solve_ik_dls(robot: RobotModel, target, q0, frame: str | None = None, *, tol_pos: float = 1e-6,
                 tol_rot: float = 1e-6, max_iter: int = 200, damping: float = 1e-2, q_min=None,
                 q_max=None) -> IKResult:
    """Damped least-squares (Levenberg–Marquardt pseudo-inverse) IK for comparison:
    Δq = Jᵀ(JJᵀ + λ²1)⁻¹ e, e = (p_d − p, log(R_d Rᵀ)), joints clamped to their limits."""
    _options(counts={"max_iter": max_iter}, numbers={"tol_pos": tol_pos, "tol_rot": tol_rot, "damping": damping})
    p_d, R_d = _parse_target(target)
    q = _as_q(robot, q0)
    chain = _Chain(robot, frame)
    qlo, qhi = _joint_limits(robot, q_min, q_max)
    q = _on_limits(chain, q, qlo, qhi)
    q, e_p, e_r, steps, ok = _dls_steps(robot, chain, q, p_d, R_d, frame, tol_pos=tol_pos, tol_rot=tol_rot,
                                        max_steps=max_iter, damping=damping, q_min=qlo, q_max=qhi)
    return IKResult(q=q, success=bool(ok), pos_err=e_p, rot_err=e_r, sweeps=0, newton_steps=steps,
                    status="converged" if ok else "max_iterations")


