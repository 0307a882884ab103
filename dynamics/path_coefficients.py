"""Path coefficients of the dynamics along q(θ) (Safeea eq. 5, 32–34):

    τ = m̃ θ̈ + c̃ θ̇² + d̃,   m̃ = M q′,   c̃_k = Σ_j a_kj q″_j + Σ_ij c^k_ij q′_i q′_j,   d̃ = g + F_c sign(q′)

with M and the Christoffel symbols c^k_ij computed recursively at every sample. Viscous friction
F_v q′ θ̇ is not of this form (it is linear in θ̇); the planner adds it separately.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .blocks import in_blocks
from .checks import finite_result, same_batch
from .kinematics import dynamics_origin, world_quantities_t
from .christoffel import christoffel_quadratic_world, christoffel_world
from .gravity_torques import gravity_torques_world
from .mass_matrix import composite_inertias, mass_matrix_world
from .model import RobotModel


class PathCoefficients(NamedTuple):
    m: np.ndarray   # (..., n)
    c: np.ndarray   # (..., n)
    d: np.ndarray   # (..., n)


def path_coefficients(robot: RobotModel, q, dq, ddq, *, method: str = "contracted") -> PathCoefficients:
    """m̃, c̃, d̃ at path samples q(θ), q′ = dq/dθ, q″ = d²q/dθ², each of shape (..., n).

    ``method="full"`` forms all Christoffel symbols c^k_ij (O(n³) per sample) and contracts them
    with q′ as written in eq. 32; ``"contracted"`` (default) runs the same recursion with the
    contraction moved inside it (O(n²), see `christoffel_quadratic_world`). Both agree to rounding.
    """
    if method not in ("contracted", "full"):
        raise ValueError(f"method: expected 'contracted' or 'full', got {method!r}")
    (q2, dq2, ddq2), single = same_batch(robot, q, ("dq", dq), ("ddq", ddq))
    nb = robot.n_bodies                                             # work a sample: M, composites; c^k_ij if full
    work = 8.0 * (6 * nb * nb + (3 * nb ** 3 + robot.n ** 3 if method == "full" else 0)) + 4096
    m, c, d = in_blocks(lambda *x: _coefficients(robot, *x, method), work, q2, dq2, ddq2)
    finite_result("dq, ddq", "path_coefficients", np.stack((m, c)), dq2, ddq2)
    out = PathCoefficients(m, c, d)
    return PathCoefficients(*(x[0] for x in out)) if single else out


def _coefficients(robot: RobotModel, q2, dq2, ddq2, method: str) -> tuple:
    """m̃, c̃ (non-finite where q′, q″ overflow them), d̃ of a block of samples."""
    W = world_quantities_t(robot, q2, dynamics_origin(robot))
    composites = composite_inertias(robot, W)
    M = mass_matrix_world(robot, W, composites)
    with np.errstate(over="ignore", invalid="ignore"):              # huge q′, q″ overflow: one ModelError after
        m = np.einsum("nkj,nj->nk", M, dq2)
        if method == "full":
            quad = np.einsum("nkij,ni,nj->nk", christoffel_world(robot, W), dq2, dq2, optimize=True)
        else:
            quad = christoffel_quadratic_world(robot, W, dq2)
        c = np.einsum("nkj,nj->nk", M, ddq2) + quad                 # eq. 32
    return m, c, gravity_torques_world(robot, W, composites) + robot.coulomb * np.sign(dq2)
