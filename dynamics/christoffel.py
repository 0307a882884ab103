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

from .blocks import check_result, in_blocks
from .checks import as_batch
from .kinematics import WorldT, dynamics_origin, world_quantities_t
from .spatial import cross3
from .mimic import body_rates, coordinate_christoffel, coordinate_forces
from .model import PRISMATIC, RobotModel


def christoffel_world(robot: RobotModel, W: WorldT) -> np.ndarray:
    n, N = W.z.shape[0], W.z.shape[-1]
    anc = robot.subtree_mask()                           # anc[a, b]: a is b or an ancestor of b
    prism = np.array([t == PRISMATIC for t in robot.joint_types])
    # The pairs (j, i) with j ancestor-or-self of i, sorted by i: for a serial chain the pairs that
    # act on link k (i ancestor-or-self of k) are then a prefix of the list.
    jj, ii = np.nonzero(anc.T)[::-1]
    order = np.lexsort((jj, ii))
    jj, ii = jj[order], ii[order]
    P = jj.size
    rev_j, rev_i = ~prism[jj], ~prism[ii]
    w_rr = (rev_j & rev_i).astype(float)[:, None]                      # both rotate
    w_rp = (rev_j & prism[ii] & (jj != ii)).astype(float)[:, None]     # revolute j, prismatic i
    # sample axis last and components first (3, ..., N): contiguous, cross products are cheap
    z = np.swapaxes(W.z, 0, 1)                           # k_j, (3, n, N)
    o = np.swapaxes(W.o, 0, 1)
    c = np.swapaxes(W.c, 0, 1)
    inertia = W.inertia                                  # (n, 3, 3, N)
    trI = np.einsum("kaan->kn", inertia)
    Zj, Zi, Oi = z[:, jj], z[:, ii], o[:, ii]            # per pair, (3, P, N): slices of these are views
    any_rp, all_rr = bool(w_rp.any()), bool(w_rr.all())
    out = np.zeros((n, P, N))                            # out[k, p] = c^k_{j_p i_p}
    pending = {}                                         # body -> (Σ_children F^c, Σ_children H^c + l × F^c)
    for k in range(n - 1, -1, -1):
        act = anc[ii, k]                                 # pairs whose joint i drives link k
        cnt = int(act.sum())
        sel = slice(0, cnt) if act[:cnt].all() else np.flatnonzero(act)
        F, H = pending.pop(k, (None, None))
        if F is None:
            F = np.zeros((3, P, N))
            H = np.zeros((3, P, N))
        if robot.masses[k] > 0 and cnt:
            zj, zi = Zj[:, sel], Zi[:, sel]
            # eq. 27 (eq. 10 for j = i): f = m_k k_j × (k_i × p_Cki); revolute j, prismatic i: m_k k_j × k_i
            f = cross3(zj, cross3(zi, c[:, k, None] - Oi[:, sel]))
            if not all_rr:
                f *= w_rr[sel]
            if any_rp:
                f += cross3(zj, zi) * w_rp[sel]
            f *= robot.masses[k]
            # eq. 16: L_k = R_k (tr(I) 1 − 2 I) R_kᵀ;  eq. 26 (eq. 15 for j = i): h = ½ (L_k k_j) × k_i
            Ik = inertia[k]
            Lzj = trI[k] * zj - 2.0 * (Ik[:, 0, None] * zj[0] + Ik[:, 1, None] * zj[1] + Ik[:, 2, None] * zj[2])
            h = cross3(Lzj, zi)
            h *= 0.5 if all_rr else 0.5 * w_rr[sel]
            F[:, sel] += f                                                         # eq. 28
            h += cross3((c[:, k] - o[:, k])[:, None], f)
            H[:, sel] += h                                                         # eq. 29
        out[k] = (z[:, k, None] * (F if prism[k] else H)).sum(axis=0)             # eq. 30
        p = robot.parents[k]
        if p >= 0:
            H += cross3((o[:, k] - o[:, p])[:, None], F)                           # l × F^{k+1}
            if p in pending:
                pending[p][0].__iadd__(F)
                pending[p][1].__iadd__(H)
            else:
                pending[p] = (F, H)
    C = np.zeros((n, n, n, N))                           # pairs on different branches stay 0
    C[:, jj, ii] = out                                   # c^k_ji, and by symmetry c^k_ij
    C[:, ii, jj] = out
    return coordinate_christoffel(robot, np.ascontiguousarray(np.moveaxis(C, -1, 0)))   # Gᵀ ⊗ Gᵀ ⊗ Gᵀ with mimic joints


def christoffel(robot: RobotModel, q) -> np.ndarray:
    """Christoffel symbols C[..., k, i, j] = c^k_ij, so that the Coriolis and centrifugal torques are
    τ_k = Σ_ij C[k, i, j] q̇_i q̇_j. Shape (..., n, n, n)."""
    q2, single = as_batch(robot, q, "q")
    check_result("christoffel", q2.shape[0], robot.n ** 3)
    C = in_blocks(lambda q: christoffel_world(robot, world_quantities_t(robot, q, dynamics_origin(robot))),
                  8.0 * (3 * robot.n_bodies ** 3 + robot.n ** 3) + 4096, q2)          # (Safeea Table 2: O(n³))
    return C[0] if single else C


