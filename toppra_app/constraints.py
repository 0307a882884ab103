"""Limits along the path, each reduced to rows of one canonical form in (a, b) = (θ̈, θ̇²).

At every grid point θ_i a limit contributes rows

    lo_i ≤ A_i a + B_i b_i + C_i r_i ≤ hi_i                                              (canonical form)

where a is the path acceleration used at that point (the adjacent interval's, see `planner`), b_i = θ̇_i²
and r_i ≤ √b_i is the auxiliary "speed" variable of the objective's cones. Rows are normalised by the
physical limit, so values are dimensionless (≈ value / limit). The optimiser never knows which physical
limit a row came from; adding a limit is adding one small class with a `rows` method.

Kinds of limits (torque as in Verscheure et al. 2009 with Safeea et al. 2019, eq. 5):

* joint torque  τ = m̃ a + c̃ b + d̃ (+ F_v q′ √b viscous friction),  |τ_k| ≤ τ_max,k
* joint velocity  q̇ = q′ θ̇:  q′_k² b ≤ q̇_max,k²  (one row: b ≤ min_k q̇_max,k² / q′_k²)
* joint acceleration  q̈ = q′ a + q″ b:  |q̈_k| ≤ q̈_max,k
* boundary velocities  b_0 = θ̇_start²,  b_N = θ̇_end²

Viscous friction F_v q′ θ̇ = F_v q′ √b is not linear in b. Its convex side uses the cone variable r ≤ √b
(conservative: the true value lies on the safe side of the row), its other side uses the tangent of √b
at a reference b_ref, √b ≤ √b_ref/2 + b/(2√b_ref) (conservative too, exact at b = b_ref); the planner
re-solves with b_ref = the last solution until the duration stops changing (a sequential convex scheme).

Rows may depend affinely on a few named scalars p (payload inertial parameters, boundary speeds):
X(p) = X₀ + Σ_k p_k X_k for X ∈ {A, B, C, lo, hi}; `RowBlock.deltas` holds the X_k. The optimiser makes
only these scalars cvxpy Parameters, so a new payload or new boundary speeds re-solve without compiling.
Rigid-body torques are linear in a body's ten standard inertial parameters
π = (m, m c, I_O) (mass, first moment, inertia about the body origin; Atkeson et al. 1986), so a
payload merged into body k changes m̃, c̃, d̃ by Σ_j Δπ_j ∂(m̃, c̃, d̃)/∂π_j exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import dynamics

INACTIVE = 1.0      # bound used where a row does not apply (with zero coefficients: 0 ≤ 1)


PAYLOAD_PARAMS = tuple(f"payload_{name}" for name in
                       ("m", "hx", "hy", "hz", "Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz"))


def per_joint_positive(value, n: int, field: str, *, allow_inf: bool = True) -> np.ndarray:
    """A positive number for every joint, or n positive numbers (inf = no limit when ``allow_inf``);
    anything else raises an `InputError` naming the field."""
    from .errors import InputError
    what = f"a number or {n} numbers" + (" (inf for no limit)" if allow_inf else " (finite)")
    if isinstance(value, (bool, str)) or value is None:
        raise InputError(f"{field}: expected {what}, got {value!r}")
    try:
        v = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{field}: expected {what}, got {value!r}") from None
    if v.ndim == 0:
        v = np.full(n, float(v))
    if v.ndim != 1 or v.size != n:
        raise InputError(f"{field}: expected a number or {n} values (one per joint), got {v.size} values")
    if np.isnan(v).any() or (v <= 0).any() or (not allow_inf and not np.isfinite(v).all()):
        raise InputError(f"{field}: every value must be > 0{'' if allow_inf else ' and finite'}, got {v.tolist()}")
    return v


def standard_parameters(mass, com, inertia) -> np.ndarray:
    """π = (m, m c, I_O): mass, first moment and inertia about the body origin (xx, yy, zz, xy, xz, yz)."""
    c = np.asarray(com, dtype=float)
    I_o = np.asarray(inertia, dtype=float) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.concatenate(([mass], mass * c, [I_o[0, 0], I_o[1, 1], I_o[2, 2], I_o[0, 1], I_o[0, 2], I_o[1, 2]]))


def from_standard_parameters(pi) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, com, inertia about the COM) from π = (m, m c, I_O)."""
    m = float(pi[0])
    c = np.asarray(pi[1:4], dtype=float) / m
    xx, yy, zz, xy, xz, yz = pi[4:10]
    I_o = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)
    return m, c, I_o - m * (c @ c * np.eye(3) - np.outer(c, c))


