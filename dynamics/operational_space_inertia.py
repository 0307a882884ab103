"""Operational-space inertia of a branching robot with m operational points, by Chang & Khatib's
recursive force-propagation algorithm (2000, Table 1): O(nm + m³), no joint-space inverse.

Conventions (Chang & Khatib's "modified spatial notation"): spatial vectors put the **linear part
first**, a = (v̇; ω̇), f = (f; N). Every body frame i has its origin at the joint origin o_i and
**world-aligned axes**, so a transform only shifts the reference point: the force transform from
frame i to frame h is ʰXᵢ = [[1, 0], [S(r), 1]] with r = o_i − o_h (eq. 2), accelerations go the
other way with ʰXᵢᵀ (eq. 3–4). An operational point e is the origin of a named frame, with
world-aligned axes; its 6 rows are (linear; angular), as in `frame_jacobian`, so that
Λ⁻¹ = J M⁻¹ Jᵀ (eq. 14) with J the stacked `frame_jacobian`s.

Table 1 (steps 1–6):
    1. ʰXᵢ for every joint                                                            (eq. 2)
    2. inward:  D_i = S_iᵀ I^A_i S_i,  S̄_i = D_i⁻¹ S_iᵀ I^A_i,  ʰLᵢ = ʰXᵢ [1 − S_i S̄_i]ᵀ  (eq. 8)
               I^A_h = I_h + Σ_children ʰLᵢ I^A_i ʰLᵢᵀ                                   (eq. 10)
    3. outward: V_ii = S_i D_i⁻¹ S_iᵀ + ʰLᵢᵀ V_hh ʰLᵢ,  V at the base = 0                 (eq. 24)
    4. V_ij = (ʰL*ᵢ)ᵀ V_hh ʰL*ⱼ, h the nearest common ancestor, L* = Π L along the path  (eq. 26, 29)
    5. Λ⁻¹_{e_a e_b} = ⁱXₑᵀ V_ij ʲXₑ (frames at the operational points)                 (eq. 22)
    6. Λ = (Λ⁻¹)⁻¹                                                                      (eq. 17)

Operational points may sit on any body (not only leaves): the recursions of steps 2–3 hold for every
body, since a force on body i reaches the base only through joint i's articulated body.
"""

from __future__ import annotations

import numpy as np

from .blocks import check_result, in_blocks
from .checks import as_batch, short_repr
from .kinematics import world_quantities
from .model import PRISMATIC, ModelError, RobotModel


def _shift(r: np.ndarray) -> np.ndarray:
    """Force transform [[1, 0], [S(r), 1]] (..., 6, 6) from a frame at p + r to one at p (eq. 2)."""
    X = np.zeros(r.shape[:-1] + (6, 6))
    X[..., :3, :3] = np.eye(3)
    X[..., 3:, 3:] = np.eye(3)
    X[..., 3, 1], X[..., 3, 2], X[..., 4, 2] = -r[..., 2], r[..., 1], -r[..., 0]     # S(r), lower left
    X[..., 4, 0], X[..., 5, 0], X[..., 5, 1] = r[..., 2], -r[..., 1], r[..., 0]
    return X


def _frames(robot: RobotModel, frames) -> list:
    """(body, transform) per operational frame, checked before Λ⁻¹ (N, 6m, 6m) is allocated: a frame named
    twice is refused (its rows would repeat, Λ⁻¹ singular, and a long list of repeats asked for terabytes)."""
    if frames is None or isinstance(frames, str):
        frames = [frames]
    try:
        if isinstance(frames, (bytes, dict)):          # (bytes iterate as ints, a dict as its keys)
            raise TypeError
        frames = list(frames)
    except TypeError:
        raise ModelError(f"frames: expected a frame name or a list of frame names, got {short_repr(frames)}") from None
    if not frames:
        raise ModelError("frames: give at least one operational frame")
    out = []
    for k, f in enumerate(frames):
        if isinstance(f, str) and f == robot.base_name:
            raise ModelError(f"frames: '{f}' is the fixed base of robot '{robot.name}' (it does not move: "
                             "no operational space inertia); name a link or frame on a moving body")
        out.append(robot.frame(f))
        if f in frames[:k]:
            raise ModelError(f"frames: '{f}' is given twice (entries {frames.index(f)} and {k}); "
                             "each operational point once")
    return out


