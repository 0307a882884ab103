"""Planning one arm of a branching robot (Talos of example-robot-data, legs and the other arm locked, the torso
held by its motors): the planned torques against Pinocchio's RNEA on the full, unreduced model with the locked
joints at their positions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dynamics
from fixtures import erd_path
from toppra_app import JointPath, plan_time_optimal

pin = pytest.importorskip("pinocchio")

LEGS = [f"leg_{side}_{k}_joint" for side in ("left", "right") for k in range(1, 7)]
LOCKED = {**{j: 0.0 for j in LEGS}, **{f"arm_right_{k}_joint": 0.0 for k in range(1, 8)}, "arm_right_4_joint": -0.5,
          "gripper_right_joint": 0.0, "gripper_left_joint": 0.0, "head_1_joint": 0.2, "head_2_joint": 0.0}


@pytest.fixture(scope="module")
def talos():
    p = erd_path("robots/talos_data/robots/talos_reduced.urdf")
    if p is None:
        pytest.skip("example-robot-data talos_reduced.urdf not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # (its as-found inertias load with a URDFWarning)
        robot = dynamics.RobotModel.from_urdf(p, locked_joints=LOCKED, tool_frame="gripper_left_base_link")
    return p, robot


def pinocchio_torques(path: str, robot, q, qd, qdd) -> np.ndarray:
    """RNEA of the full model (every joint of the file), the locked joints at their positions, at rest."""
    model = pin.buildModelFromUrdf(path)
    data = model.createData()
    cols = [model.idx_vs[model.getJointId(name)] for name in robot.joint_names]
    out = []
    for k in range(len(q)):
        Q = pin.neutral(model)
        for name, value in LOCKED.items():
            Q[model.idx_qs[model.getJointId(name)]] = value
        Q[cols] = q[k]
        V, A = np.zeros(model.nv), np.zeros(model.nv)
        V[cols], A[cols] = qd[k], qdd[k]
        out.append(pin.rnea(model, data, Q, V, A)[cols])
    return np.array(out)


def test_a_held_joint_of_recorded_waypoints_stays_at_rest_without_friction(talos):
    """A recorded left-arm motion (noisy, fitted with tolerance=) with the torso held at 0.12 and 0.32 rad. The
    least-squares fit gave the held torso joints q′ ~ 1e-15 of either sign, so the planner added their Coulomb
    friction (1 N·m in Talos' URDF) switching sign along the path: torques up to 1 N·m off for joints at rest.
    Now a held column stays exactly constant, as interpolated waypoints do, and the planned torques are Pinocchio's
    rigid-body torques plus the friction of the moving joints only."""
    path_file, robot = talos
    names = list(robot.joint_names)
    s = np.linspace(0.0, 1.0, 60)
    W = np.zeros((s.size, robot.n))
    W[:, names.index("torso_1_joint")] = 0.1234567
    W[:, names.index("torso_2_joint")] = 0.3217
    W[:, names.index("arm_left_1_joint")] = 0.4 * s
    W[:, names.index("arm_left_2_joint")] = 0.2 + 0.6 * s ** 2
    W[:, names.index("arm_left_4_joint")] = -0.5 - s
    moving = np.isin(np.arange(robot.n), [names.index(f"arm_left_{k}_joint") for k in (1, 2, 4)])
    W[:, moving] += np.random.default_rng(0).normal(scale=1e-4, size=(s.size, moving.sum()))
    path = JointPath.from_waypoints(W, tolerance=5e-4)
    assert len(path.knots) < 20                                     # fitted, not interpolated
    theta = np.linspace(0.0, 1.0, 2001)
    assert (path.dq(theta)[:, ~moving] == 0).all() and (path.ddq(theta)[:, ~moving] == 0).all()
    assert (path.q(theta)[:, ~moving] == W[0, ~moving]).all()
    assert np.abs(path.q(s) - W).max() <= 5e-4

    plan = plan_time_optimal(robot, path)
    t, q, qd, qdd, tau = plan.sample(5e-3)
    rigid = pinocchio_torques(path_file, robot, q, qd, qdd)
    friction = np.asarray(robot.coulomb) * np.sign(qd) + np.asarray(robot.viscous) * qd
    inner = slice(1, -1)                                            # (at rest at the ends: friction of sign q′)
    scale = np.abs(tau).max()
    assert np.abs(tau[inner] - rigid[inner] - friction[inner]).max() <= 1e-9 * scale
    assert np.abs(tau[:, ~moving] - rigid[:, ~moving]).max() <= 1e-9 * scale