def body_parameters(robot, body: int) -> np.ndarray:
    """Standard inertial parameters of one body of a robot (in the body frame)."""
    return standard_parameters(robot.masses[body], robot.coms[body], robot.inertias[body])



def _cross0(a, b):
    """Cross product over the first axis."""
    return np.stack((a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]))


def payload_regressor(robot, body: int, q, dq, ddq) -> np.ndarray:
    """∂(m̃, c̃, d̃)/∂π of one body's ten standard parameters π = (m, h = m c, I_O) (body frame), shape
    (3, P, n, 10): rows m̃, c̃, d̃ (rigid body only; friction does not depend on π).

    The torques are linear in π (Atkeson, An & Hollerbach 1986): with the body's world angular velocity
    ω, angular acceleration ω̇ and origin acceleration a (base acceleration −g for gravity), h_w = R h and
    I_w = R I_O Rᵀ, its force and moment about its origin are f = m a + ω̇ × h_w + ω × (ω × h_w) and
    n = I_w ω̇ + ω × (I_w ω) + h_w × a, and joint j on its chain gets τ_j = z_j·(n + (o − o_j) × f)
    (revolute) or z_j·f (prismatic). The three motions (q̇, q̈, gravity) = (0, q′, off) for m̃,
    (q′, q″, off) for c̃ and (0, 0, on) for d̃ are propagated together along the body's chain."""
    from dynamics._batch import world_quantities_t
    from dynamics.model import PRISMATIC
    q, dq, ddq = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, dq, ddq))
    P, n = q.shape
    W = world_quantities_t(robot, q)                              # (n, 3, P) layout
    chain = []
    j = int(body)
    while j >= 0:
        chain.append(j)
        j = int(robot.parents[j])
    chain.reverse()
    zeros = np.zeros((P, n))
    qd = np.stack([zeros, dq, zeros]).transpose(2, 0, 1)          # (n, 3 motions, P)
    qdd = np.stack([dq, ddq, zeros]).transpose(2, 0, 1)
    a = np.zeros((3, 3, P))                                      # (xyz, motion, P)
    a[:, 2, :] = -np.asarray(robot.gravity, dtype=float)[:, None]
    w = np.zeros((3, 3, P))
    dw = np.zeros((3, 3, P))
    o_prev = None
    for j in chain:                                              # RNEA forward pass along the chain
        zj = W.z[j][:, None, :]
        if o_prev is not None:
            r = (W.o[j] - o_prev)[:, None, :]
            a = a + _cross0(dw, r) + _cross0(w, _cross0(w, r))
        if robot.joint_types[j] == PRISMATIC:
            a = a + 2.0 * qd[j][None] * _cross0(w, zj) + qdd[j][None] * zj
        else:
            dw = dw + qdd[j][None] * zj + qd[j][None] * _cross0(w, zj)
            w = w + qd[j][None] * zj
        o_prev = W.o[j]
    R = W.R[body]                                                # (3, 3, P) world ← body
    F = np.zeros((10, 3, 3, P))                                  # force per unit parameter
    Nm = np.zeros((10, 3, 3, P))                                 # moment about the body origin
    F[0] = a
    for i in range(3):
        h = R[:, i, :][:, None, :]
        F[1 + i] = _cross0(dw, h) + _cross0(w, _cross0(w, h))
        Nm[1 + i] = _cross0(h, a)
    w_b = np.einsum("abp,amp->bmp", R, w)                        # body axes
    dw_b = np.einsum("abp,amp->bmp", R, dw)
    for s_, (u, v) in enumerate(((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))):
        E = np.zeros((3, 3))
        E[u, v] = E[v, u] = 1.0
        nb = np.einsum("ab,bmp->amp", E, dw_b) + _cross0(w_b, np.einsum("ab,bmp->amp", E, w_b))
        Nm[4 + s_] = np.einsum("abp,bmp->amp", R, nb)
    out = np.zeros((3, P, n, 10))
    for j in chain:                                              # τ_j = z_j·n + (z_j × (o − o_j))·f
        zj = W.z[j]
        if robot.joint_types[j] == PRISMATIC:
            out[:, :, j, :] = np.einsum("ap,kamp->mpk", zj, F)
        else:
            zr = _cross0(zj, W.o[body] - W.o[j])
            out[:, :, j, :] = np.einsum("ap,kamp->mpk", zj, Nm) + np.einsum("ap,kamp->mpk", zr, F)
    return out


