"""Bridges to the peer libraries we compare against (Pinocchio, toppra); test/benchmark extras only."""

from __future__ import annotations

import numpy as np

from dynamics import RobotModel


def to_pinocchio(robot: RobotModel):
    """A `pinocchio.Model` with the same joints, placements, inertias and gravity as `robot`
    (joint i of ours is Pinocchio joint i + 1). Needs the `pin` package (`pip install -e ".[test]"`)."""
    try:
        import pinocchio as pin
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("pinocchio is not installed: pip install -e '.[test]'") from exc
    for i in range(1, robot.n):
        # Pinocchio's algorithms assume depth-first numbering: each subtree is a contiguous range
        k = i - 1
        while k >= 0 and k != robot.parents[i]:
            k = robot.parents[k]
        if k != robot.parents[i]:
            raise ValueError(f"robot '{robot.name}': joints are not numbered depth-first "
                             f"(joint {i}'s parent {robot.parents[i]} is not on the path to joint {i - 1})")
    model = pin.Model()
    model.name = robot.name
    for i in range(robot.n):
        axis = np.array(robot.axes[i], dtype=float)
        if robot.joint_types[i] == "prismatic":
            jm = pin.JointModelPrismaticUnaligned(axis)
        else:
            jm = pin.JointModelRevoluteUnaligned(axis)
        placement = pin.SE3(np.array(robot.placement_rotations[i]), np.array(robot.placement_translations[i]))
        jid = model.addJoint(int(robot.parents[i]) + 1, jm, placement, robot.joint_names[i])
        inertia = pin.Inertia(float(robot.masses[i]), np.array(robot.coms[i]), np.array(robot.inertias[i]))
        model.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
    model.gravity = pin.Motion(np.array(robot.gravity, dtype=float), np.zeros(3))
    return model


def pinocchio_christoffel(model, data, q: np.ndarray) -> np.ndarray:
    """Christoffel symbols C[k, i, j] of a Pinocchio model at one configuration, from
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
