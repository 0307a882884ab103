"""Christoffel symbols of a kinematic tree by Echeandia & Wensing's Algorithm 2 (2021), O(Nd²).

The paper's Γ_ijk = ½(∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i) (eq. 4) with C_ij = Σ_k Γ_ijk q̇_k
(eq. 3) is, index for index, our c^i_jk, so the result is the same array layout as
`dynamics.christoffel`: C[..., k, i, j] = c^k_ij = Γ_kij.

Differentiating the Coriolis matrix of Algorithm 1 (eq. 33) by q̇_k (eq. 34–35) gives, for mutually
related joints, Γ_ijk = Φ_iᵀ B(Φ_k, I^C_⌈ijk⌉) Φ_j (eq. 36), zero otherwise. For i ⪯ j ⪯ k:

    B̃_k = B(Φ_k, I^C_k),   D_k = (I^C_k Φ_k) ×̄* − B̃_k               (lines 5–6, eq. 40)
    F₁ = B̃_k Φ_j,   F₂ = B̃_kᵀ Φ_j,   F₃ = D_k Φ_j                   (line 9)
    Γ_ijk = Γ_ikj = Φ_iᵀ F₁                                          (line 12, eq. 37)
    Γ_jik = Γ_jki = Φ_iᵀ F₂                                          (line 13, eq. 38)
    Γ_kij = Γ_kji = Φ_iᵀ F₃                                          (line 14, eq. 39–40)

In world coordinates (see `coriolis_tree`) the transforms of lines 15, 18, 19 and 22 are the identity.
The nested while loops (lines 7–21) visit every triple i ⪯ j ⪯ k — O(Nd²) of them — and are done
here as one vectorised pass over the pairs (j ⪯ k) and one over the triples.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .blocks import check_result, in_blocks
from .checks import as_batch, switch
from .kinematics import dynamics_origin, world_quantities
from .coriolis_tree import body_factorization, motion_axes, spatial_inertias, sum_subtrees, tree_index
from .mimic import coordinate_christoffel
from .model import ModelError, RobotModel
from .spatial import crf_bar


class TreeTriples(NamedTuple):
    pair_j: np.ndarray     # pairs j ⪯ k
    pair_k: np.ndarray
    trip_i: np.ndarray     # triples i ⪯ j ⪯ k: i and the index of the pair (j, k)
    trip_p: np.ndarray


@lru_cache(maxsize=64)
def tree_triples(robot: RobotModel) -> TreeTriples:
    idx = tree_index(robot)
    pj, pk = idx.pair_i, idx.pair_j
    ti, tp = np.nonzero(robot.subtree_mask()[:, pj])    # i ⪯ j_p for every pair p
    return TreeTriples(pj, pk, ti, tp)


class SparseChristoffel(NamedTuple):
    """The symbols of every related triple i ⪯ j ⪯ k (all others are zero):
    Γ_ijk = Γ_ikj = g_ijk,  Γ_jik = Γ_jki = g_jik,  Γ_kij = Γ_kji = g_kij (values batched (N, T))."""
    i: np.ndarray
    j: np.ndarray
    k: np.ndarray
    g_ijk: np.ndarray
    g_jik: np.ndarray
    g_kij: np.ndarray
    n: int

    def dense(self) -> np.ndarray:
        G = np.zeros(self.g_ijk.shape[:-1] + (self.n,) * 3)
        i, j, k = self.i, self.j, self.k
        G[..., i, j, k] = G[..., i, k, j] = self.g_ijk       # line 12
        G[..., j, i, k] = G[..., j, k, i] = self.g_jik       # line 13
        G[..., k, i, j] = G[..., k, j, i] = self.g_kij       # line 14
        return G


def christoffel_tree(robot: RobotModel, q, *, dense: bool = True):
    """Christoffel symbols of the first kind C[..., k, i, j] = c^k_ij (τ_k = Σ_ij C[k, i, j] q̇_i q̇_j)
    of a tree with single-DoF revolute and prismatic joints, by Algorithm 2 of Echeandia & Wensing.
    Shape (..., n, n, n); ``dense=False`` returns the O(Nd²) non-zero symbols as `SparseChristoffel` (not
    for a model with mimic joints, whose symbols Σ G G G c_bodies are dense, `dynamics.mimic`)."""
    q2, single = as_batch(robot, q, "q")
    switch("christoffel_tree: dense", dense)            # ("no" is truthy: it gave the dense array)
    if robot.coupling is not None and not dense:
        raise ModelError(f"christoffel_tree: dense=False: robot '{robot.name}' has mimic joints, whose "
                         f"Christoffel symbols are not tree-sparse; use dense=True")
    tr, nb = tree_triples(robot), robot.n_bodies
    check_result("christoffel_tree", q2.shape[0], robot.n ** 3 if dense else 3 * tr.trip_i.size)
    work = 8.0 * (2 * nb ** 3 + robot.n ** 3 if dense else 0) + 8.0 * (24 * tr.pair_j.size + 10 * tr.trip_i.size) + 4096
    out = in_blocks(lambda q: _symbols(robot, q, dense), work, q2)
    if dense:
        return out[0] if single else out
    p = tr.trip_p
    return SparseChristoffel(tr.trip_i, tr.pair_j[p], tr.pair_k[p], *(g[0] if single else g for g in out), nb)


def _symbols(robot: RobotModel, q2, dense: bool):
    """Algorithm 2 on a block of samples: the dense symbols, or (g_ijk, g_jik, g_kij) (N, T) each."""
    idx, tr = tree_index(robot), tree_triples(robot)
    W = world_quantities(robot, q2, dynamics_origin(robot))
    Phi = motion_axes(robot, W)                                  # (N, n, 6)
    IC = sum_subtrees(robot, idx, spatial_inertias(robot, W))    # lines 1–3 and 22
    Bt = body_factorization(Phi, IC)                             # line 5: B̃_k = B(Φ_k, I^C_k)
    D = crf_bar(np.einsum("...ab,...b->...a", IC, Phi)) - Bt     # line 6
    j, k = tr.pair_j, tr.pair_k
    Phi_j = Phi[:, j]
    F1 = np.einsum("npab,npb->npa", Bt[:, k], Phi_j)             # line 9
    F2 = np.einsum("npba,npb->npa", Bt[:, k], Phi_j)
    F3 = np.einsum("npab,npb->npa", D[:, k], Phi_j)
    Phi_i = Phi[:, tr.trip_i]
    p = tr.trip_p
    out = SparseChristoffel(tr.trip_i, j[p], k[p],
                            np.einsum("nta,nta->nt", Phi_i, F1[:, p]),    # line 12
                            np.einsum("nta,nta->nt", Phi_i, F2[:, p]),    # line 13
                            np.einsum("nta,nta->nt", Phi_i, F3[:, p]),    # line 14
                            robot.n_bodies)
    return coordinate_christoffel(robot, out.dense()) if dense else (out.g_ijk, out.g_jik, out.g_kij)