@dataclass
class PathData:
    """Path samples at the grid points and the robot they are evaluated for."""
    robot: object
    theta: np.ndarray          # (P,)
    q: np.ndarray              # (P, n)
    dq: np.ndarray             # (P, n)  q′
    ddq: np.ndarray            # (P, n)  q″
    payload_body: int | None = None    # body whose inertial parameters are Parameters (None: none)
    _coeffs: object = field(default=None, repr=False)
    _basis: object = field(default=None, repr=False)

    @property
    def coefficients(self) -> "dynamics.PathCoefficients":
        """m̃, c̃, d̃ (Safeea eq. 5, 32), computed once per robot and grid."""
        if self._coeffs is None:
            self._coeffs = dynamics.path_coefficients(self.robot, self.q, self.dq, self.ddq)
        return self._coeffs

    @property
    def payload_basis(self) -> list:
        """∂(m̃, c̃, d̃)/∂π_j for the ten standard parameters of `payload_body` (a list of
        PathCoefficients), from the body's regressor (`payload_regressor`, exact, one batched pass)."""
        if self._basis is None:
            Y = payload_regressor(self.robot, self.payload_body, self.q, self.dq, self.ddq)   # (3, P, n, 10)
            self._basis = [dynamics.PathCoefficients(Y[0, ..., j], Y[1, ..., j], Y[2, ..., j]) for j in range(10)]
        return self._basis

    def with_robot(self, robot) -> "PathData":
        return PathData(robot, self.theta, self.q, self.dq, self.ddq, self.payload_body)

    @property
    def size(self) -> int:
        return int(self.theta.shape[0])


@dataclass
class RowBlock:
    """Rows of the canonical form at every grid point: arrays (P, R) and per-row flags (R,)."""
    kind: str                  # "torque", "velocity", "acceleration", "boundary", ...
    joints: np.ndarray         # (R,) joint index of each row (-1: not one joint)
    A: np.ndarray              # (P, R) coefficient of a
    B: np.ndarray              # (P, R) coefficient of b
    C: np.ndarray              # (P, R) coefficient of r (≤ √b)
    lo: np.ndarray             # (P, R) lower bounds (ignored where not has_lo)
    hi: np.ndarray             # (P, R) upper bounds (ignored where not has_hi)
    has_lo: np.ndarray         # (R,) bool
    has_hi: np.ndarray         # (R,) bool
    uses_a: bool = True        # False when A ≡ 0 (the row is enforced once per point)
    uses_r: bool = False       # True when C can be non-zero
    points: np.ndarray | None = None   # (P,) bool: grid points where the rows apply (None: all)
    equality: bool = False     # rows are equalities (lo = hi): enforced as ``== lo``
    deltas: dict = field(default_factory=dict)   # {parameter name: {"A"|"B"|"C"|"lo"|"hi": (P, R)}}

    @property
    def size(self) -> int:
        return int(self.joints.shape[0])

    def signature(self) -> tuple:
        """What the compiled optimisation problem depends on (not the values)."""
        pts = None if self.points is None else np.asarray(self.points, bool).tobytes()
        return (self.kind, self.size, self.has_lo.tobytes(), self.has_hi.tobytes(), self.uses_a, self.uses_r,
                pts, self.equality, tuple(sorted(self.deltas)))

    def at(self, values: dict | None) -> "RowBlock":
        """The rows with the named parameters set to `values` (missing names: 0), without deltas."""
        out = {key: np.array(getattr(self, key), dtype=float) for key in ("A", "B", "C", "lo", "hi")}
        for name, d in self.deltas.items():
            p = float((values or {}).get(name, 0.0))
            if p:
                for key, arr in d.items():
                    out[key] += p * arr
        return RowBlock(self.kind, self.joints, out["A"], out["B"], out["C"], out["lo"], out["hi"], self.has_lo,
                        self.has_hi, self.uses_a, self.uses_r, self.points, self.equality)


