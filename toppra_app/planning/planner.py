"""The time-optimal planner: a path, a robot, limits in; a `TimeOptimalPlan` out.

One plan (`TimeOptimalPlanner.plan`), all steps functions of (robot, path, options, payload, boundary
speeds) only, so the same inputs give the same plan whatever was planned before and from any thread:

1. once per planner (`prepare`): the grid (`grid`, `placement`), the scales L, B̄ of θ and θ̇², the path at
   the row stations and at the between-grid check's sub-samples;
2. the limits' rows at the stations (`limits`), payload merged into the robot, impassable points ruled out;
3. the rows that can bind, scaled, into the problem compiled once per structure (`socp.stations`, `cache`);
4. solve (`socp.solvers`) the tangent objective at the sweeps' profile (`socp.reachability`; free stations on
   where it rides a bending limit, `refine.bent`), far rows left out, again with any it breaks, weighed again
   until certified (`socp.tangent`, `TANGENT_TOL`) — the time cones where it stops on an interval, then θ̈ constant;
5. viscous friction: re-solve on the tangent at the new profile while it moves a limit by > `VISCOUS_TOL`;
6. check the exact time law between grid points (`verify`); over `tol`, move a free station onto the worst
   point or lower the limit there (`refine`, `max_rounds`); split the grid (`finer`) when that stalls, or above
   `gap_target` (at once: repairs would not lower it; a dense path at its first solution; θ̈ linear: the swing);
7. warn where the plan exceeds a limit, may be far from the optimum, or its own solve was inaccurate (`diagnose`).
The options are checked, and turned into the robot, path and limits a plan uses, by `options`.
"""

from __future__ import annotations

import threading
import time
from contextlib import suppress

import numpy as np

from ..errors import InfeasiblePathError
from ..limits.rows import tangent_point
from ..socp import stations as st
from ..socp.problem import OBJECTIVES
from ..socp.reachability import reference_profile
from ..socp.tangent import next_step, tangent_bound, time_weights
from ..socp.solvers import SolverError, solver_chain
from ..trajectory import MotionStops, TimeLaw
from ..verify import gap_estimate
from . import diagnose, refine
from .controller import controller_rows
from .controller_linear import LinearControllerRows
from .finer import (LIMIT_SPLITS, in_one, plan_constant, plan_finer, split_for_gap, split_for_limits,
                    split_when_done)
from .grid import MAX_INTERVALS, intervals_for, parse_grid, user_intervals
from .options import (DEFAULT_SUBSTEPS, DEFAULT_TOL, LINEAR_MAX_INTERVALS, REFINE_MAX_INTERVALS, choice,
                      controlled_robot, energy_terms, estimates_gap, flag, frame_option, joint_path, limit_list,
                      linear_law, number, plan_arguments, rate_limits, snapshot, whole)
from .prepare import DENSE_REFINE_MAX, at_stations, limit_blocks, reference_b, set_up, tangent_points
from .result import TimeOptimalPlan, timed
from .sequential import kept_better, plan_sequential

CHECK_SHARE = 0.9                  # of tol at the check's points and peaks (`verify`; full tol: +0.108 % on 1 ms)
REFINE_ABOVE = 0.01                # default `gap_target`: plan again on a finer default grid where
                                   # `verify.gap_estimate` exceeds it (`diagnose.WARN_ABOVE`: warn) ...
DENSE_REFINE_ABOVE = 0.002         # ... on dense waypoint paths (θ̈ constant: iiwa7/dense-0 +0.61 % from converged
EARLY_SPLIT = 3.0                  # at 0.97 %, the UR10's, UR5e's +0.11 % at 0.2–0.3 %), at once above this × it
VISCOUS_TOL = 1e-3                 # re-linearise viscous friction while its tangent is off by more
TANGENT_TOL = 1e-4                 # solve the tangent objective again, weighted at the last solution, while
MAX_TANGENT_ROUNDS = 3             # its duration may be further than this from the optimum (`tangent_bound`),
TANGENT_SHRINK = 0.1               # and while it shrinks by this factor a solve, else the time cones (1)–(2) plan
FAR_SLACK = 0.1                    # a solve (tangent objective) leaves out rows (scaled to ≤ 1 coefficients) with
FAR_SLACK_SOLVED = 0.02            # more slack at the reference, at a last solution this (2–8 % faster; controller:
SLACK_TOL = 1e-7                   # a pass's re-weighted solve only, planner.md), and solves again if one breaks