def operational_space_inertia_inverse(robot: RobotModel, q, frames=None) -> np.ndarray:
    """Λ⁻¹ = J M⁻¹ Jᵀ (…, 6m, 6m) for the origins of the named frames (linear rows first, world
    axes), by Table 1 steps 1–5. Always defined (positive semi-definite; singular when 6m > n or at
    kinematic singularities).

    With mimic joints (`dynamics.mimic`) one coordinate drives several articulated bodies, which Table 1
    does not cover: Λ⁻¹ = J M⁻¹ Jᵀ is then formed directly from J = J_bodies G and M = Gᵀ M_bodies G."""
    q2, single = as_batch(robot, q, "q")
    fr = _frames(robot, frames)
    m = len(fr)
    check_result("operational_space_inertia", q2.shape[0], 36 * m * m)
    # over blocks of samples (dynamics.blocks): the work arrays below take ~2.3 kB a sample per body (30 joints:
    # 70 kB a sample for a result of 0.3 kB, 7 GB for 10⁵ samples)
    work = 8.0 * 36 * (9 * robot.n_bodies + m * robot.n_bodies + 4 * m * m) + 4096
    if robot.coupling is not None:
        Linv = in_blocks(lambda x: _coupled_inverse(robot, x, frames), work, q2)
    else:
        Linv = in_blocks(lambda x: _table1(robot, x, fr), work, q2)
    return Linv[0] if single else Linv