def _scale(scales, kind: str, P: int, n: int) -> np.ndarray:
    """Per-point, per-joint factor (≤ 1) applied to a limit (used to tighten it between grid points)."""
    if scales is None or kind not in scales:
        return np.ones((P, n))
    return np.broadcast_to(np.asarray(scales[kind], dtype=float), (P, n))


class Limit:
    """A kind of limit: `rows` gives its canonical rows at the path samples of `data` (None: no rows);
    `check_time_law` adds its own between-grid ratios to a `verify.LimitCheck` when the physics behind
    it is not one of the joint limits that `verify` recomputes (default: nothing to add)."""
    kind = "limit"

    def rows(self, data: PathData, *, b_ref=None, scales=None) -> RowBlock | None:
        raise NotImplementedError

    def check_time_law(self, robot, sub, b, check) -> None:
        return None


class JointTorqueLimit(Limit):
    """|τ_k| ≤ τ_max,k with τ = m̃ θ̈ + c̃ θ̇² + d̃ + F_v q′ θ̇ (rigid body, Coulomb in d̃, viscous apart)."""
    kind = "torque"

    @staticmethod
    def _joints(robot):
        lim = np.flatnonzero(np.isfinite(robot.tau_max))
        visc = robot.viscous[lim] > 0
        return lim, visc

    def rows(self, data: PathData, *, b_ref=None, scales=None) -> RowBlock | None:
        robot = data.robot
        lim, visc = self._joints(robot)
        if lim.size == 0:
            return None
        P = data.size
        coeff = data.coefficients
        tau = robot.tau_max[lim] * _scale(scales, self.kind, P, robot.n)[:, lim]        # (P, k)
        m, c, d = coeff.m[:, lim] / tau, coeff.c[:, lim] / tau, coeff.d[:, lim] / tau
        # joints without viscous friction: one two-sided row  −1 − d ≤ m a + c b ≤ 1 − d
        plain = ~visc
        blocks_A = [m[:, plain]]
        blocks_B = [c[:, plain]]
        blocks_C = [np.zeros_like(m[:, plain])]
        blocks_lo = [-1.0 - d[:, plain]]
        blocks_hi = [1.0 - d[:, plain]]
        joints = [lim[plain]]
        has_lo = [np.ones(plain.sum(), bool)]
        has_hi = [np.ones(plain.sum(), bool)]
        if visc.any():
            jv = lim[visc]
            v = (robot.viscous[jv] * data.dq[:, jv]) / tau[:, visc]               # τ_visc/τ_max = v √b
            if b_ref is None:
                b_ref = np.ones(P)
            sq = np.sqrt(np.maximum(np.asarray(b_ref, dtype=float), 1e-12))[:, None]
            pos = v >= 0
            # upper row: m a + c b + d + v√b ≤ 1
            #   v ≥ 0: √b ≤ sq/2 + b/(2 sq) (tangent);   v < 0: v√b ≤ v r  (r ≤ √b)
            A_u = m[:, visc]
            B_u = c[:, visc] + np.where(pos, v / (2 * sq), 0.0)
            C_u = np.where(pos, 0.0, v)
            hi_u = 1.0 - d[:, visc] - np.where(pos, v * sq / 2, 0.0)
            # lower row: m a + c b + d + v√b ≥ −1
            #   v ≥ 0: v√b ≥ v r;   v < 0: v√b ≥ v (sq/2 + b/(2 sq))
            B_l = c[:, visc] + np.where(pos, 0.0, v / (2 * sq))
            C_l = np.where(pos, v, 0.0)
            lo_l = -1.0 - d[:, visc] - np.where(pos, 0.0, v * sq / 2)
            k = jv.size
            blocks_A += [A_u, A_u]
            blocks_B += [B_u, B_l]
            blocks_C += [C_u, C_l]
            blocks_lo += [np.full((P, k), -INACTIVE), lo_l]
            blocks_hi += [hi_u, np.full((P, k), INACTIVE)]
            joints += [jv, jv]
            has_lo += [np.zeros(k, bool), np.ones(k, bool)]
            has_hi += [np.ones(k, bool), np.zeros(k, bool)]
        order = np.concatenate([np.flatnonzero(plain)] + ([np.flatnonzero(visc)] * 2 if visc.any() else []))
        deltas = {}
        if data.payload_body is not None:
            # rows are affine in the payload's standard parameters: A += Δm̃/τ, B += Δc̃/τ, lo, hi −= Δd̃/τ
            for name, dc in zip(PAYLOAD_PARAMS, data.payload_basis):
                dm, dcc, dd = (x[:, lim][:, order] / tau[:, order] for x in dc)
                deltas[name] = {"A": dm, "B": dcc, "lo": -dd, "hi": -dd}
        return RowBlock(self.kind, np.concatenate(joints), np.hstack(blocks_A), np.hstack(blocks_B),
                        np.hstack(blocks_C), np.hstack(blocks_lo), np.hstack(blocks_hi),
                        np.concatenate(has_lo), np.concatenate(has_hi), uses_a=True, uses_r=bool(visc.any()),
                        deltas=deltas)


