"""The canonical rows every limit is reduced to, in (a, b) = (θ̈, θ̇²), and the `Limit` protocol.

At every path sample θ_i (a grid point or a station inside an interval, `socp.stations`) a limit
contributes rows

    lo_i ≤ A_i a + B_i b_i + C_i r_i ≤ hi_i                                              (canonical form)

where a is the path acceleration of the interval, b_i = θ̇_i² and r_i ≤ √b_i the cone variable of the
objective. Rows are normalised by the physical limit, so values are dimensionless (≈ value / limit).
The optimiser never knows which physical limit a row came from; adding a limit is adding one class with a
`rows` method (`joint`, `cartesian`; `rates` are limits on the sampled trajectory, handled apart).

Viscous friction F_v q′ θ̇ = F_v q′ √b is not linear in b. Its convex side uses r ≤ √b (conservative: the
true value lies on the safe side of the row), its other side the tangent of √b at a reference b_ref,
√b ≤ √b_ref/2 + b/(2√b_ref) (conservative too, exact at b = b_ref); the planner re-solves with b_ref at
the last solution while the tangent is off by more than `planning.planner.VISCOUS_TOL`.

Rows may depend affinely on named scalars (`RowBlock.deltas`: the boundary speeds b_start, b_end), used
by `socp.general.GeneralProblem`; `RowBlock.at(values)` applies them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import dynamics

from ..errors import InputError
from ..errors import short_repr

INACTIVE = 1.0      # bound used where a row does not apply (with zero coefficients: 0 ≤ 1)
FLIP_TOL = 1e-9     # `at_flip`


def per_joint_positive(value, n: int, field: str, *, allow_inf: bool = True) -> np.ndarray:
    """A positive number for every joint, or n positive numbers (inf = no limit when ``allow_inf``);
    anything else raises an `InputError` naming the field."""
    what = f"a number or {n} numbers" + (" (inf for no limit)" if allow_inf else " (finite)")
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):                    # ragged lists
        raw = None
    if raw is None or raw.dtype.kind not in "iuf":     # booleans (True read as 1), text, complex, None, objects
        raise InputError(f"{field}: expected {what}, got {short_repr(value)}")
    v = raw.astype(float)
    if v.ndim == 0:
        v = np.full(n, float(v))
    if v.ndim != 1 or v.size != n:
        raise InputError(f"{field}: expected a number or {n} values (one per joint), got {v.size} values")
    if np.isnan(v).any() or (v <= 0).any() or (not allow_inf and not np.isfinite(v).all()):
        raise InputError(f"{field}: every value must be > 0{'' if allow_inf else ' and finite'}, got {v.tolist()}")
    return v


@dataclass
class PathData:
    """Path samples (grid points or stations) and the robot they are evaluated for."""
    robot: object
    theta: np.ndarray          # (P,)
    q: np.ndarray              # (P, n)
    dq: np.ndarray             # (P, n)  q′
    ddq: np.ndarray            # (P, n)  q″
    _coeffs: object = field(default=None, repr=False)

    @property
    def coefficients(self) -> "dynamics.PathCoefficients":
        """m̃, c̃, d̃ (Safeea eq. 5, 32), computed once per robot and samples."""
        if self._coeffs is None:
            self._coeffs = dynamics.path_coefficients(self.robot, self.q, self.dq, self.ddq)
        return self._coeffs

    def with_robot(self, robot) -> "PathData":
        return PathData(robot, self.theta, self.q, self.dq, self.ddq)

    def take(self, index) -> "PathData":
        """The samples at `index` (an index array or slice), with their coefficients (computed here if
        they were not yet)."""
        co = self.coefficients
        return PathData(self.robot, self.theta[index], self.q[index], self.dq[index], self.ddq[index],
                        type(co)(*(x[index] for x in co)))

    @property
    def size(self) -> int:
        return int(self.theta.shape[0])


def at_flip(dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
    """(P, n) bool: the samples that stand on a zero of q′_k where it changes sign, a Coulomb flip: their
    distance to the root, |q′_k| / |q″_k|, within `FLIP_TOL` of the sample's own θ-scale ‖q′‖∞ / ‖q″‖∞
    (scale-free). A grid point `prepare.on_coulomb_flips` moved onto one, a station the repair moved onto one
    the check found (`samples.CrossingSamples`); not a joint that does not move (q′_k = q″_k = 0)."""
    dq, ddq = np.abs(dq), np.abs(ddq)
    return dq * ddq.max(axis=-1, keepdims=True) < FLIP_TOL * ddq * dq.max(axis=-1, keepdims=True)


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


def tangent_point(b, top=None) -> np.ndarray:
    """θ̇² values `b` floored at 1e-8 × the largest of them (or of `top`): a tangent point for the rows' √b
    terms (viscous friction), away from the zero where √b has none."""
    b = np.asarray(b, dtype=float)
    return np.maximum(b, 1e-8 * max(np.max(b if top is None else top), 1e-300))


def limit_scale(scales, kind: str, P: int, n: int) -> np.ndarray:
    """Per-point, per-joint factor (≤ 1) applied to a limit (used to tighten it between grid points)."""
    if scales is None or kind not in scales:
        return np.ones((P, n))
    return np.broadcast_to(np.asarray(scales[kind], dtype=float), (P, n))


class Limit:
    """A kind of limit: `rows` gives its canonical rows at the path samples of `data` (None: no rows);
    `check_time_law` adds its own between-grid ratios to a `verify.LimitCheck` when the physics behind
    it is not one of the joint limits that `verify` recomputes (default: nothing to add)."""
    kind = "limit"
    headroom_checked = False      # its ratios at every sub-sample reach `LimitCheck.rho` (`verify.gap_estimate`)

    def rows(self, data: PathData, *, b_ref=None, scales=None) -> RowBlock | None:
        raise NotImplementedError

    def check_time_law(self, robot, sub, b, check, d=None) -> None:
        return None


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
