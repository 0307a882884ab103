"""Bridges to the peer libraries we compare against (Pinocchio, toppra); test/benchmark extras only."""

from __future__ import annotations

import numpy as np

from dynamics import RobotModel


def to_pinocchio(robot: RobotModel):
    """pinocchio Model with the same tree, placements, axes, inertias, gravity and named frames.

    Any tree of revolute/prismatic joints with arbitrary axes (JointModel*Unaligned); pinocchio's joint
    frame after the joint motion is placement · X_joint(q), as ours, and its body inertia is given
    about the COM in the joint (= body) frame."""
    try:
        import pinocchio as pin
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("pinocchio is not installed: pip install -e '.[test]'") from exc
    model = pin.Model()
    model.name = robot.name
    model.gravity = pin.Motion(np.asarray(robot.gravity, float), np.zeros(3))
    # pinocchio's algorithms need every subtree contiguous in q (its CRBA uses nvSubtree), so joints
    # are added depth-first; Pinocchio's joint order can then differ from ours (match by joint name).
    children = {i: [c for c in range(robot.n) if robot.parents[c] == i] for i in range(-1, robot.n)}
    order, stack = [], list(reversed(children[-1]))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children[i]))
    jids = {}
    for i in order:
        axis = np.asarray(robot.axes[i], float)
        jm = (pin.JointModelPrismaticUnaligned(axis) if robot.joint_types[i] == "prismatic"
              else pin.JointModelRevoluteUnaligned(axis))
        parent = 0 if robot.parents[i] < 0 else jids[robot.parents[i]]
        placement = pin.SE3(np.asarray(robot.placement_rotations[i], float),
                            np.asarray(robot.placement_translations[i], float))
        jid = model.addJoint(parent, jm, placement, robot.joint_names[i])
        model.appendBodyToJoint(jid, pin.Inertia(float(robot.masses[i]), np.asarray(robot.coms[i], float),
                                                 np.asarray(robot.inertias[i], float)), pin.SE3.Identity())
        model.addFrame(pin.Frame(robot.link_names[i], jid, pin.SE3.Identity(), pin.FrameType.BODY))
        jids[i] = jid
    for k, name in enumerate(robot.frame_names):
        T = np.asarray(robot.frame_transforms[k], float)
        model.addFrame(pin.Frame(name, jids[robot.frame_bodies[k]], pin.SE3(T[:3, :3], T[:3, 3]),
                                 pin.FrameType.OP_FRAME))
    return model


def pinocchio_christoffel(model, data, q: np.ndarray) -> np.ndarray:
    """Christoffel symbols C[k, i, j] of a Pinocchio model (in its joint order) at one configuration, from
    `computeRNEADerivatives` with unit velocities: ∂τ_k/∂v_i at v = e_j equals 2 c^k_ij
    (gravity must be off in `model`). Pinocchio writes only the entries of ``dtau_dv`` that its
    tree's sparsity pattern allows, so the matrix is cleared before every call."""
    import pinocchio as pin
    n = model.nv
    C = np.empty((n, n, n))
    zero = np.zeros(n)
    for j in range(n):
        v = np.zeros(n)
        v[j] = 1.0
        data.dtau_dv[:, :] = 0.0
        pin.computeRNEADerivatives(model, data, q, v, zero)
        C[:, :, j] = 0.5 * data.dtau_dv
    return C
