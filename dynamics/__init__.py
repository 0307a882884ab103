"""Rigid-body dynamics of robot arms, computed recursively and batched over path samples.

Models are immutable data (`RobotModel`); algorithms are free functions of (model, inputs) that accept
a single configuration of shape (n,) or a batch of shape (N, n). Builders and parsers are free functions
too (`from_dh`, `from_mdh`, `from_urdf`, `with_payload`, `to_urdf`); `dynamics._aliases` attaches them to
`RobotModel` as the documented aliases (``RobotModel.from_urdf``, ``robot.with_payload``, …).
"""

from .model import ModelError, RobotModel, check_inertial
from .forward_kinematics import forward_kinematics, frame_jacobian, frame_pose
from .mass_matrix import mass_matrix
from .gravity_torques import gravity_torques
from .inverse_dynamics import friction_torques, inverse_dynamics
from .motor_torques import motor_torques
from .christoffel import christoffel
from .coriolis_tree import coriolis_matrix, coriolis_matrix_tree
from .christoffel_tree import christoffel_tree
from .operational_space_inertia import operational_space_inertia, operational_space_inertia_inverse
from .euler_zxz import EulerLink, EulerModel, euler_points, from_euler_zxz, to_robot_model, zxz_euler
from .charmie import charmie, charmie_robot  # via the old module, so `dynamics.charmie` stays the function
from .path_coefficients import PathCoefficients, path_coefficients
from .io.robots import load_robot
from .payload import PayloadError, RigidBodyInertia, with_payload
from .io import from_dh, from_mdh, from_urdf, to_urdf
from . import _aliases  # noqa: F401  (RobotModel.from_urdf, robot.with_payload, … as aliases)
from .inverse_kinematics import IKError, IKResult, TrackResult, pose_error, solve_ik, solve_ik_dls, track_path

__all__ = [
    "ModelError", "RobotModel", "check_inertial",
    "forward_kinematics", "frame_pose", "frame_jacobian",
    "mass_matrix", "gravity_torques", "inverse_dynamics", "friction_torques", "motor_torques",
    "christoffel", "coriolis_matrix", "path_coefficients", "PathCoefficients", "load_robot",
    "coriolis_matrix_tree", "christoffel_tree", "operational_space_inertia", "operational_space_inertia_inverse",
    "EulerLink", "EulerModel", "euler_points", "from_euler_zxz", "to_robot_model", "zxz_euler",
    "charmie", "charmie_robot",
    "PayloadError", "RigidBodyInertia", "with_payload", "from_dh", "from_mdh", "from_urdf", "to_urdf",
    "IKError", "IKResult", "TrackResult", "pose_error", "solve_ik", "solve_ik_dls", "track_path",
]
