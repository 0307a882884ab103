"""Inverse kinematics by Nicolato & Madrid's recursive one-joint-at-a-time algorithm (IFAC 2005), with
damped least squares and path tracking beside it. The algorithms live in `dynamics.ik` (one module each:
`nicolato`, `dls`, `tracking`; the paper's equations are cited there and in docs/inverse_kinematics.md);
this module keeps the import path `dynamics.inverse_kinematics`."""

from .ik.common import IKError, IKResult, TrackResult, pose_error  # noqa: F401
from .ik.dls import solve_ik_dls  # noqa: F401
from .ik.multistart import MultiStartResult, random_seeds, solve_ik_multistart  # noqa: F401
from .ik.nicolato import _joint_step, _sinusoid_min, _sweeps, penalty_weight, solve_ik  # noqa: F401
from .ik.tracking import track_path  # noqa: F401

__all__ = ["IKResult", "TrackResult", "solve_ik", "solve_ik_dls", "track_path", "pose_error", "penalty_weight",
           "MultiStartResult", "random_seeds", "solve_ik_multistart"]