def _table1(robot: RobotModel, q2: np.ndarray, fr: list) -> np.ndarray:
    """Λ⁻¹ (N, 6m, 6m) of the operational points `fr` ((body, transform) each) by Table 1 steps 1–5."""
    W = world_quantities(robot, q2)
    N, n = q2.shape
    parents = robot.parents
    prism = np.array([t == PRISMATIC for t in robot.joint_types])
    # motion subspaces at o_i, world axes, linear first: revolute (0; k), prismatic (k; 0)
    S = np.concatenate((np.where(prism[:, None], W.z, 0.0), np.where(prism[:, None], 0.0, W.z)), axis=-1)
    # step 1 (eq. 2): ʰXᵢ, r = o_i − o_h (h = base: the world origin)
    o_parent = np.where((parents >= 0)[:, None], W.o[:, np.maximum(parents, 0)], 0.0)
    X = _shift(W.o - o_parent)                                            # (N, n, 6, 6)
    # body spatial inertias at o_i (eq. 1, 5): ⁱX_cᵢ diag(m 1, I_c) ⁱX_cᵢᵀ, c the centre of mass
    Xc = _shift(W.c - W.o)
    Ic = np.zeros((N, n, 6, 6))
    Ic[..., :3, :3] = robot.masses[:, None, None] * np.eye(3)
    Ic[..., 3:, 3:] = W.inertia
    IA = Xc @ Ic @ np.swapaxes(Xc, -1, -2)
    # step 2, inward: force propagators and articulated-body inertias (eq. 8, 10)
    L = np.empty((N, n, 6, 6))
    Dinv = np.empty((N, n))
    for i in range(n - 1, -1, -1):
        U = np.einsum("nab,nb->na", IA[:, i], S[:, i])                    # I^A_i S_i
        D = np.einsum("na,na->n", S[:, i], U)                             # D_i = S_iᵀ I^A_i S_i
        if robot.armature is not None:
            D = D + robot.armature[i]                                     # + the rotor's reflected inertia
        # D is 0 only up to rounding of the block it is taken from: I^A's linear block (kg) for a prismatic joint,
        # its angular block (kg·m² about o_i) for a revolute one; relative to that block only (a floor of 1 refused
        # a mm-size robot's wrist, D ~ 1e-14 kg·m², as moving no mass)
        block = IA[:, i, :3, :3] if prism[i] else IA[:, i, 3:, 3:]
        if not np.all(D > 1e-12 * np.abs(block).max(axis=(1, 2), initial=0.0)):
            raise ModelError(f"joint '{robot.joint_names[i]}' of robot '{robot.name}' moves no mass: "
                             "the joint-space inertia is singular")
        Dinv[:, i] = 1.0 / D
        P = np.eye(6) - S[:, i, :, None] * (U * Dinv[:, i, None])[:, None, :]   # 1 − S_i S̄_i
        L[:, i] = X[:, i] @ np.swapaxes(P, -1, -2)                        # eq. 8
        if parents[i] >= 0:                    # eq. 10: X (I^A − U D⁻¹ Uᵀ) Xᵀ, which is L I^A Lᵀ when D = SᵀI^A S
            Ia = IA[:, i] - U[:, :, None] * (U * Dinv[:, i, None])[:, None, :]   # (with armature D is larger)
            IA[:, parents[i]] += X[:, i] @ Ia @ np.swapaxes(X[:, i], -1, -2)
    # step 3, outward (eq. 24), only on the paths from the operational points to the base
    on_path = np.zeros(n, dtype=bool)
    for body, _ in fr:
        while body >= 0:
            on_path[body] = True
            body = parents[body]
    V = {}
    for i in np.flatnonzero(on_path):
        V[i] = S[:, i, :, None] * (S[:, i] * Dinv[:, i, None])[:, None, :]  # S_i D_i⁻¹ S_iᵀ
        if parents[i] >= 0:
            V[i] = V[i] + np.swapaxes(L[:, i], -1, -2) @ V[parents[i]] @ L[:, i]
    # step 4 (eq. 26): compound propagators ʰL*_b from each operational body b to all its ancestors h
    chains = []
    for body, _ in fr:
        G, b, Lstar = {body: None}, body, None                            # None: identity
        while parents[b] >= 0:
            Lstar = L[:, b] if Lstar is None else L[:, b] @ Lstar
            b = parents[b]
            G[b] = Lstar
        chains.append(G)
    # step 5 (eq. 22): frames at the operational points, e at p_e = o_i + R_i t, so r = R_i t
    Xe = [_shift(W.R[:, body] @ T[:3, 3]) for body, T in fr]
    m = len(fr)
    Linv = np.zeros((N, 6 * m, 6 * m))
    for a in range(m):
        for b in range(a, m):
            Ga, Gb = chains[a], chains[b]
            common = set(Ga) & set(Gb)
            if not common:                     # on different subtrees of the fixed base: decoupled
                continue
            h = max(common)                    # nearest common ancestor (indices grow along a path)
            Vab = V[h]
            if Ga[h] is not None:
                Vab = np.swapaxes(Ga[h], -1, -2) @ Vab                    # eq. 29
            if Gb[h] is not None:
                Vab = Vab @ Gb[h]
            blk = np.swapaxes(Xe[a], -1, -2) @ Vab @ Xe[b]                # eq. 22
            Linv[:, 6 * a:6 * a + 6, 6 * b:6 * b + 6] = blk
            Linv[:, 6 * b:6 * b + 6, 6 * a:6 * a + 6] = np.swapaxes(blk, -1, -2)
    return Linv


