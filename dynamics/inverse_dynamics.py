"""Recursive Newton–Euler inverse dynamics (Luh, Walker & Paul 1980) in world coordinates.

Velocities and accelerations are spatial vectors [ω; v_O] taken at the world origin (Featherstone's
"absolute" form), so a body's quantities are its parent's plus the joint's term, with no transforms:

    forward pass   v_k = v_λ(k) + S_k q̇_k,   a_k = a_λ(k) + S_k q̈_k + v_k × S_k q̇_k,   a_base = [0; −g0]
    backward pass  f_k = [moment about the origin; force] of body k's Newton–Euler equations
                         + Σ_children f_j,   τ_k = S_kᵀ f_k

with S_k = [z_k; o_k × z_k] (revolute) or [0; z_k] (prismatic). Each recursion is a sum over the path
to the base (forward) or over the subtree (backward), evaluated for all bodies at once as a product
with the tree's support matrix. Samples are processed in blocks, with work arrays allocated once and
reused by every block (fresh memory is costly: page faults). Rigid body only: friction is in
`friction_torques`.
"""

from __future__ import annotations

import numpy as np

from .blocks import ALIGN
from .checks import as_batch, finite_result, same_batch
from .kinematics import WorldT, dynamics_origin, world_quantities_into
from .spatial import cross3
from .mimic import body_rates, coordinate_forces
from .model import PRISMATIC, ModelError, RobotModel

BLOCK = 16384   # bodies × samples per block, at most (work arrays of a few MB)