class JointVelocityLimit(Limit):
    """|q′_k θ̇| ≤ q̇_max,k for all k, i.e. one row per point: b / b_max ≤ 1 with b_max = min_k q̇_max,k²/q′_k²."""
    kind = "velocity"

    def b_max(self, data: PathData, scales=None) -> np.ndarray:
        """The velocity-limit curve b_max(θ) (inf where no joint moves)."""
        robot = data.robot
        vmax = robot.qd_max * _scale(scales, self.kind, data.size, robot.n)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_joint = np.where(np.abs(data.dq) > 0, (vmax / np.abs(data.dq)) ** 2, np.inf)
        return per_joint.min(axis=1)

    def rows(self, data: PathData, *, b_ref=None, scales=None) -> RowBlock | None:
        if not np.isfinite(data.robot.qd_max).any():
            return None
        P = data.size
        bmax = self.b_max(data, scales)
        B = np.where(np.isfinite(bmax), 1.0 / np.where(np.isfinite(bmax), np.maximum(bmax, 1e-300), 1.0), 0.0)
        return RowBlock(self.kind, np.array([-1]), np.zeros((P, 1)), B[:, None], np.zeros((P, 1)),
                        np.full((P, 1), -INACTIVE), np.ones((P, 1)), np.zeros(1, bool), np.ones(1, bool),
                        uses_a=False)


class JointAccelerationLimit(Limit):
    """|q′_k θ̈ + q″_k θ̇²| ≤ q̈_max,k."""
    kind = "acceleration"

    def rows(self, data: PathData, *, b_ref=None, scales=None) -> RowBlock | None:
        robot = data.robot
        lim = np.flatnonzero(np.isfinite(robot.qdd_max))
        if lim.size == 0:
            return None
        P = data.size
        amax = robot.qdd_max[lim] * _scale(scales, self.kind, P, robot.n)[:, lim]
        k = lim.size
        return RowBlock(self.kind, lim, data.dq[:, lim] / amax, data.ddq[:, lim] / amax, np.zeros((P, k)),
                        -np.ones((P, k)), np.ones((P, k)), np.ones(k, bool), np.ones(k, bool), uses_a=True)