def christoffel_quadratic_world(robot: RobotModel, W: WorldT, v: np.ndarray) -> np.ndarray:
    """Σ_ij c^k_ij v_i v_j (N, n) by the same recursion (eq. 26–30) with the quadratic form taken
    before the backward pass instead of after it.

    The recursion is linear in (f, h), so weighting each pair's (f^k_ji, h^k_ji) by its coefficient
    in Σ_ij c^k_ij v_i v_j (v_j v_i for j = i, 2 v_j v_i for j ≠ i) and summing over pairs first gives
    the same torques. For link k the pair sum collapses to one sum over its driving joints i ⪯ k:

        a_i = Σ_{j ⪯ i} w_ji k_j = v_i (2 Ω_i + v_i k_i),   Ω_i = Σ_{j ≺ i, revolute} v_j k_j

    (Ω_i: angular velocity of joint i's parent body), and with a × (k × p) = k (a·p) − p (a·k) the
    sums over i become prefix sums along the tree, G_k = Σ_{i ⪯ k} k_i a_iᵀ (3×3),
    s_k = Σ a_i·k_i, u_k = Σ [k_i (a_i·o_i) − o_i (a_i·k_i)]:

        Σ_i f^k_ji-terms = m_k (G_k c_k − s_k c_k − u_k)                   (eq. 27, summed)
        Σ_i h^k_ji-terms = ½ Σ_i (L_k a_i) × k_i = ½ vee(L_k G_kᵀ)         (eq. 26, summed)

    with vee(X) = (X_yz − X_zy, X_zx − X_xz, X_xy − X_yx). A prismatic joint i behind revolute
    joints adds m_k Σ_i 2 v_i Ω_i × k_i to f. The cost is O(n) per sample (the full symbols are
    O(n³)); this is what `path_coefficients` uses for c̃ (eq. 32) with v = q′.
    """
    n, N = W.z.shape[0], W.z.shape[-1]
    prism = np.array([t == PRISMATIC for t in robot.joint_types])
    z, o, c, inertia = W.z, W.o, W.c, W.inertia          # (n, 3, N), (n, 3, 3, N)
    vT = body_rates(robot, v).T                                             # (n, N)
    G = np.empty((n, 3, 3, N))                           # G_k = Σ_{i ⪯ k} k_i a_iᵀ
    s_ = np.empty((n, N))
    u = np.empty((n, 3, N))                              # u_k, plus the prismatic term
    Omega = np.zeros((n, 3, N))                          # angular velocity of the parent body
    for i in range(n):
        p = robot.parents[i]
        if p >= 0:
            Omega[i] = Omega[p] + (0.0 if prism[p] else vT[p] * z[p])
        if prism[i]:
            a = np.zeros((3, N))
            du = -2.0 * vT[i] * cross3(Omega[i], z[i])                  # m_k 2 v_i Ω_i × k_i, moved into −u
            dG, ds = 0.0, 0.0
        else:
            a = vT[i] * (2.0 * Omega[i] + vT[i] * z[i])
            ds = (a * z[i]).sum(axis=0)
            dG = z[i][:, None] * a[None, :]
            du = z[i] * (a * o[i]).sum(axis=0) - o[i] * ds
        G[i] = dG + (G[p] if p >= 0 else 0.0)
        s_[i] = ds + (s_[p] if p >= 0 else 0.0)
        u[i] = du + (u[p] if p >= 0 else 0.0)
    trI = np.einsum("kaan->kn", inertia)
    tau = np.zeros((n, N))
    pending = {}
    for k in range(n - 1, -1, -1):
        F, H = pending.pop(k, (np.zeros((3, N)), np.zeros((3, N))))
        if robot.masses[k] > 0:
            Gk = G[k]
            f = robot.masses[k] * ((Gk * c[k][None, :]).sum(axis=1) - s_[k] * c[k] - u[k])   # eq. 27
            L = -2.0 * inertia[k]
            for a in range(3):
                L[a, a] += trI[k]                                                          # eq. 16
            X = np.einsum("qsn,rsn->qrn", L, Gk)                                           # L_k G_kᵀ
            h = 0.5 * np.stack((X[1, 2] - X[2, 1], X[2, 0] - X[0, 2], X[0, 1] - X[1, 0]))    # eq. 26
            F = F + f                                                                      # eq. 28
            H = H + h + cross3(c[k] - o[k], f)                                             # eq. 29
        tau[k] = (z[k] * (F if prism[k] else H)).sum(axis=0)                               # eq. 30
        p = robot.parents[k]
        if p >= 0:
            H = H + cross3(o[k] - o[p], F)
            if p in pending:
                pending[p] = (pending[p][0] + F, pending[p][1] + H)
            else:
                pending[p] = (F, H)
    return coordinate_forces(robot, tau.T)                  # Gᵀ τ with mimic joints (v above: G v)
