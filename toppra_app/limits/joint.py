"""Joint limits as canonical rows (`rows`), after Verscheure et al. 2009 with Safeea et al. 2019, eq. 5:

* joint torque  τ = m̃ a + c̃ b + d̃ (+ F_v q′ √b viscous friction),  |τ_k| ≤ τ_max,k
* joint velocity  q̇ = q′ θ̇:  q′_k² b ≤ q̇_max,k²  (one row: b ≤ min_k q̇_max,k² / q′_k²)
* joint acceleration  q̈ = q′ a + q″ b:  |q̈_k| ≤ q̈_max,k
* boundary velocities  b_0 = θ̇_start²,  b_N = θ̇_end²
"""

from __future__ import annotations

import numpy as np

from .rows import INACTIVE, Limit, PathData, RowBlock, at_flip, limit_scale


class JointTorqueLimit(Limit):
    """|τ_k| ≤ τ_max,k with τ = m̃ θ̈ + c̃ θ̇² + d̃ + F_v q′ θ̇ (rigid body, Coulomb in d̃, viscous apart)."""
    kind = "torque"
    headroom_checked = True

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
        tau = robot.tau_max[lim] * limit_scale(scales, self.kind, P, robot.n)[:, lim]        # (P, k)
        m, c, d = coeff.m[:, lim] / tau, coeff.c[:, lim] / tau, coeff.d[:, lim] / tau
        # on a Coulomb flip (q′_k changes sign here: `at_flip`) the joint is at rest for an instant, its friction
        # anywhere in [−F_c, F_c]: |m a + c b + g| ≤ τ_max + F_c. The one-sided limits next to it, g ± F_c with
        # the θ̈ of either side, are the rows of the stations just beside it (`prepare.flip_sides`)
        band = np.where(at_flip(data.dq, data.ddq)[:, lim], robot.coulomb[lim] / tau, 0.0) \
            if (robot.coulomb[lim] > 0).any() else np.zeros_like(d)                # (P, k) F_c / τ_max
        d = d - band * np.sign(data.dq[:, lim])
        # joints without viscous friction: one two-sided row  −1 − d ≤ m a + c b ≤ 1 − d
        plain = ~visc
        blocks_A = [m[:, plain]]
        blocks_B = [c[:, plain]]
        blocks_C = [np.zeros_like(m[:, plain])]
        blocks_lo = [-1.0 - band[:, plain] - d[:, plain]]
        blocks_hi = [1.0 + band[:, plain] - d[:, plain]]
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
            hi_u = 1.0 + band[:, visc] - d[:, visc] - np.where(pos, v * sq / 2, 0.0)
            # lower row: m a + c b + d + v√b ≥ −1
            #   v ≥ 0: v√b ≥ v r;   v < 0: v√b ≥ v (sq/2 + b/(2 sq))
            B_l = c[:, visc] + np.where(pos, 0.0, v / (2 * sq))
            C_l = np.where(pos, v, 0.0)
            lo_l = -1.0 - band[:, visc] - d[:, visc] - np.where(pos, 0.0, v * sq / 2)
            k = jv.size
            blocks_A += [A_u, A_u]
            blocks_B += [B_u, B_l]
            blocks_C += [C_u, C_l]
            blocks_lo += [np.full((P, k), -INACTIVE), lo_l]
            blocks_hi += [hi_u, np.full((P, k), INACTIVE)]
            joints += [jv, jv]
            has_lo += [np.zeros(k, bool), np.ones(k, bool)]
            has_hi += [np.ones(k, bool), np.zeros(k, bool)]
        return RowBlock(self.kind, np.concatenate(joints), np.hstack(blocks_A), np.hstack(blocks_B),
                        np.hstack(blocks_C), np.hstack(blocks_lo), np.hstack(blocks_hi),
                        np.concatenate(has_lo), np.concatenate(has_hi), uses_a=True, uses_r=bool(visc.any()))


def viscous_speed(data: PathData) -> np.ndarray:
    """(P,) the θ̇² at which viscous friction F_v q′ θ̇ alone takes the whole torque margin τ_max − |d̃| of some
    joint (inf where no torque-limited joint has viscous friction): a cap for the tangent point b_ref of the
    friction rows. Their tangent √b ≤ √b_ref/2 + b/(2√b_ref) holds the friction at F_v q′ √b_ref/2 even at
    rest, so a b_ref above this curve (a reachability profile that knows nothing of the friction, on a robot
    whose friction can use the whole torque at top speed) leaves no profile at all (a false "infeasible")."""
    robot = data.robot
    lim = np.flatnonzero(np.isfinite(robot.tau_max) & (robot.viscous > 0))
    if lim.size == 0:
        return np.full(data.size, np.inf)
    tau = robot.tau_max[lim]
    v = np.abs(robot.viscous[lim] * data.dq[:, lim]) / tau
    margin = np.maximum(1.0 - np.abs(data.coefficients.d[:, lim]) / tau, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(v > 0, (margin / np.where(v > 0, v, 1.0)) ** 2, np.inf).min(axis=1)


class JointVelocityLimit(Limit):
    """|q′_k θ̇| ≤ q̇_max,k for all k, i.e. one row per point: b / b_max ≤ 1 with b_max = min_k q̇_max,k²/q′_k²."""
    kind = "velocity"
    headroom_checked = True

    def b_max(self, data: PathData, scales=None) -> np.ndarray:
        """The velocity-limit curve b_max(θ) (inf where no joint moves)."""
        robot = data.robot
        vmax = robot.qd_max * limit_scale(scales, self.kind, data.size, robot.n)
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
    headroom_checked = True

    def rows(self, data: PathData, *, b_ref=None, scales=None) -> RowBlock | None:
        robot = data.robot
        lim = np.flatnonzero(np.isfinite(robot.qdd_max))
        if lim.size == 0:
            return None
        P = data.size
        amax = robot.qdd_max[lim] * limit_scale(scales, self.kind, P, robot.n)[:, lim]
        k = lim.size
        return RowBlock(self.kind, lim, data.dq[:, lim] / amax, data.ddq[:, lim] / amax, np.zeros((P, k)),
                        -np.ones((P, k)), np.ones((P, k)), np.ones(k, bool), np.ones(k, bool), uses_a=True)


class BoundaryVelocity(Limit):
    """θ̇ at the ends of the path: b_0 = θ̇_start², b_N = θ̇_end² (equality rows at the two end points).

    The values are the named parameters ``b_start`` and ``b_end`` (see `values`), so new boundary
    speeds re-solve without compiling."""
    kind = "boundary"
    headroom_checked = True
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
