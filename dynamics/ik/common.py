"""What the IK solvers share: results, targets and pose errors, and the kinematic chain to a frame
(joint transforms in Rodrigues form, the end pose)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..checks import floats, short_repr, switch, vector
from ..forward_kinematics import frame_pose
from ..model import PRISMATIC, ModelError, RobotModel

TWO_PI = 2.0 * math.pi
_EYE4 = np.eye(4)
MAX_OPTION = 1e150      # a number option's largest value: rot_weight² and damping² are doubles (1e200 overflowed)


class IKError(ModelError):
    """Bad input to an inverse-kinematics function."""


@dataclass
class IKResult:
    q: np.ndarray
    success: bool
    pos_err: float          # |p_d − p| (m)
    rot_err: float          # rotation angle of R_dᵀR (rad); 0 for a position-only target
    sweeps: int             # recursive sweeps (one move of every joint of the chain)
    newton_steps: int = 0   # damped Gauss–Newton steps added at the end (0: pure recursive method)
    status: str = ""        # converged | max_iterations | stalled


@dataclass
class TrackResult:
    q: np.ndarray            # (N, n)
    pos_err: np.ndarray      # (N,)
    rot_err: np.ndarray      # (N,)
    sweeps: np.ndarray       # (N,) sweeps per sample
    success: np.ndarray      # (N,) bool
    newton_steps: np.ndarray = field(default_factory=lambda: np.zeros(0, int))

    @property
    def all_success(self) -> bool:
        return bool(np.all(self.success))

    @property
    def total_sweeps(self) -> int:
        """Recursive sweeps over the whole path."""
        return int(np.sum(self.sweeps))

    @property
    def polished(self) -> int:
        """Samples the sweeps left outside the tolerance, finished by Newton steps."""
        return int(np.count_nonzero(self.newton_steps))


# ------------------------------------------------------------------------------ targets and errors
def _parse_target(target, name: str = "target"):
    """(p_d, R_d or None) from a 3-vector (position only) or a 4×4 pose."""
    T = _floats(name, target, "a position (3,) or a pose (4, 4)")
    if T.shape not in ((3,), (4, 4)):
        raise IKError(f"{name}: expected a position (3,) or a pose (4, 4), got shape {T.shape}")
    if not np.isfinite(T).all():
        raise IKError(f"{name}: values must be finite numbers")
    if T.shape == (3,):
        return T, None
    p, R = T[:3, 3].copy(), T[:3, :3].copy()
    if np.abs(R @ R.T - np.eye(3)).max() > 1e-6 or np.linalg.det(R) < 0:
        raise IKError(f"{name}: the 3×3 block of the target pose is not a rotation matrix")
    if np.abs(T[3] - (0.0, 0.0, 0.0, 1.0)).max() > 1e-9:    # (a transposed pose had its position read as 0, the
        #                                                     rotation transposed, and "stalled" as out of reach)
        raise IKError(f"{name}: the last row of a pose (4, 4) must be [0, 0, 0, 1], got {T[3].tolist()} (a "
                      f"transposed pose? the position is the last column)")
    return p, R


def _target_array(name: str, value) -> np.ndarray:
    """Targets given as one array: positions (N, 3) or poses (N, 4, 4) (`track_path`'s targets)."""
    arr = _floats(name, value, "positions (N, 3) or poses (N, 4, 4)")
    if arr.ndim not in (2, 3) or arr.shape[1:] not in ((3,), (4, 4)):
        one = " (one target? pass [target])" if arr.shape in ((3,), (4, 4)) else ""
        raise IKError(f"{name}: expected shape (N, 3) or (N, 4, 4), got {arr.shape}{one}")
    return arr


def _parse_targets(name: str, targets) -> list:
    """`_parse_target` of every target of a list (positions (3,) and poses (4, 4), mixed) or of one array
    (N, 3) or (N, 4, 4), each named ``name[i]``."""
    if not isinstance(targets, (list, tuple)):
        targets = _target_array(name, targets)
    return [_parse_target(t, f"{name}[{i}]") for i, t in enumerate(targets)]


def _as_starts(robot, starts, k: int | None = None, name: str = "starts") -> np.ndarray:
    """Starts (k, n) of finite joint values (`_as_q` of each): one per problem when k is given, else any number
    of them, one start (n,) too."""
    size = "k" if k is None else k
    count = "" if k is None else f"{k} "
    Q = _floats(name, starts, f"{count}starts of {robot.n} joint values, shape ({size}, {robot.n})")
    shape = Q.shape
    if shape == (0,) or (k is None and shape == (robot.n,)):
        Q = Q.reshape(-1, robot.n)
    if Q.ndim != 2 or Q.shape[1] != robot.n or (k is not None and len(Q) != k):
        what = "starts" if k is None else "one start per target"
        raise IKError(f"{name}: expected {what}, shape ({size}, {robot.n}), got shape {shape}")
    bad = np.argwhere(~np.isfinite(Q))
    if bad.size:
        raise IKError(f"{name}[{bad[0][0]}]: expected {robot.n} finite joint values, got {Q[bad[0][0]].tolist()}")
    return Q


def _dot3(a: np.ndarray, b: np.ndarray) -> float:
    """a·b of two 3-vectors, rounded as (a₀b₀ + a₁b₁) + a₂b₂ like `batch._dot` row by row. Not np.dot:
    BLAS's ddot may fuse the multiply-adds (OpenBLAS picks an FMA kernel on some CPUs, not on others), and
    the batched solvers must do the very same operations to give the same results bit for bit."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return a0 * b0 + a1 * b1 + a2 * b2


def _norm3(v: np.ndarray) -> float:
    """|v| of a 3-vector, as √(v·v) by `_dot3` (np.linalg.norm sums by BLAS too)."""
    return math.sqrt(_dot3(v, v))


def _rot_angle(Ra: np.ndarray, Rb: np.ndarray) -> float:
    """Angle of the relative rotation Raᵀ Rb (robust near 0 and π)."""
    M = Ra.T @ Rb
    s = 0.5 * math.sqrt((M[2, 1] - M[1, 2]) ** 2 + (M[0, 2] - M[2, 0]) ** 2 + (M[1, 0] - M[0, 1]) ** 2)
    c = 0.5 * (M[0, 0] + M[1, 1] + M[2, 2] - 1.0)
    return math.atan2(s, c)


def _rot_log(R: np.ndarray) -> np.ndarray:
    """Rotation vector of R (axis × angle)."""
    x, y, z = 0.5 * (R[2, 1] - R[1, 2]), 0.5 * (R[0, 2] - R[2, 0]), 0.5 * (R[1, 0] - R[0, 1])
    s = math.sqrt(x * x + y * y + z * z)
    if s >= 1e-9:                                   # the usual case, in scalars (one call per joint move)
        f = math.atan2(s, 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)) / s
        return np.array([x * f, y * f, z * f])
    v = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    s = np.linalg.norm(v)
    c = 0.5 * (np.trace(R) - 1.0)
    angle = math.atan2(s, c)
    if s < 1e-9:
        if c > 0:
            return v                                # small angle: sin φ ≈ φ
        # φ ≈ π: axis from the symmetric part
        B = 0.5 * (R + np.eye(3))
        k = int(np.argmax(np.diag(B)))
        axis = B[:, k] / math.sqrt(max(B[k, k], 1e-300))
        return angle * axis / np.linalg.norm(axis)
    return v * (angle / s)


def pose_error(robot: RobotModel, q, target, frame: str | None = None) -> tuple[float, float]:
    """(position error in m, orientation error in rad) of ``frame`` at ``q`` w.r.t. ``target``."""
    p_d, R_d = _parse_target(target)
    T = frame_pose(robot, _as_q(robot, q, "q"), frame)
    return float(np.linalg.norm(p_d - T[:3, 3])), (0.0 if R_d is None else _rot_angle(R_d, T[:3, :3]))


# ------------------------------------------------------------------------------ the chain
class _Chain:
    """The joints that move ``frame`` (ancestors of its body), base to tip, with fixed transforms.
    ``joints`` are their coordinates (indices into q); with mimic joints (`dynamics.mimic`) the chain
    must be made of independent joints only: the one-joint-at-a-time steps assume each coordinate
    moves one joint of the chain."""

    def __init__(self, robot: RobotModel, frame: str | None):
        body, T_body_frame = robot.frame(frame)
        anc = robot.subtree_mask()[:, body]
        bodies = [int(j) for j in np.flatnonzero(anc)]               # parents come first (parents[i] < i)
        self.joints = bodies
        if robot.coupling is not None:
            c = robot.coupling
            self.joints = [int(c.coordinate[b]) for b in bodies]
            for b, k in zip(bodies, self.joints):
                if c.joint_names[b] != robot.joint_names[k]:
                    raise IKError(f"frame '{frame or robot.tool_frame}': moved by the mimic joint '{c.joint_names[b]}' "
                                  f"(follows '{robot.joint_names[k]}'); inverse kinematics needs a chain of "
                                  f"independent joints (load with mimic=\"independent\")")
        self.robot = robot
        self.T_end = T_body_frame
        self.P = []
        for j in bodies:
            P = np.eye(4)
            P[:3, :3] = robot.placement_rotations[j]
            P[:3, 3] = robot.placement_translations[j]
            self.P.append(P)
        self.prismatic = [robot.joint_types[j] == PRISMATIC for j in bodies]
        self.axes = [np.array(robot.axes[j]) for j in bodies]
        # Rodrigues in 4×4 form: X(q) = 1 + sin q K + (1 − cos q) K², K = [axis]× (revolute)
        # or X(q) = 1 + q K with K the translation generator (prismatic)
        self._K, self._K2 = [], []
        for a, pri in zip(self.axes, self.prismatic):
            K = np.zeros((4, 4))
            if pri:
                K[:3, 3] = a
            else:
                K[:3, :3] = [[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]]
            self._K.append(K)
            self._K2.append(K @ K)

    def joint_transform(self, k: int, qk: float) -> np.ndarray:
        if self.prismatic[k]:
            return _EYE4 + qk * self._K[k]
        return _EYE4 + math.sin(qk) * self._K[k] + (1.0 - math.cos(qk)) * self._K2[k]

    def jacobian(self, q) -> tuple[np.ndarray, np.ndarray]:
        """(end pose (4, 4), geometric Jacobian (6, m) of the chain's joints): rows (v; ω) in the base frame,
        column k = (z_k × (p − o_k); z_k) for a revolute joint, (z_k; 0) for a prismatic one (one forward
        pass over the chain; the same matrix as `frame_jacobian` restricted to the chain's columns)."""
        m = len(self.joints)
        Z = np.empty((m, 3))
        O = np.empty((m, 3))
        T = _EYE4
        for k, j in enumerate(self.joints):
            F = T @ self.P[k]
            Z[k] = F[:3, :3] @ self.axes[k]
            O[k] = F[:3, 3]
            T = F @ self.joint_transform(k, q[j])
        Te = T @ self.T_end
        J = np.zeros((6, m))
        rev = ~np.asarray(self.prismatic, bool)
        J[:3] = np.where(rev[:, None], np.cross(Z, Te[:3, 3] - O), Z).T
        J[3:] = np.where(rev[:, None], Z, 0.0).T
        return Te, J


    def tails(self, q: np.ndarray) -> list[np.ndarray]:
        """X_k(q_k) · ^kT_end for every chain joint k: the end pose seen from joint k's frame before its
        motion (the factor right of A'_k in eq. 13), one backward pass."""
        m = len(self.joints)
        S = [None] * m
        T = self.joint_transform(m - 1, q[self.joints[m - 1]]) @ self.T_end
        S[m - 1] = T
        for k in range(m - 1, 0, -1):
            T = self.joint_transform(k - 1, q[self.joints[k - 1]]) @ (self.P[k] @ T)
            S[k - 1] = T
        return S


def _end_pose(chain: _Chain, q) -> np.ndarray:
    T = np.eye(4)
    for k, j in enumerate(chain.joints):
        T = T @ chain.P[k] @ chain.joint_transform(k, q[j])
    return T @ chain.T_end


def _checked(check, *args):
    """``check(*args)``, a `dynamics.checks` function, its one-line ModelError raised as an IKError."""
    try:
        return check(*args)
    except ModelError as exc:
        raise IKError(str(exc)) from None


def _floats(name: str, value, expected: str) -> np.ndarray:
    """`checks.floats` as an IKError: a complex, boolean, text or object value, or an int beyond a double, is
    named in one line (np.asarray would raise TypeError or OverflowError, drop an imaginary part or parse "1")."""
    return _checked(floats, name, value, expected)


def _as_q(robot, q0, name: str = "q0"):
    q = _floats(name, q0, f"{robot.n} joint values").reshape(-1)
    if q.shape != (robot.n,) or not np.isfinite(q).all():
        raise IKError(f"{name}: expected {robot.n} finite joint values, got {np.shape(q0)}")
    return q


def _options(counts: dict = {}, numbers: dict = {}, switches: dict = {}, optional: tuple = ()) -> None:
    """One-line IKErrors for the solvers' options, before any work: `counts` ints >= 0, `numbers` real numbers
    in [0, MAX_OPTION] (tolerances may be larger, inf too; rot_weight, the length L of h, > 0: at 0 a pose's
    orientation had no weight and `solve_ik` "stalled" 2.3 rad off it), `switches` True/False; None only for
    the `optional` names (dt, …).
    (Unchecked, a string or an array reached a comparison: TypeError or numpy's "truth value … ambiguous".)"""
    for name, v in counts.items():
        if (v is None and name in optional) or (not isinstance(v, (bool, np.bool_))
                                                and isinstance(v, (int, np.integer)) and v >= 0):
            continue
        raise IKError(f"{name}: expected a whole number >= 0, got {short_repr(v)}")
    for name, v in numbers.items():
        if v is None and name in optional:
            continue
        try:
            x = float(v) if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) else -1.0
        except OverflowError:                                        # (a Python int beyond a double)
            x = -1.0
        if not (x >= 0 and (np.isfinite(x) or name.startswith("tol_"))):
            raise IKError(f"{name}: expected a number >= 0, got {short_repr(v)}")
        if x == 0 and name == "rot_weight":
            raise IKError(f"rot_weight: expected a positive length (m), got {short_repr(v)}")
        if x > MAX_OPTION and not name.startswith("tol_"):
            raise IKError(f"{name}: expected a number >= 0 and <= {MAX_OPTION:g}, got {short_repr(v)}")
    for name, v in switches.items():
        switch(name, v, IKError)


def _joint_limits(robot, q_min, q_max):
    """(q_min, q_max) as (n,) arrays, the model's where None (checked: numpy would broadcast a wrong shape)."""
    return (_checked(vector, "q_min", robot.q_min if q_min is None else q_min, robot.n, None),
            _checked(vector, "q_max", robot.q_max if q_max is None else q_max, robot.n, None))


def _on_limits(chain: _Chain, q: np.ndarray, q_min, q_max) -> np.ndarray:
    """The start ``q`` (n,) or (k, n) with the chain's joints brought within [q_min, q_max] (the limits of eq. 22;
    other joints as given). A start beyond a limit that already reached the target was returned as the solution
    ("converged", outside the limits the solvers promise to keep); a start inside is unchanged."""
    q = q.copy()
    cols = np.array(chain.joints)
    q[..., cols] = np.clip(q[..., cols], q_min[cols], q_max[cols])
    return q


def _velocity_bound(robot, qd_max, dt):
    if qd_max is None or dt is None:
        return None
    v = robot.qd_max if (isinstance(qd_max, str) and qd_max == "robot") or qd_max is True else qd_max
    _options(numbers={"dt": dt}, optional=("dt",))
    v = _checked(vector, "qd_max", v, robot.n, None)   # (a scalar or n values; np.broadcast_to's named nothing)
    return np.where(np.isfinite(v), v * dt, np.inf)