class TimeOptimalPlanner:
    """Plans on one path; `plan(payload=..., sd_start=..., sd_end=...)` may be called repeatedly and from
    several threads. Its options are listed in `planning.options` (and docs/planner.md, "Usage"); energy-weighted
    objectives (with torque-rate / jerk limits: `options.rates_as_profile`) plan through `planning.sequential`."""

    def __init__(self, robot, path, grid=None, *, scheme: str = "interpolation", substeps: int = DEFAULT_SUBSTEPS,
                 tol: float = DEFAULT_TOL, max_rounds: int = 8, solver: str = "CLARABEL",
                 check_position_limits: bool = True, limits=None, payload_frame: str | None = None,
                 allow_overload: bool = False, tool_speed_max=None, collision_energy_max=None,
                 cartesian_frame: str | None = None, contact_mass=None, max_viscous_iterations: int = 4,
                 prune: bool = True, energy_weight: float = 0.0, energy_R=None, torque_rate_max=None,
                 jerk_max=None, rate_dt: float = 1e-3, max_rate_iterations: int = 40, max_splits: int = 2,
                 gap_target: float | None = None, controller=None, relocate: bool = True,
                 time_law: str = "auto", time_objective: str = "tangent"):
        self._options = {k: snapshot(v) for k, v in locals().items() if k not in ("self", "robot", "path", "grid")}
        # checked in this order (`options`): the first bad option is the one reported
        self.drive_robot, self.grid_arg = robot, grid            # as given (`finer`, `sequential`)
        self.controller, robot, torque_rate_max, jerk_max = controlled_robot(
            robot, controller, torque_rate_max, jerk_max, rate_dt, energy_weight, max_rate_iterations)
        path = joint_path(path, robot)
        scheme = choice(scheme, "scheme", st.SCHEMES)
        self.substeps, self.max_rounds = whole(substeps, "substeps", 1, 1000), whole(max_rounds, "max_rounds", 0, 1000)
        self.max_splits = whole(max_splits, "max_splits", 0, 10)
        self.limit_splits = LIMIT_SPLITS * (self.max_splits > 0)    # (a finer planner's: `finer.plan_finer`)
        self.gap_target = None if gap_target is None else number(gap_target, "gap_target", 0, 1)
        self.max_viscous_iterations = whole(max_viscous_iterations, "max_viscous_iterations", 0, 100)
        solver_chain(solver)                                    # validates the name
        self.robot, self.path, self.scheme, self.tol, self.solver = robot, path, scheme, number(tol, "tol", 0, 1), solver
        self.prune, self.allow_overload = flag(prune, "prune"), flag(allow_overload, "allow_overload")
        self.payload_frame = frame_option(robot, payload_frame, "payload_frame")
        self.tangent = choice(time_objective, "time_objective", OBJECTIVES) == "tangent"
        self.limits = limit_list(robot, self._options)          # (`limits` as snapshot: a generator is used up there)
        # the time–energy objective and torque-rate / jerk limits (optional; `planning.sequential`)
        self.energy_weight, self.energy_R = energy_terms(robot, energy_weight, energy_R, self.controller)
        self.rates = rate_limits(robot, torque_rate_max, jerk_max, rate_dt)
        self.max_rate_iterations = whole(max_rate_iterations, "max_rate_iterations", 1, 1000)
        self.grid_mode, self.grid_spec = parse_grid(path, grid)
        self.auto_grid = (given := user_intervals(grid, self.grid_spec)) is None   # None: the default grid (refinable)
        self.linear = linear_law(time_law, self.controller, self.energy_weight, self.rates, given,
                                 flag(relocate, "relocate") and scheme == "interpolation")
        self.rated = self.controller is not None and self.controller.has_rates   # θ̈ continuous with θ̈ linear
        if self.auto_grid and self.linear and not self.rated:
            self.grid_spec = intervals_for(path, linear=True)
        self.estimates_gap = estimates_gap(self.energy_weight, self.rates, self.controller)
        self.check_position_limits, self.relocate = flag(check_position_limits, "check_position_limits"), bool(relocate)
        self._lock, self._ready, self._finer = threading.Lock(), False, {}

    def _prepare(self) -> None:
        """The grid and stations (`prepare.set_up`), once and under the lock; their fields become attributes."""
        with self._lock:
            if not self._ready:
                set_up(self, REFINE_ABOVE, DENSE_REFINE_ABOVE)
                self._ready = True

    @property
    def grid(self) -> np.ndarray:
        self._prepare()
        return self.theta

    def payload_robot(self, payload):
        """The robot with `payload` merged (`RobotModel.with_payload`)."""
        return self.robot if payload is None else self.robot.with_payload(
            payload, frame=self.payload_frame, **({"allow_overload": True} if self.allow_overload else {}))

    def plan(self, payload=None, sd_start: float = 0.0, sd_end: float = 0.0, start=None) -> TimeOptimalPlan:
        """Plan (rest-to-rest unless sd_start/sd_end, the path speeds θ̇ at the ends, are given); viscous friction
        first on its tangent at `start`, a `TimeLaw` on the path (a coarser grid's plan, `finer`), if given."""
        t_all, timings = time.perf_counter(), dict(coefficients=0.0, build=0.0, compile=0.0, solve=0.0, verify=0.0)
        payload, sd_start, sd_end, start = plan_arguments(payload, sd_start, sd_end, start, self.path)
        with timed(timings, "coefficients"):
            self._prepare()
            robot = self.payload_robot(payload)
            theta, P, ths, dsig = self.theta, self.theta.size, self.ths, np.diff(self.theta) / self.L
            data = self.data0 if robot is self.robot else self.data0.with_robot(robot)
        diagnose.check_holdable(robot, ths, data.coefficients.d, data.dq, P)
        diagnose.warn_rest_margin(robot, theta, data.coefficients.d[:P], sd_start, sd_end, self.tol)
        self.sub.prefetch(robot)                               # the check's kinematics, during the solve
        linear = self.linear and not self.dense_constant and (not self.rated or P - 1 <= LINEAR_MAX_INTERVALS)
        b_ends, scale_b = np.array([sd_start ** 2, sd_end ** 2]), self.L ** 2 * self.Bbar    # b = scale_b β
        with timed(timings, "coefficients"):
            ctrl = None if not self.rated else controller_rows(self.controller, robot, self.path, self.theta, self.L,
                self.Bbar, self.law0, sd_start, sd_end, self.tol, LinearControllerRows if linear else None)
        b_ref = tangent_point(start.b_at(ths)) if start is not None and robot.viscous.any() else \
            tangent_points(self.b_ref0, data, self.law0, sd_start, sd_end)
        force, caps = None, None if self.caps is None else tuple(x.copy() for x in self.caps)
        # the tangent objective's reference (β; θ̈ linear: β(½)), the coarse profile's until the sweeps' below
        ref = (self.b_ref0[:P] / scale_b, st.middles(self.b_ref0, P, self.scheme) / scale_b if linear else None)
        scales = refine.base_scales(self.limits, P, ths.size, robot.n, self.tol)
        lams, moved = self.lams0.copy(), self.moved0.copy()
        viscous = bool((robot.viscous[np.isfinite(robot.tau_max)] > 0).any())
        estimating = self.estimates_gap and all(lim.headroom_checked for lim in self.limits)
        gap_split = estimating and self.auto_grid and self.max_splits > 0 and (not linear or self.dense) and \
            P - 1 < (DENSE_REFINE_MAX if linear else REFINE_MAX_INTERVALS)     # over the gap target: split (step 6)
        rounds = viscous_rounds = tangent_rounds = iterations = 0
        last, cones, last_bound, found, early, pinned, inexact, noted = None, False, np.inf, None, None, None, [], []
        refinements, excess, check, reweigh, bound = [], [np.inf], None, False, {}   # last: (β, δ); `st.binding`'s

        def split(check, law, over, factor):                   # the plan on a grid split for the gap, or None
            return split_for_gap(self, check, law, over, factor, payload, sd_start, sd_end, refinements, iterations,
                                 timings, t_all)

        def law_of(beta, delta):                               # exact boundary speeds (the rows hold them: `with_ends`)
            return TimeLaw(theta, np.r_[b_ends[0], (beta * scale_b)[1:-1], b_ends[1]],
                           None if delta is None else delta * (self.L * self.Bbar))

        def split_early(beta, delta, law=None):                # a dense path's first profile (the sweeps', else the first
            nonlocal early                                     # solution), checked (reused if it stays the last one): far
            if early is None and self.dense and gap_split:     # over its gap target, split at once (`EARLY_SPLIT`)
                with suppress(MotionStops):                    # (a profile that stops: the solve's cones, θ̈ constant)
                    first = law or law_of(beta, delta)         # (the sweeps' where it splits in one, `finer.sized`)
                    early = (beta,) + refine.checked(robot, self.sub, first, self.limits, self.dense, CHECK_SHARE * self.tol)
                    early = early if law is not None or in_one(self, gap_estimate(early[1], first)) else None
                    return None if early is None else split(early[1], first, early[2], EARLY_SPLIT)
        while True:
            t0 = time.perf_counter()
            tangent = self.tangent and not self.all_stations and not cones and not (ctrl is not None and linear)
            if not (reweigh and tangent):
                blocks = [blk.at(None) for blk in limit_blocks(self.limits, data, b_ref, scales)]
                if iterations == 0 and found is None:  # the first rows
                    diagnose.check_boundaries(robot, theta, data.dq[:P], blocks, sd_start, sd_end)
                on = st.stations_on(moved | self.all_stations, self.scheme)
                rows, keep, values = st.packed(blocks, self.L, self.Bbar, theta, lams, self.scheme, on,
                                               b_ref / scale_b if self.prune else None, force, linear, caps,
                                               b_ends / scale_b, b_ref / scale_b if tangent else None, bound)
                if tangent and iterations == 0 and found is None:   # the first reference: the sweeps on these rows
                    found = reference_profile(values, P - 1, ref[0])
                    if found is not None:                  # its far rows are left out too (below)
                        ref, last = ctrl.reference(found, scale_b) if ctrl else found, (found[0], st.delta_of(*found, dsig))
                        if (finer := split_early(*last)) is not None:
                            return finer
                        if linear and refine.bent(rows, *found, theta, self.scheme, self.tol, moved, scales):
                            continue                   # the rows again, with the stations the bends ask for
            again, reweigh = reweigh, False
            # rows far from binding at the reference left out (25–35 % fewer), again with those a solve broke
            far_at = (FAR_SLACK_SOLVED if iterations and (ctrl is None or again) else FAR_SLACK) if pinned is None else far_at
            far = st.slack(values, *last) > far_at if tangent and last is not None else None
            far = far & ~pinned if far is not None and pinned is not None and pinned.size == far.size else far
            values.update(ctrl.values() if ctrl is not None else {})
            if tangent:
                values["weights"] = time_weights(*ref, dsig)
            timings["build"] += time.perf_counter() - t0
            try:
                status, beta, solver_used, wall, compile_s = diagnose.solve_station_problem(
                    P - 1, values["u"].size // (P - 1), values if far is None else st.without(values, far), self.solver,
                    sd_start, sd_end, ctrl.K if ctrl else 0, probed=ctrl.probed if ctrl is not None and ctrl.probe
                    else None, linear=linear, reduced=far is not None and far.any(), inaccurate=inexact)
            except (SolverError, InfeasiblePathError):
                if rounds == 0:
                    raise
                # limits tightened so far that the problem broke: keep the last plan (warned about below)
                refinements.append(dict(action="stopped", points=0, worst_ratio=check.worst_ratio))
                break
            iterations += 1
            timings["solve"] += wall - compile_s
            timings["compile"] += compile_s
            if status == "failed":                             # rows left out and not solved: with every row
                last = None
                continue
            beta, delta = (np.maximum(beta[:P], 0.0), beta[P:]) if linear else (np.maximum(beta, 0.0), None)
            if far is not None and far.any():                  # rows left out of this solve: all of them kept?
                broken = far & (st.slack(values, beta, delta) < -SLACK_TOL * np.maximum(1.0, np.abs(values["h"])))
                if broken.any():
                    pinned = broken if pinned is None or pinned.size != far.size else pinned | broken
                    continue
            last, pinned = (beta, delta), None
            if ctrl is not None and ctrl.add_broken(beta, delta):        # rate rows left out and broken: add them
                continue
            missing = st.violated_rows(rows, keep, beta, theta, lams, self.scheme, on=on, delta=delta)
            if missing.any() and iterations < 4 + self.max_rounds:
                force = missing if force is None else force | missing
                continue
            try:
                law = law_of(beta, delta)
                noted += [(law, inexact[-1])] if status == "optimal_inaccurate" else []   # (law, its warning)
            except MotionStops:                                # the tangent's profile stops on an interval (its
                if tangent and not cones:                      # weights do not price θ̇ → 0): the time cones;
                    cones = True                               # θ̇² of θ̈ linear still 0 between stations: θ̈
                    continue                                   # constant on this grid (`finer.plan_constant`)
                if linear:
                    return plan_constant(self, payload, sd_start, sd_end, refinements, iterations, timings, t_all)
                raise
            prev, ref = ref, (law.b / scale_b, law.b_at(0.5 * (theta[:-1] + theta[1:])) / scale_b if linear else None)
            if (finer := split_early(beta, delta, law)) is not None:
                return finer
            if "weights" in values:                            # certified, or again, or the time cones
                step, tangent_rounds, last_bound = next_step(tangent_bound(prev, ref, dsig), tangent_rounds,
                                                             last_bound, TANGENT_TOL, MAX_TANGENT_ROUNDS, TANGENT_SHRINK)
                if step != "certified" and not (step == "again" and ctrl is not None and ctrl.uncertified(law, last_bound)):
                    reweigh, cones = step == "again", step == "cones"
                    continue
                tangent_rounds, last_bound = 0, np.inf         # certified, or a controller pass not the plan
            if viscous and viscous_rounds < self.max_viscous_iterations and \
                    refine.tangent_gap(robot, data, b_ref, law, lams, self.scheme, scales, on, tangent) > VISCOUS_TOL:
                viscous_rounds, b_ref = viscous_rounds + 1, tangent_point(law.b_at(ths))
                continue
            with timed(timings, "verify"):
                check, over, n_over = early[1:] if early is not None and early[0] is beta else refine.checked(
                    robot, self.sub, law, self.limits, self.dense, CHECK_SHARE * self.tol)
                if n_over == 0 and (ctrl is None or not ctrl.after(robot, self.path, law, check)):
                    break                                      # done; else another pass of the controller's rate rows
            if n_over == 0:
                continue
            excess.append(check.worst_ratio - 1.0)
            if rounds == 0 and gap_split and (finer := split(check, law, over, 1.0)) is not None:
                return finer                                   # refined anyway: split now, not repair
            if rounds >= self.max_rounds or (rounds >= 3 and excess[-1] > 0.7 * excess[-2]):
                if P <= MAX_INTERVALS and (finer := split_for_limits(self, check, over, payload, sd_start, sd_end,
                                                                     refinements, iterations, timings, t_all, law)):
                    return finer                               # (else the last plan, warned about below)
                break
            rounds += 1
            refinements.append(refine.repaired(lams, moved, scales, caps, over, check, self.scheme, self.tol,
                                               np.abs(data.coefficients.d) / robot.tau_max, linear))
            if refinements[-1]["moved"]:                       # rows at the moved stations
                with timed(timings, "coefficients"):
                    ths, data = at_stations(robot, self.path, theta, lams, self.scheme, (ths, data))
                    b_ref = tangent_point(law.b_at(ths), law.b) if viscous \
                        else reference_b(self.law0, self.Bbar, self.L, ths)
        estimate = gap_estimate(check, law) if estimating else None
        if (finer := split_when_done(self, check, law, gap_split, estimating and linear and not self.dense, payload,
                                     sd_start, sd_end, refinements, iterations, timings, t_all)) is not None:
            return finer
        law, check, rate_check, rate_info = ctrl.finished(robot, law, check) if ctrl is not None else (law, check, None, None)
        status = diagnose.plan_status(noted, law)
        if self.energy_weight > 0 or self.rates is not None:
            law, check, status, solver_used, rate_check, rate_info, n = plan_sequential(
                self, robot, law, check, status, solver_used, sd_start, sd_end, timings, refinements)
            iterations += n
        diagnose.warn_plan(robot, check, estimate, rounds, self.tol, P - 1, self.dense and diagnose.thinnable(self.path), law)
        timings["total"] = time.perf_counter() - t_all
        plan = TimeOptimalPlan(robot=robot, path=self.path, law=law, check=check, torques=check.grid_torques,
                               status=status, solver=solver_used, timings=timings, iterations=iterations,
                               reused_problem=timings["compile"] == 0.0, planner=self, payload=payload, sd_end=sd_end,
                               sd_start=sd_start, refinements=refinements, energy_weight=self.energy_weight, tol=self.tol,
                               energy_R=self.energy_R, rate_check=rate_check, rate_info=rate_info, gap_estimate=estimate)
        return kept_better(self, plan, payload, sd_start, sd_end, start)   # with a weight: the plain one if J is less
