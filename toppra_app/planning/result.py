"""A planned motion: the speed profile on the grid, its exact time law, the check between grid points,
and the trajectory at any time (`sample`, and toppra's names `eval`, `evald`, `evaldd`)."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..checks import is_real, reals
from ..errors import InputError, short_repr
from ..path import JointPath
from ..trajectory import TimeLaw, TrajectorySample, sample_trajectory
from ..verify import LimitCheck, worst_summary

if TYPE_CHECKING:
    from .limit_report import LimitReport
    from .planner import TimeOptimalPlanner


SAME = object()                    # `replan`'s default payload: the plan's own (None plans without one)


@dataclass
class TimeOptimalPlan:
    """A planned motion: the speed profile on the grid, its exact time law and diagnostics."""
    robot: object                 # the robot the plan is for (payload merged)
    path: JointPath
    law: TimeLaw
    check: LimitCheck             # limits re-checked between grid points
    torques: np.ndarray           # (P, n) joint torques at the grid points (rigid body + friction)
    status: str
    solver: str
    timings: dict                 # seconds: coefficients, compile, solve, verify, total
    iterations: int               # number of convex solves
    reused_problem: bool          # the compiled cvxpy problem came from the cache
    planner: "TimeOptimalPlanner" = field(repr=False, default=None)
    payload: object = None
    sd_start: float = 0.0
    sd_end: float = 0.0
    refinements: list = field(default_factory=list)
    energy_weight: float = 0.0    # weight of the energy term in the objective (0: time-optimal)
    energy_R: np.ndarray = None   # (n,) diagonal of R in ∫ τᵀRτ dt
    rate_check: dict = None       # {"torque_rate"|"jerk": Worst} on the 1 ms samples (rate limits only)
    rate_info: dict = None        # rate-limit iterations, plain time-optimal duration, ...
    gap_estimate: float | None = None  # `verify.gap_estimate`: how much faster the optimum might be (a share)
    tol: float | None = None      # the planner's tolerance of the checks (None: its planner's, or DEFAULT_TOL)
    _energy: float = field(default=None, repr=False)

    @property
    def energy(self) -> float:
        """∫ τᵀRτ dt (R = diag(energy_R)) on the executed 1 ms samples, τ = RNEA + friction (`objectives`)."""
        if self._energy is None:
            from ..objectives.energy import energy_integral
            self._energy = energy_integral(self.sample(1e-3), self.energy_R)
        return self._energy

    # grid quantities ----------------------------------------------------------------
    @property
    def duration(self) -> float:
        return self.law.duration

    @property
    def s(self) -> np.ndarray:
        """Grid points θ_i."""
        return self.law.theta

    @property
    def sd(self) -> np.ndarray:
        """θ̇ at the grid points."""
        return self.law.sd_grid

    @property
    def sdd(self) -> np.ndarray:
        """θ̈ at the grid points (constant per interval: the following interval's, the last at the end)."""
        return self.law.sdd_grid

    @property
    def t(self) -> np.ndarray:
        """Time at the grid points."""
        return self.law.t

    @property
    def grid(self) -> np.ndarray:
        return self.law.theta

    @property
    def worst(self) -> dict:
        """{kind: Worst} – largest |value|/limit between grid points per kind of limit."""
        return self.check.worst

    @property
    def worst_ratio(self) -> float:
        return self.check.worst_ratio

    def limit_report(self) -> "LimitReport":
        """Whether the plan kept its limits, and its worst value/limit over every check: between grid points,
        the sampled torque rate / jerk where the plan has rate limits or a controller profile, and the solver
        status (`planning.limit_report`; the plan's warnings say the same in words)."""
        from .limit_report import limit_report
        return limit_report(self, self._tolerance)

    @property
    def within_limits(self) -> bool:
        """True when no check found a limit exceeded by more than the tolerance and the solve that gave the
        plan ended "optimal" (`limit_report` says which limit, where and by how much otherwise)."""
        return self.limit_report().within_limits

    @property
    def _tolerance(self) -> float:
        if self.tol is not None:
            return float(self.tol)
        if self.planner is not None:
            return float(self.planner.tol)
        from .options import DEFAULT_TOL
        return DEFAULT_TOL

    @property
    def solve_time(self) -> float:
        return self.timings["solve"]

    def sample(self, dt: float = 1e-3) -> TrajectorySample:
        """t, q, q̇, q̈, τ (and θ, θ̇, θ̈) at controller rate from the exact time law."""
        return sample_trajectory(self.robot, self.path, self.law, dt)

    def _law(self, t):
        """θ, θ̇, θ̈ at a time or a 1-D array of times (toppra's inputs); `InputError` naming t otherwise."""
        # real numbers only: a string ("0.1"), bytes, True and complex times were converted (with a ComplexWarning)
        t = reals(t, "t", "a time or a 1-D array of times in seconds")
        if t.ndim > 1:
            raise InputError(f"t: expected a time or a 1-D array of times, got an array of shape {t.shape}")
        if not np.isfinite(t).all():
            raise InputError("t: times must be finite numbers")
        s, sd, sdd = self.law(np.atleast_1d(t))
        return t.ndim == 0, np.asarray(s), np.asarray(sd)[:, None], np.asarray(sdd)[:, None]

    def eval(self, t) -> np.ndarray:
        """Joint positions q(t) at a scalar time ((n,)) or a 1-D array of times ((m, n)), clipped to
        [0, duration] (toppra's name)."""
        scalar, s, _, _ = self._law(t)
        q = self.path.q(s)
        return q[0] if scalar else q

    def evald(self, t) -> np.ndarray:
        """Joint velocities q̇(t) = q′ θ̇."""
        scalar, s, sd, _ = self._law(t)
        qd = self.path.dq(s) * sd
        return qd[0] if scalar else qd

    def evaldd(self, t) -> np.ndarray:
        """Joint accelerations q̈(t) = q′ θ̈ + q″ θ̇² (θ̈ of the interval t lies in)."""
        scalar, s, sd, sdd = self._law(t)
        qdd = self.path.dq(s) * sdd + self.path.ddq(s) * sd * sd
        return qdd[0] if scalar else qdd

    def __call__(self, t, order: int = 0) -> np.ndarray:
        """q (order 0), q̇ (1) or q̈ (2) at `t`, as `eval`, `evald`, `evaldd`: a toppra trajectory's call
        ``traj(ts, order)`` (it was a TypeError, "object is not callable")."""
        if not (is_real(order) and order in (0, 1, 2)):
            raise InputError(f"order: expected 0 (q), 1 (q̇) or 2 (q̈), got {short_repr(order)}")
        return (self.eval, self.evald, self.evaldd)[int(order)](t)

    def joint_trajectory(self, dt: float = 1e-3) -> dict:
        """The motion as a ROS 2 ``trajectory_msgs/msg/JointTrajectory`` (a dict: joint_names, points with
        positions, velocities, accelerations, effort, time_from_start sec/nanosec), sampled every `dt`;
        `toppra_app.export` writes it as YAML or JSON."""
        from ..export import joint_trajectory, plan_sample_in_memory
        return joint_trajectory(plan_sample_in_memory(self, dt), self.robot.joint_names)

    def __getstate__(self):
        """Pickled without the planner (its caches and locks): a plan is data; `replan` needs the planner."""
        state = dict(self.__dict__)
        state["planner"] = None
        return state

    def replan(self, payload=SAME, sd_start=None, sd_end=None) -> "TimeOptimalPlan":
        """Plan again on the same path and grid with another payload or end speeds (reuses the compiled problem);
        what is not given is this plan's (`payload=None`: without a payload)."""
        if self.planner is None:
            raise ValueError("replan: this plan has no planner (it was unpickled, or made by reversed); plan again "
                             "with plan_time_optimal(robot, path, ...)")
        return self.planner.plan(payload=self.payload if payload is SAME else payload,
                                 sd_start=self.sd_start if sd_start is None else sd_start,
                                 sd_end=self.sd_end if sd_end is None else sd_end)

    @property
    def _has_friction(self) -> bool:
        return bool(np.any(np.asarray(self.robot.coulomb) != 0) or np.any(np.asarray(self.robot.viscous) != 0))

    @property
    def reversible(self) -> bool:
        """`reversed` applies: no friction, no rate limits, equal end speeds."""
        return not self._has_friction and self.rate_check is None and self.sd_start == self.sd_end

    def reversed(self, path) -> "TimeOptimalPlan":
        """The same motion played backwards along `path`, the same curve traversed the other way
        (q_r(θ) = q(θ₀ + θ₁ − θ), e.g. a spline through the waypoints in reverse order): b_r(θ) = b(θ₀ + θ₁ − θ).

        Time reversal flips q̇ and keeps q̈, so it keeps every limit whose value is even in q̇: rigid-body
        torque (M q̈ + C(q, q̇) q̇ + g is quadratic in q̇), |q̇|, |q̈|, tool speed and collision energy. It is
        refused with friction (odd in q̇) and with rate limits (sampled from t = 0). The reversed plan is the
        time-optimal plan of the reversed path; it is checked between its grid points like any plan."""
        from ..path import as_joint_path
        from ..samples import SubSamples
        from ..verify import check_time_law
        from .options import DEFAULT_SUBSTEPS
        robot = self.robot
        if self._has_friction:
            raise ValueError("reversed: the robot has joint friction, which changes sign when the motion is "
                             "reversed; plan the reversed path instead")
        if not self.reversible:
            raise ValueError("reversed: plans with rate limits or unequal end speeds are not reversible; plan the "
                             "reversed path instead")
        path = as_joint_path(path)
        th = self.law.theta
        theta_r = (th[0] + th[-1]) - th[::-1]
        scale = max(1.0, float(np.abs(self.path.q(th)).max()))
        ends = np.abs(path.q(theta_r[[0, -1]]) - self.path.q(th[[-1, 0]])).max()
        if path.dof != self.path.dof or ends > 1e-9 * scale:
            raise ValueError("reversed: path is not this plan's path traversed backwards (its ends differ by "
                             f"{ends:.3g})")
        t0 = time.perf_counter()
        # (θ̈ linear per interval: θ̈ changes sign, so its change across an interval d keeps its sign)
        law = TimeLaw(theta_r, self.law.b[::-1].copy(), self.law.d[::-1].copy() if self.law.linear else None)
        planner = self.planner
        sub = SubSamples.build(path, theta_r, planner.substeps if planner is not None else DEFAULT_SUBSTEPS)
        # the planner's own check: a dense waypoint path's peaks between sub-samples too (`refine.checked`; without
        # them a reversed UR10 pallet move read 1.00050 of its torque limit where its forward plan and its 1 ms
        # samples read 1.00086). A plan without its planner: checked with them (never less strict)
        check = check_time_law(robot, sub, law.b, law.d, True if planner is None or planner.dense else None)
        for lim in (planner.limits if planner is not None else ()):
            lim.check_time_law(robot, sub, law.b, check, law.d)
        wall = time.perf_counter() - t0
        timings = {**{k: 0.0 for k in self.timings}, "verify": wall, "total": wall}
        return TimeOptimalPlan(robot=robot, path=path, law=law, check=check, torques=check.grid_torques,
                               status=self.status, solver=self.solver, timings=timings,
                               iterations=0, reused_problem=True, planner=None, payload=self.payload,
                               sd_start=self.sd_end, sd_end=self.sd_start, refinements=[dict(action="reversed")],
                               energy_weight=self.energy_weight, energy_R=self.energy_R, tol=self._tolerance)

    def summary(self) -> dict:
        names = list(self.robot.joint_names)
        report = self.limit_report()
        return dict(
            robot=self.robot.name, dof=self.robot.n, duration=self.duration, grid_points=int(self.s.size),
            sd_start=self.sd_start, sd_end=self.sd_end,
            payload_mass=None if self.payload is None else float(self.payload.mass),
            solver=self.solver, status=self.status, iterations=self.iterations,
            reused_compiled_problem=self.reused_problem, timings=dict(self.timings),
            worst_ratio=self.worst_ratio, **worst_summary(self.worst, names),
            refinements=list(self.refinements), gap_estimate=self.gap_estimate,
            **(dict(energy_weight=self.energy_weight, energy=self.energy) if self.energy_weight > 0 else {}),
            **(dict(rate_check={k: w.as_dict(names) for k, w in self.rate_check.items()}) if self.rate_check else {}),
            within_limits=report.within_limits, limit_check=report.as_dict(),
        )


@contextmanager
def timed(timings: dict, key: str):
    """Add the wall time of the `with` block to `timings[key]` (a plan's `timings`)."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[key] += time.perf_counter() - t0


def with_earlier_work(plan: TimeOptimalPlan, refinements: list, iterations: int, timings: dict,
                      t_all: float) -> TimeOptimalPlan:
    """`plan`, made on a refined grid, with the work before it counted in: the earlier `refinements` first,
    their solver `iterations` and `timings` added, and the total wall time since `t_all` (`time.perf_counter`)."""
    plan.refinements[:0] = refinements
    plan.iterations += iterations
    for k, v in timings.items():
        plan.timings[k] = plan.timings.get(k, 0.0) + v
    plan.timings["total"] = time.perf_counter() - t_all
    return plan