class BoundaryVelocity(Limit):
    """θ̇ at the ends of the path: b_0 = θ̇_start², b_N = θ̇_end² (equality rows at the two end points).

    The values are the named parameters ``b_start`` and ``b_end`` (see `values`), so new boundary
    speeds re-solve without compiling."""
    kind = "boundary"
    PARAMS = ("b_start", "b_end")

    def __init__(self, sd_start: float = 0.0, sd_end: float = 0.0):
        self.sd_start = float(sd_start)
        self.sd_end = float(sd_end)

    def values(self) -> dict:
        return {"b_start": self.sd_start ** 2, "b_end": self.sd_end ** 2}

    def rows(self, data: PathData, *, b_ref=None, scales=None) -> RowBlock:
        P = data.size
        B = np.zeros((P, 1))
        zero = np.zeros((P, 1))
        points = np.zeros(P, bool)
        deltas = {}
        for i, name in ((0, "b_start"), (P - 1, "b_end")):
            B[i] = 1.0
            points[i] = True
            e = np.zeros((P, 1))
            e[i] = 1.0
            deltas[name] = {"lo": e, "hi": e}
        return RowBlock(self.kind, np.array([-1]), zero, B, zero, zero, zero, np.ones(1, bool), np.ones(1, bool),
                        uses_a=False, points=points, equality=True, deltas=deltas)


def default_limits(sd_start: float = 0.0, sd_end: float = 0.0) -> list[Limit]:
    """Torque, velocity, acceleration and boundary-velocity limits (each skipped where the robot has none)."""
    return [JointTorqueLimit(), JointVelocityLimit(), JointAccelerationLimit(), BoundaryVelocity(sd_start, sd_end)]


def max_path_speed_squared(blocks: list[RowBlock], b_hi: float | np.ndarray | None = None,
                           iterations: int = 60) -> np.ndarray:
    """The largest b = θ̇² at every grid point for which some θ̈ meets all `blocks`' rows at that point
    (the "maximum velocity curve" of the phase plane), by bisection on b, vectorised over points.

    For fixed b each row bounds θ̈ to an interval; the point is passable at b when the intervals
    intersect. The feasible b form an interval containing 0 when the robot can hold the pose.
    Equality rows (boundary speeds) are ignored. Returns inf where nothing bounds b (up to `b_hi`)."""
    blocks = [blk for blk in blocks if not blk.equality]
    P = blocks[0].A.shape[0] if blocks else 0

    def feasible(b):
        lo_a = np.full(P, -np.inf)
        hi_a = np.full(P, np.inf)
        ok = np.ones(P, bool)
        sq = np.sqrt(b)
        for blk in blocks:
            rest = blk.B * b[:, None] + blk.C * sq[:, None]
            for side, has in (("hi", blk.has_hi), ("lo", blk.has_lo)):
                bound = np.where(has[None, :], (blk.hi if side == "hi" else blk.lo) - rest, np.nan)
                A = blk.A
                small = np.abs(A) < 1e-12
                with np.errstate(divide="ignore", invalid="ignore"):
                    v = bound / np.where(small, 1.0, A)
                if side == "hi":
                    ok &= ~np.any(small & (bound < -1e-9), axis=1)
                    upper = ~small & (A > 0)
                else:
                    ok &= ~np.any(small & (bound > 1e-9), axis=1)
                    upper = ~small & (A < 0)
                lower = ~small & ~upper
                hv = np.where(upper & has[None, :], v, np.inf)
                lv = np.where(lower & has[None, :], v, -np.inf)
                hi_a = np.minimum(hi_a, hv.min(axis=1, initial=np.inf))
                lo_a = np.maximum(lo_a, lv.max(axis=1, initial=-np.inf))
        return ok & (lo_a <= hi_a + 1e-12 * np.maximum(1.0, np.abs(lo_a)))

    top = np.full(P, 1e6) if b_hi is None else np.broadcast_to(np.asarray(b_hi, dtype=float), (P,)).copy()
    top = np.where(np.isfinite(top), top, 1e6)
    unbounded = feasible(top)
    lo = np.zeros(P)
    hi = top.copy()
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        f = feasible(mid)
        lo = np.where(f, mid, lo)
        hi = np.where(f, hi, mid)
    out = lo
    out[unbounded] = np.inf if b_hi is None else top[unbounded]
    out[~feasible(np.zeros(P))] = np.nan
    return out