def _coupled_inverse(robot: RobotModel, q2: np.ndarray, frames) -> np.ndarray:
    """J M⁻¹ Jᵀ (N, 6m, 6m) from the stacked frame Jacobians and the mass matrix (eq. 14)."""
    from .forward_kinematics import frame_jacobian
    from .mass_matrix import mass_matrix
    names = [frames] if frames is None or isinstance(frames, str) else list(frames)
    J = np.concatenate([frame_jacobian(robot, q2, f) for f in names], axis=-2)     # (N, 6m, n)
    M = mass_matrix(robot, q2)
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        # name the coordinate, as Table 1's D_i = 0 does for a model without mimic joints (Romeo's hands,
        # coupled: M[LHand, LHand] = 0 was "a joint moves no mass")
        d = np.einsum("...ii->...i", M).reshape(-1, robot.n)
        idle = np.flatnonzero((d <= 1e-12 * np.abs(M).max(initial=0.0)).any(axis=0))
        if idle.size:
            raise ModelError(f"joint '{robot.joint_names[idle[0]]}' of robot '{robot.name}' moves no mass: "
                             "the joint-space inertia is singular") from None
        raise ModelError(f"robot '{robot.name}': the mass matrix is singular (a joint moves no mass), "
                         f"so the operational space inertia is undefined") from None
    X = np.linalg.solve(L, np.swapaxes(J, -1, -2))                                  # L⁻¹ Jᵀ
    return np.swapaxes(X, -1, -2) @ X


def operational_space_inertia(robot: RobotModel, q, frames=None, *, rcond: float = 1e-12) -> np.ndarray:
    """Operational-space inertia Λ (…, 6m, 6m) of the origins of the named frames (default: the
    tool frame), rows (linear; angular) per frame in world axes: Λ = (J M⁻¹ Jᵀ)⁻¹, by Chang &
    Khatib's Table 1 and a final symmetric inversion (step 6).

    Λ exists only where Λ⁻¹ is invertible (6m ≤ n and no kinematic singularity): when the smallest
    eigenvalue of Λ⁻¹ scaled to unit diagonal (D^-½ Λ⁻¹ D^-½, D = diag Λ⁻¹: the test then does not depend on
    the unit of length, which weighs the angular rows against the linear ones) is below ``rcond`` times its
    largest (at any sample) a `ModelError` is raised — use `operational_space_inertia_inverse` then."""
    try:
        valid = not isinstance(rcond, (bool, str, bytes)) and 0.0 <= float(rcond) < 1.0
    except (TypeError, ValueError, OverflowError):     # (OverflowError: a Python int beyond a double)
        valid = False
    if not valid:                      # (NaN or a negative rcond would let a singular Λ⁻¹ be inverted)
        raise ModelError(f"rcond: expected a number in [0, 1), got {short_repr(rcond)}")
    Linv = np.asarray(operational_space_inertia_inverse(robot, q, frames))
    single = Linv.ndim == 2
    k = Linv.shape[-1]
    Lam, bad = in_blocks(lambda x: _inverted(x, float(rcond)), 8.0 * 6 * k * k + 4096, Linv.reshape(-1, k, k))
    if np.any(bad):
        where = "" if single else f" at sample {int(np.flatnonzero(bad)[0])}"
        raise ModelError(f"operational space inertia of robot '{robot.name}' is singular{where} "
                         f"({k} task coordinates, {robot.n} joints); use operational_space_inertia_inverse")
    return Lam[0] if single else Lam


def _inverted(Linv: np.ndarray, rcond: float) -> tuple[np.ndarray, np.ndarray]:
    """(Λ, singular) of a block of Λ⁻¹ (N, k, k), step 6; Λ is not to be used where `singular`."""
    # symmetric PSD, scaled to unit diagonal: the angular rows of Λ⁻¹ are 1/(kg·m²), the linear ones 1/kg, so
    # unscaled a robot 1000× smaller (lengths in mm) had eigenvalue ratios 10⁶× smaller and was refused as singular
    d = np.sqrt(np.einsum("...ii->...i", Linv))
    s = np.divide(1.0, d, out=np.zeros_like(d), where=d > 0)             # (a zero row: singular)
    w, U = np.linalg.eigh(Linv * s[..., :, None] * s[..., None, :])
    bad = w[..., 0] <= rcond * w[..., -1]
    with np.errstate(divide="ignore", invalid="ignore"):                # (singular samples: refused by the caller)
        return s[..., :, None] * ((U / w[..., None, :]) @ np.swapaxes(U, -1, -2)) * s[..., None, :], bad