def inverse_dynamics(robot: RobotModel, q, qd, qdd, *, gravity: bool = True, world=None) -> np.ndarray:
    """τ = M(q) q̈ + C(q, q̇) q̇ + g(q), shape (..., n).

    `world`: the configuration-only quantities `world_quantities_t(robot, q, dynamics_origin(robot))` if already
    computed (for batches of q), so that repeated calls at the same configurations skip the forward kinematics.
    With mimic joints the bodies move with G q̇, G q̈ and τ = Gᵀ τ_bodies (`dynamics.mimic`)."""
    (q2, qd2, qdd2), single = same_batch(robot, q, ("qd", qd), ("qdd", qdd))
    N, n = q2.shape[0], robot.n_bodies
    if world is not None and not isinstance(world, WorldT):      # (else an AttributeError on world.z)
        raise ModelError(f"world: expected the WorldT of world_quantities_t(robot, q), got {type(world).__name__}")
    if world is not None and np.shape(world.z) != (n, 3, N):
        raise ModelError(f"world: quantities for shape {np.shape(world.z)}, expected (n, 3, N) = {(n, 3, N)}")
    qdT, qddT = np.ascontiguousarray(body_rates(robot, qd2).T), np.ascontiguousarray(body_rates(robot, qdd2).T)
    M = max(min(N, max(ALIGN, BLOCK // n // ALIGN * ALIGN)), 1)    # samples per block, a multiple of ALIGN (equal
                                                        # parts of N made τ of a sample differ by an ulp with N)
    work, world_work = _work_arrays(n, M, world is None)
    support = _support_matrix(robot.parents)
    origin = dynamics_origin(robot)
    a_base = np.zeros(6)
    if gravity:
        a_base[3:] = -robot.gravity
    tau = np.empty((n, N))
    with np.errstate(over="ignore", invalid="ignore"):              # huge rates overflow: one ModelError below
        for s in range(0, N, M):
            b = slice(s, min(s + M, N))
            m = b.stop - s
            buf = {k: x[..., :m] for k, x in work.items()}
            if world is None:
                W = world_quantities_into(robot, q2[b], WorldT(*(x[..., :m] for x in world_work)), origin)
            else:
                W = WorldT(*(x[..., b] for x in world))
            _rnea(robot, support, a_base, W, qdT[:, b], qddT[:, b], buf, tau[:, b])
        tau = coordinate_forces(robot, tau.T)
        if robot.armature is not None and np.any(robot.armature):
            tau = tau + robot.armature * qdd2                       # the rotors' own inertia
    finite_result("qd, qdd", "inverse_dynamics", tau, qd2, qdd2)
    return tau[0] if single else tau


def _support_matrix(parents) -> np.ndarray:
    """κ (n, n): κ[k, j] = 1 if joint j is on the path from body k to the base (j = k included)."""
    n = len(parents)
    kappa = np.zeros((n, n))
    for k in range(n):
        j = k
        while j >= 0:
            kappa[k, j] = 1.0
            j = parents[j]
    return kappa


def _work_arrays(n: int, M: int, with_world: bool) -> tuple[dict, WorldT | None]:
    """The work arrays of one block of M samples (and its WorldT when it is to be computed): views into
    one allocation, reused by every block."""
    k = n * M
    memory = np.empty((45 + (27 if with_world else 0)) * k)
    work = dict(zip(("S", "Sqd", "v", "x", "a", "fn"), memory[:36 * k].reshape(6, 6, n, M)))    # (6, n, M)
    work.update(zip(("vc", "Iw", "tmp"), memory[36 * k:45 * k].reshape(3, 3, n, M)))             # (3, n, M)
    if not with_world:
        return work, None
    R, inertia = memory[45 * k:63 * k].reshape(2, n, 3, 3, M)
    o, z, c = memory[63 * k:].reshape(3, n, 3, M)
    return work, WorldT(R, o, z, c, inertia)


def _rnea(robot: RobotModel, support, a_base, W: WorldT, qd, qdd, buf: dict, tau) -> None:
    """τ (n, M) of one block of M samples into `tau`. Work arrays are component-first, (3 or 6, n, M)."""
    S, Sqd, v, x, a, fn, t = (buf[k] for k in ("S", "Sqd", "v", "x", "a", "fn", "tmp"))
    o, c = W.o.transpose(1, 0, 2), W.c.transpose(1, 0, 2)     # component-first views
    S[:3] = W.z.transpose(1, 0, 2)                      # motion subspaces [z; o × z] ...
    cross3(o, S[:3], out=S[3:])
    prismatic = [kind == PRISMATIC for kind in robot.joint_types]
    if any(prismatic):
        S[3:, prismatic] = S[:3, prismatic]             # ... and [0; z]
        S[:3, prismatic] = 0.0

    # forward pass: v_k = Σ_{j ⪯ k} S_j q̇_j,  a_k = a_base + Σ_{j ⪯ k} (S_j q̈_j + v_j × S_j q̇_j)
    np.multiply(S, qd, out=Sqd)
    np.matmul(support, Sqd, out=v)
    w, vO = v[:3], v[3:]
    np.multiply(S, qdd, out=x)
    x[:3] += cross3(w, Sqd[:3], out=t)
    x[3:] += cross3(w, Sqd[3:], out=t)
    x[3:] += cross3(vO, Sqd[:3], out=t)
    x[:, robot.parents < 0] += a_base[:, None, None]    # the base's acceleration, summed into every body's
    np.matmul(support, x, out=a)
    dw, aO = a[:3], a[3:]

    # Newton–Euler: force m a_c and moment about the origin, I_c ω̇ + ω × I_c ω + c × f, of every body
    moment, f = fn[:3], fn[3:]
    vc = np.add(vO, cross3(w, c, out=t), out=buf["vc"])        # velocity of the centre of mass
    np.add(aO, cross3(dw, c, out=t), out=f)
    f += cross3(w, vc, out=t)
    f *= robot.masses[:, None]
    Iw = np.einsum("nabm,bnm->anm", W.inertia, w, out=buf["Iw"])
    np.einsum("nabm,bnm->anm", W.inertia, dw, out=moment)
    moment += cross3(w, Iw, out=t)
    moment += cross3(c, f, out=t)

    # backward pass: f_k + its subtree's, projected on the joint's motion subspace
    F = np.matmul(support.T, fn, out=x)
    np.einsum("inm,inm->nm", S, F, out=tau)


def friction_torques(robot: RobotModel, qd) -> np.ndarray:
    """Coulomb + viscous friction, F_c sign(q̇) + F_v q̇, shape (..., n)."""
    qd2, single = as_batch(robot, qd, "qd")
    tau = robot.coulomb * np.sign(qd2) + robot.viscous * qd2
    return tau[0] if single else tau
