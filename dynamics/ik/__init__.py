"""Inverse kinematics: Nicolato & Madrid's recursive algorithm (`nicolato`), damped least squares
(`dls`), path tracking (`tracking`) and several starts / equivalent targets (`multistart`), over a
shared chain model (`common`)."""

from .common import IKError, IKResult, TrackResult, pose_error
from .dls import solve_ik_dls
from .multistart import MultiStartResult, random_seeds, solve_ik_multistart
from .nicolato import penalty_weight, solve_ik
from .tracking import track_path

__all__ = ["IKError", "IKResult", "TrackResult", "solve_ik", "solve_ik_dls", "track_path", "pose_error",
           "penalty_weight", "MultiStartResult", "random_seeds", "solve_ik_multistart"]
