"""Coriolis matrix of a kinematic tree by Echeandia & Wensing's Algorithm 1 (2021), O(Nd).

Spatial vectors in world coordinates, angular part first: a motion is v = (ω; v_O) with v_O the
velocity of the body point at the world origin, a force is f = (n_O; f). In world coordinates every
spatial transform ⁱX_p(i) of the paper is the identity (the paper's footnote 2: Pinocchio's variant),
so lines 3, 17, 24 and 25 become plain sums, and the joint-axis rate is Φ̇_i = v_i × Φ_i (line 4;
Φ̊_i = 0 for revolute and prismatic joints, whose axes are fixed in the body).

    B(v, I) = ½ [(v ×*) I + (I v) ×̄* − I (v ×)]                 (eq. 10, line 6)
    I^C_j = Σ_{k ⪰ j} I_k,   B^C_j = Σ_{k ⪰ j} B(v_k, I_k)      (eq. 15–16)
    F₁ = I^C_j Φ̇_j + B^C_j Φ_j,  F₂ = I^C_j Φ_j,  F₃ = (B^C_j)ᵀ Φ_j  (lines 9–11)
    for every ancestor-or-self i ⪯ j:
        C_ij = Φ_iᵀ F₁,   C_ji = Φ̇_iᵀ F₂ + Φ_iᵀ F₃,   M_ij = Φ_iᵀ F₂,
        Ṁ_ij = Φ̇_iᵀ F₂ + Φ_iᵀ (F₁ + F₃)                          (lines 12–22, eq. 19–21)

With the factorisation of eq. 10 and single-DoF joints, C is the Christoffel-consistent
C_ij = Σ_k Γ_ijk q̇_k (Proposition 2), and Ṁ = C + Cᵀ (Proposition 1). The pairs (i ⪯ j) — O(Nd) of
them — are handled all at once, vectorised over pairs and samples; the composite sums run level by
level over the tree depth.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .blocks import check_result, in_blocks
from .checks import finite_result, same_batch, switch
from .kinematics import dynamics_origin, world_quantities
from .mimic import body_rates, coordinate_matrix
from .model import PRISMATIC, ModelError, RobotModel
from .spatial import crf, crf_bar, crm, cross, skew  # noqa: F401  (crf_bar: christoffel_tree's old import)


def body_factorization(v: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """Christoffel-consistent body-level factorisation B(v, I) of eq. 10 (Niemeyer & Slotine)."""
    Iv = np.einsum("...ab,...b->...a", inertia, v)
    return 0.5 * (crf(v) @ inertia + crf_bar(Iv) - inertia @ crm(v))


def spatial_inertias(robot: RobotModel, W) -> np.ndarray:
    """Body spatial inertias (N, n, 6, 6) about the world origin, world axes (Appendix A):
    [[Ī_c + m S(c) S(c)ᵀ, m S(c)], [m S(c)ᵀ, m 1]] with c the world centre of mass."""
    m = robot.masses[:, None, None]
    Sc = skew(W.c)
    I = np.zeros(W.c.shape[:-1] + (6, 6))
    I[..., :3, :3] = W.inertia + m * (Sc @ np.swapaxes(Sc, -1, -2))
    I[..., :3, 3:] = m * Sc
    I[..., 3:, :3] = m * np.swapaxes(Sc, -1, -2)
    I[..., 3:, 3:] = m * np.eye(3)
    return I


def motion_axes(robot: RobotModel, W) -> np.ndarray:
    """Joint motion subspaces Φ_i (N, n, 6): (k_i; o_i × k_i) revolute, (0; k_i) prismatic."""
    prism = np.array([t == PRISMATIC for t in robot.joint_types])
    ang = np.where(prism[:, None], 0.0, W.z)
    lin = np.where(prism[:, None], W.z, cross(W.o, W.z))
    return np.concatenate((ang, lin), axis=-1)


# ---------------------------------------------------------------- tree bookkeeping
class TreeIndex(NamedTuple):
    levels: tuple          # bodies grouped by depth, base side first
    pair_i: np.ndarray     # pairs i ⪯ j (ancestor-or-self), O(Nd) of them
    pair_j: np.ndarray
    depth: int


@lru_cache(maxsize=64)
def tree_index(robot: RobotModel) -> TreeIndex:
    parents = robot.parents
    depth = np.zeros(robot.n_bodies, dtype=int)
    for i in range(robot.n_bodies):
        depth[i] = 0 if parents[i] < 0 else depth[parents[i]] + 1
    levels = tuple(np.flatnonzero(depth == d) for d in range(depth.max() + 1))
    pi, pj = np.nonzero(robot.subtree_mask())     # subtree_mask()[i, j]: i is j or an ancestor of j
    return TreeIndex(levels, pi, pj, int(depth.max()) + 1)


def propagate_out(robot: RobotModel, idx: TreeIndex, x: np.ndarray) -> np.ndarray:
    """y_i = y_p(i) + x_i from the base outwards (x of shape (N, n, ...)); y_base = 0."""
    y = np.zeros(x.shape[:1] + (robot.n_bodies + 1,) + x.shape[2:])      # slot n is the base (index −1)
    for lvl in idx.levels:
        y[:, lvl] = y[:, robot.parents[lvl]] + x[:, lvl]
    return y[:, :-1]


def sum_subtrees(robot: RobotModel, idx: TreeIndex, x: np.ndarray) -> np.ndarray:
    """Composite sums X_j = Σ_{k ⪰ j} x_k (eq. 15–16; Algorithm 1 lines 24–25), leaves first."""
    X = np.concatenate((x, np.zeros_like(x[:, :1])), axis=1)     # slot n collects the roots (ignored)
    for lvl in idx.levels[:0:-1]:
        np.add.at(X, (slice(None), robot.parents[lvl]), X[:, lvl])
    return X[:, :-1]


# ---------------------------------------------------------------- Algorithm 1
class CoriolisResult(NamedTuple):
    C: np.ndarray      # (..., n, n) Christoffel-consistent Coriolis matrix
    M: np.ndarray      # (..., n, n) mass matrix
    Mdot: np.ndarray   # (..., n, n) its time derivative along q̇


class SparseTree(NamedTuple):
    """Entries of a tree-structured matrix: A[..., rows[e], cols[e]] = values[..., e]; all other
    entries are zero (pairs of joints on different branches)."""
    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray   # (N, nnz)
    n: int

    def dense(self) -> np.ndarray:
        A = np.zeros(self.values.shape[:-1] + (self.n, self.n))
        A[..., self.rows, self.cols] = self.values
        return A


def coriolis_matrix_tree(robot: RobotModel, q, qd, *, full: bool = False, dense: bool = True):
    """Christoffel-consistent Coriolis matrix C(q, q̇) (…, n, n) of a tree with single-DoF revolute
    and prismatic joints, by Algorithm 1 of Echeandia & Wensing (2021): C q̇ is the Coriolis and
    centrifugal torque and Ṁ = C + Cᵀ.

    ``full=True`` returns ``CoriolisResult(C, M, Mdot)`` (the algorithm's three outputs);
    ``dense=False`` returns C as a `SparseTree` with only the O(Nd) related pairs (batched); not for a
    model with mimic joints, whose C = Gᵀ C_bodies(G q̇) G (and M, Ṁ alike, `dynamics.mimic`) is dense."""
    for flag, value in (("full", full), ("dense", dense)):     # ("no" is truthy: it gave the full result)
        switch(f"coriolis_matrix_tree: {flag}", value)
    (q2, qd2), single = same_batch(robot, q, ("qd", qd))
    if robot.coupling is not None and not dense and not full:
        raise ModelError(f"coriolis_matrix_tree: dense=False: robot '{robot.name}' has mimic joints, whose "
                         f"Coriolis matrix Gᵀ C G is not tree-sparse; use dense=True")
    rows, cols = _entries(tree_index(robot))
    check_result("coriolis_matrix_tree", q2.shape[0], 3 * robot.n ** 2 if full else robot.n ** 2 if dense else rows.size)
    nb = robot.n_bodies
    out = in_blocks(lambda q, qd: _coriolis(robot, q, qd, full, dense), 8.0 * (15 * nb * nb + 20 * nb) + 4096, q2, qd2)
    if full:
        return CoriolisResult(*(a[0] for a in out)) if single else out
    if dense:
        return out[0] if single else out
    return SparseTree(rows, cols, out[0] if single else out, nb)


def _entries(idx: TreeIndex) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of C's entries: C_ij then C_ji of every pair i ⪯ j (C_ii once)."""
    strict = idx.pair_i != idx.pair_j
    return np.concatenate((idx.pair_i, idx.pair_j[strict])), np.concatenate((idx.pair_j, idx.pair_i[strict]))


def _coriolis(robot: RobotModel, q2, qd2, full: bool, dense: bool):
    """Algorithm 1 on a block of samples: `CoriolisResult` (full), C (dense) or C's tree entries (N, nnz)."""
    qd2 = body_rates(robot, qd2)
    idx = tree_index(robot)
    W = world_quantities(robot, q2, dynamics_origin(robot))   # (about the robot: less cancellation)
    Phi = motion_axes(robot, W)                                          # (N, n, 6)
    I = spatial_inertias(robot, W)                                       # (N, n, 6, 6)
    v = propagate_out(robot, idx, Phi * qd2[..., None])                  # line 3, eq. 5
    Phid = np.einsum("...ab,...b->...a", crm(v), Phi)                    # line 4: Φ̇ = v × Φ
    B = body_factorization(v, I)                                         # line 6, eq. 10
    IC = sum_subtrees(robot, idx, I)                                     # line 24, eq. 15
    BC = sum_subtrees(robot, idx, B)                                     # line 25, eq. 16
    F1 = np.einsum("...ab,...b->...a", IC, Phid) + np.einsum("...ab,...b->...a", BC, Phi)   # line 9
    F2 = np.einsum("...ab,...b->...a", IC, Phi)                          # line 10
    F3 = np.einsum("...ba,...b->...a", BC, Phi)                          # line 11
    i, j = idx.pair_i, idx.pair_j                                        # every i ⪯ j (lines 12–22)
    Cij = np.einsum("nea,nea->ne", Phi[:, i], F1[:, j])                  # lines 12, 19
    Cji = np.einsum("nea,nea->ne", Phid[:, i], F2[:, j]) + np.einsum("nea,nea->ne", Phi[:, i], F3[:, j])  # line 20
    C = SparseTree(*_entries(idx), np.concatenate((Cij, Cji[:, i != j]), axis=1), robot.n_bodies)
    finite_result("qd", "coriolis_matrix_tree", C.values, qd2)     # (linear in q̇: only near 1e300)
    if dense or full:
        Cb = C.dense()
        C = coordinate_matrix(robot, Cb)
    if full:
        Mij = np.einsum("nea,nea->ne", Phi[:, i], F2[:, j])              # lines 13, 21
        Mdij = (np.einsum("nea,nea->ne", Phid[:, i], F2[:, j])
                + np.einsum("nea,nea->ne", Phi[:, i], (F1 + F3)[:, j]))  # lines 14, 22
        M = np.zeros_like(Cb)
        Md = np.zeros_like(Cb)
        M[:, i, j] = M[:, j, i] = Mij
        Md[:, i, j] = Md[:, j, i] = Mdij
        M = coordinate_matrix(robot, M)
        if robot.armature is not None and np.any(robot.armature):
            M = M + np.diag(robot.armature)          # rotor inertia on M's diagonal, as `mass_matrix` (constant: Ṁ, C unchanged)
        return CoriolisResult(C, M, coordinate_matrix(robot, Md))
    return C if dense else C.values


def coriolis_matrix(robot, q, qd):
    """Christoffel-consistent Coriolis matrix C(q, q̇), shape (..., n, n): τ_C = C q̇, Ṁ = C + Cᵀ,
    C_kj = Σ_i c^k_ij q̇_i. Echeandia & Wensing's Algorithm 1 (O(Nd)); see `coriolis_matrix_tree`."""
    return coriolis_matrix_tree(robot, q, qd)
