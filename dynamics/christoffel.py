"""Christoffel symbols of the first kind by Safeea, Neto & Bearee's recursive algorithm (2019).

c^k_ji = ½(∂a_kj/∂q_i + ∂a_ki/∂q_j − ∂a_ji/∂q_k)   (eq. 4)

Frame-injection view (Section 3–4): let only joints j and i move, with unit velocities. Then the
torque at joint k is c^k_jj + 2 c^k_ji + c^k_ii (eq. 21–25), and c^k_ji is *half* the part of it due
to the product q̇_j q̇_i. For every link k driven by both joints (j ancestor-or-self of i, i
ancestor-or-self of k) that half is produced by

    f^k_ji = m_k k_j × (k_i × p_Cki)        (eq. 27; ½ m_k Γ^cor, eq. 11–12)
    h^k_ji = ½ (L_k k_j) × k_i              (eq. 26; ½ μ^cor, eq. 16–18)
    L_k    = R_k (tr(I_k) 1 − 2 I_k) R_kᵀ   (eq. 16)

and for j = i the same formulas give the centrifugal terms c^k_jj (eq. 10 and 15: f = m_k k_j ×
(k_j × p_Ckj), h = ½ (L_k k_j) × k_j), as the paper notes ("only with indices changed").
A backward recursion sums them into the force and moment at each joint (eq. 28–30):

    F^k = Σ_children F^c + f^k
    H^k = Σ_children (H^c + l × F^c) + h^k + p_Ckk × f^k,   l = o_c − o_k
    c^k_ji = k_kᵀ H^k

The paper treats serial revolute chains; the sums over children extend it to trees unchanged, and
a prismatic joint i (velocity k_i, no rotation) behind a revolute j contributes f = m_k k_j × k_i,
h = 0 (the Coriolis acceleration 2 ω_j × v_i, halved); every other pair with a prismatic joint
contributes nothing, and a prismatic joint k reads the force: c^k_ji = k_kᵀ F^k.
Pairs (j, i) on different branches have c^k_ji = 0. All sums run in world coordinates and are
vectorised over samples and (j, i) pairs: O(n³) per sample (Safeea Table 2).
"""

from __future__ import annotations

import numpy as np

from ._batch import World, as_batch, cross, world_quantities
from .model import PRISMATIC, RobotModel


def christoffel_world(robot: RobotModel, W: World) -> np.ndarray:
    N, n = W.z.shape[:2]
    anc = robot.subtree_mask()                           # anc[a, b]: a is b or an ancestor of b
    prism = np.array([t == PRISMATIC for t in robot.joint_types])
    revolute = ~prism
    # pairs (j, i) whose rotations both act (h and the revolute-revolute f) / revolute j, prismatic i
    rr = anc & revolute[:, None] & revolute[None, :]
    rp = anc & revolute[:, None] & prism[None, :] & ~np.eye(n, dtype=bool)
    eye = np.eye(3)
    trI = np.einsum("nkii->nk", W.inertia)
    L = trI[..., None, None] * eye - 2.0 * W.inertia                     # eq. 16, world axes
    F_acc = np.zeros((N, n, n, n, 3))                    # Σ_children F^c, per body
    H_acc = np.zeros((N, n, n, n, 3))                    # Σ_children (H^c + l × F^c), per body
    C = np.zeros((N, n, n, n))                           # C[:, k, j, i] = c^k_ji (j ancestor of i)
    for k in range(n - 1, -1, -1):
        b = k + 1                                        # ancestors of k have indices <= k
        z = W.z[:, :b]                                   # k_j of the joints that can drive link k
        act = anc[:b, k]                                 # ... and those that really do
        pC = W.c[:, k, None, :] - W.o[:, :b]             # p_Cki
        mask_rr = (rr[:b, :b] & act[None, :])[None, :, :, None]
        mask_rp = (rp[:b, :b] & act[None, :])[None, :, :, None]
        # eq. 27 (and eq. 10 for j = i): m_k k_j × (k_i × p_Cki)
        f = robot.masses[k] * cross(z[:, :, None, :], cross(z, pC)[:, None, :, :]) * mask_rr
        f += robot.masses[k] * cross(z[:, :, None, :], z[:, None, :, :]) * mask_rp
        # eq. 26 (and eq. 15 for j = i): ½ (L_k k_j) × k_i
        Lz = np.einsum("nab,njb->nja", L[:, k], z)
        h = 0.5 * cross(Lz[:, :, None, :], z[:, None, :, :]) * mask_rr
        F = F_acc[:, k]
        H = H_acc[:, k]
        F[:, :b, :b] += f                                                     # eq. 28
        H[:, :b, :b] += h + cross((W.c[:, k] - W.o[:, k])[:, None, None, :], f)  # eq. 29
        C[:, k] = np.einsum("na,njia->nji", W.z[:, k], F if prism[k] else H)   # eq. 30
        p = robot.parents[k]
        if p >= 0:
            F_acc[:, p] += F
            H_acc[:, p] += H + cross((W.o[:, k] - W.o[:, p])[:, None, None, :], F)   # l_k × F^{k+1}
    # keep the pairs with j ancestor-or-self of i, then symmetrise c^k_ij = c^k_ji
    C *= anc[None, None]
    return C + np.swapaxes(C, -1, -2) - C * np.eye(n)


def christoffel(robot: RobotModel, q) -> np.ndarray:
    """Christoffel symbols C[..., k, i, j] = c^k_ij, so that the Coriolis and centrifugal torques are
    τ_k = Σ_ij C[k, i, j] q̇_i q̇_j. Shape (..., n, n, n)."""
    q2, single = as_batch(robot, q, "q")
    C = christoffel_world(robot, world_quantities(robot, q2))
    return C[0] if single else C


def coriolis_matrix(robot: RobotModel, q, qd) -> np.ndarray:
    """Christoffel-consistent Coriolis matrix C(q, q̇)_kj = Σ_i c^k_ij q̇_i (so Ṁ − 2C is skew)."""
    from ._batch import same_batch
    (q2, qd2), single = same_batch(robot, q, ("qd", qd))
    C = np.einsum("nkij,ni->nkj", christoffel_world(robot, world_quantities(robot, q2)), qd2)
    return C[0] if single else C
