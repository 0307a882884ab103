"""Plans whose problem changes form between solves: the time–energy objective (`objectives`, Verscheure
et al. 2009) and torque-rate / jerk limits (`rate_limits`). They run on the time-optimal plan's grid with
every number baked in (`socp.general.GeneralProblem`, compiled per solve):

* energy: one solve of the energy-weighted problem, then the between-grid check and tightening as for
  the time-optimal plan (viscous friction: tangent at the time-optimal profile, conservative);
* rates with an energy term (rates alone plan as a controller profile, `options.rates_as_profile`): starting
  from the time-optimal profile, re-solve with the rate rows linearised around the last solution, check the
  controller-rate samples and the usual limits, and tighten where exceeded, until nothing exceeds `tol` and
  the duration stops moving (`max_rate_iterations` solves at most).
"""

from __future__ import annotations

import time
import warnings
import weakref

import numpy as np
import scipy.sparse as sp

from ..limits.joint import BoundaryVelocity
from ..limits.rows import PathData, tangent_point
from ..errors import InfeasiblePathError
from ..socp.general import GeneralProblem, bindable_rows
from ..socp.scaling import path_scale, scaled_blocks, scaled_columns, scaled_energy
from ..socp.solvers import SolverError, solve_with_chain
from ..trajectory import MotionStops, TimeLaw, sample_trajectory
from .refine import checked, tightening


def _setup(planner, robot, plan):
    """Rows at the grid points (viscous tangent at the time-optimal profile) and the energy term."""
    theta = planner.theta
    S = planner.path.evaluate(planner.grid)               # the path at the grid points
    data = PathData(robot, theta, S.q, S.dq, S.ddq)
    b_ref = None
    if (robot.viscous[np.isfinite(robot.tau_max)] > 0).any():
        b_ref = tangent_point(plan.law.b_at(theta))
    energy = None
    if planner.energy_weight > 0:
        co, w = data.coefficients, np.sqrt(planner.energy_R)
        energy = dict(weight=planner.energy_weight, m=co.m * w, c=co.c * w, d=co.d * w, v=robot.viscous * S.dq * w)
    return data, b_ref, energy


def grid_blocks(planner, data, b_ref, scales):
    """Every limit's rows at the grid points, with the boundary speeds."""
    limits = planner.limits + [BoundaryVelocity()]
    return [blk for blk in (lim.rows(data, b_ref=b_ref, scales=scales) for lim in limits) if blk is not None]


def _solve_and_check(planner, robot, problem, values, timings, b_unit: float = 1.0, size: int | None = None,
                     notes: list | None = None, clarabel: dict | None = None):
    """Solve `problem`, build the exact time law and check it between grid points; updates `timings`.
    `b_unit`: θ̇² per unit of the problem's b (L² B̄ for a problem in normalised variables, `socp.scaling`);
    `size`, `notes`, `clarabel`: `solve_with_chain`'s time-limit size, list for the inaccurate-solution warning
    and Clarabel options.
    Returns (status, solver name, law, check, {kind: exceeded (N, n)}, number of exceeded entries)."""
    status, b, solver, wall, compile_s = _solve(problem, values, planner.solver, size, notes, clarabel)
    b = b if b is None else b * b_unit
    timings["solve"] += wall - compile_s
    timings["compile"] += compile_s
    law = _law(planner.theta, b, values)
    t0 = time.perf_counter()
    check, over, n_over = checked(robot, planner.sub, law, planner.limits, False, planner.tol)
    timings["verify"] += time.perf_counter() - t0
    return status, solver, law, check, over, n_over


def _solve(problem, values, solver, size=None, notes=None, clarabel=None):
    status, b, name, wall, compile_s = solve_with_chain(
        lambda n, opts: problem.solve(values, solver=n, **opts), solver, normalised=False, size=size, inaccurate=notes,
        clarabel=clarabel, what="the speed profile with the energy objective / rate limits")
    if status == "infeasible":
        raise InfeasiblePathError("no speed profile satisfies the limits together with the rate limits / energy "
                                  "objective on this grid (solver status: infeasible)")
    return status, b, name, wall, compile_s


def _law(theta, b, values):
    b = np.maximum(b, 0.0)
    b[0], b[-1] = values["b_start"], values["b_end"]
    return TimeLaw(theta, b)


def plan_sequential(planner, robot, law, check, status, solver_used, sd_start, sd_end, timings, refinements):
    """Energy objective and/or rate limits, from the time-optimal law on its grid (their records added to
    `refinements`)."""
    from .result import TimeOptimalPlan
    base = TimeOptimalPlan(robot=robot, path=planner.path, law=law, check=check, torques=check.grid_torques,
                           status=status, solver=solver_used, timings=timings, iterations=0,
                           reused_problem=False, sd_start=sd_start, sd_end=sd_end)
    rate_check = rate_info = None
    n = 0
    if planner.energy_weight > 0:
        law, check, status, solver_used, n, records = plan_energy(planner, robot, base, timings)
        base.law, base.check = law, check
        refinements += records
        if planner.rates is not None:                    # (alone: warned if it is the plan, `kept_better`)
            inaccurate_warning(records)
    if planner.rates is not None:
        law, check, status, solver_used, rate_check, rate_info = plan_rates(planner, robot, base, timings)
        n += rate_info["solves"]
    return law, check, status, solver_used, rate_check, rate_info, n


def kept_better(planner, plan, payload, sd_start: float, sd_end: float, start=None):
    """`plan` (energy-weighted; else `plan` itself) or the time-optimal plan `planner` without the weight makes
    (`time_optimal_planner`: its grid, time law and refinements; with rate limits the controller profile's plan of
    the same rates, `options.rates_as_profile`), whichever has the smaller J (`better_of`); the energy plan only
    where it kept its limits or that plan did not (an "optimal_inaccurate" energy plan of a 1 mrad ur5e motion
    with `collision_energy_max` was kept, not within its limits, where the plain plan was).
    The energy plan starts from a time-optimal plan θ̈ constant on the energy grid without the gap's
    refinements, 0.1–0.25 % slower than that one on Kinova paths: at small weights (J ≈ T) its J came out so
    much above the time-optimal plan's, a feasible point of the same objective. With rate limits the sequential
    scheme wandered: an iiwa 7 path at 500 N·m/s and w = 1e-4 came out 7.9 % slower than without the weight (J too),
    at w = 1 "solved only inaccurately" (not within its limits), where the profile's plan was within them."""
    if not planner.energy_weight > 0:
        return plan
    t0 = time.perf_counter()
    plain = time_optimal_planner(planner).plan(payload=payload, sd_start=sd_start, sd_end=sd_end, start=start)
    if better_of(planner, plan.robot, plain.law, plan.law) is plan.law and (plan.within_limits or not plain.within_limits):
        plan.timings["total"] += time.perf_counter() - t0
        inaccurate_warning(plan.refinements)
        return plan
    plain.planner, plain.energy_weight, plain.energy_R = planner, planner.energy_weight, planner.energy_R
    plain.refinements.append(dict(action="time-optimal kept", points=0, worst_ratio=plain.check.worst_ratio))
    plain.iterations += plan.iterations
    for k, v in plan.timings.items():
        plain.timings[k] = plain.timings.get(k, 0.0) + v
    return plain


def time_optimal_planner(planner):
    """`planner` without its energy weight (kept on it: one per planner, `finer._kept`)."""
    from .finer import _kept
    return _kept(planner, b"time-optimal", lambda: type(planner)(planner.drive_robot, planner.path, planner.grid_arg, **{
        **planner._options, "energy_weight": 0.0, "energy_R": None}), planner.auto_grid)


def plan_energy(planner, robot, plan, timings):
    """The energy-weighted plan on the grid of the time-optimal `plan` (same robot and boundary speeds),
    solved in normalised variables (`socp.scaling`, scale: the time-optimal plan's largest θ̇²), with
    θ̇² ≤ the time-optimal plan's at the grid points (`below_rows`). Of it and the time-optimal plan the one
    with the smaller J = T + w ∫ τᵀRτ dt (1 ms samples, as `plan.energy`) is returned (`better_of`)."""
    theta = planner.theta
    data, b_ref, energy = _setup(planner, robot, plan)
    b_top = plan.law.b_at(theta)                          # (the time-optimal plan may be on another grid)
    L, Bbar = path_scale(theta, b_top)
    sigma, energy = (theta - theta[0]) / L, scaled_energy(energy, L, Bbar)
    values = BoundaryVelocity(plan.sd_start, plan.sd_end).values()
    below = below_rows(b_top / (L * L * Bbar))
    scales, refinements, solves, notes = None, [], 0, []
    for _ in range(planner.max_rounds + 1):
        t0 = time.perf_counter()
        problem = GeneralProblem(sigma, scaled_blocks(grid_blocks(planner, data, b_ref, scales), L, Bbar),
                                 "interpolation", energy=energy, extra_rows=below)
        timings["build"] += time.perf_counter() - t0
        try:
            status, solver, law, check, over, n_over = _solve_and_check(planner, robot, problem, values, timings,
                                                                        b_unit=L * L * Bbar, size=problem.n_rows,
                                                                        notes=notes, clarabel=ENERGY_CLARABEL)
        except (SolverError, MotionStops) as exc:       # the time-optimal plan (checked) instead of no plan (an
            warnings.warn(f"the energy-weighted problem could not be solved ({exc}); the plan is the time-optimal "
                          f"one", RuntimeWarning, stacklevel=4)      # UR10 path, w = 0.1: b ≈ 0 next to the start)
            refinements.append(dict(action="energy solve failed", points=0, worst_ratio=plan.check.worst_ratio))
            return plan.law, plan.check, plan.status, plan.solver, solves, refinements
        solves += 1
        if n_over == 0:
            break
        scales = tighten_grid(scales, over, check, theta.size, robot.n, planner.tol)
        refinements.append(dict(action="tighten", points=n_over, worst_ratio=check.worst_ratio))
    t0 = time.perf_counter()
    # the time-optimal plan where it has the smaller J, or the energy plan is still over a limit by more
    if (better_of(planner, robot, plan.law, law) is plan.law) if n_over == 0 else \
            plan.check.worst_ratio < check.worst_ratio:
        law, check, status, solver = plan.law, plan.check, plan.status, plan.solver
        refinements.append(dict(action="time-optimal kept", points=0, worst_ratio=check.worst_ratio))
    elif status == "optimal_inaccurate" and notes:
        refinements.append(dict(action="inaccurate", points=0, worst_ratio=check.worst_ratio, message=notes[-1]))
    timings["verify"] += time.perf_counter() - t0
    return law, check, status, solver, solves, refinements


def inaccurate_warning(refinements) -> None:
    """The solver chain's warning about an inaccurate energy solve (`plan_energy`'s "inaccurate" record), given
    only where that solution is the plan's."""
    for rec in refinements:
        if rec.get("action") == "inaccurate":
            warnings.warn(rec["message"], RuntimeWarning, stacklevel=5)


# Clarabel's duality-gap tolerances for the energy problem (J ~ 1–100 in its normalised variables): at 1e-7 a
# Kinova path (w = 10, 100) reached a primal residual of 7e-8 with the relative gap at 1.2e-7, then the residual
# grew to 4e-4 and Clarabel stopped ("insufficient progress", an exception in cvxpy), the energy plan lost.
# 1e-6 on J is far below the plans' other errors (the grid's: 0.03–0.3 %, docs/planner_limits.md)
ENERGY_CLARABEL = dict(tol_gap_abs=1e-6, tol_gap_rel=1e-6)

# `below_rows` bound θ̇² by the time-optimal profile × (1 + this): where that profile rides a speed row the two
# rows coincide, and Clarabel ended "almost solved" (a Kinova path, w = 10: its primal residual stuck at 1e-5)
BELOW_SLACK = 1e-6


def below_rows(beta_top):
    """Extra rows β_i ≤ β_top,i at the inner grid points (`GeneralProblem`'s (G, lo, hi) over (β, ρ, α, t̂)):
    no faster than the time-optimal profile anywhere. That profile is the largest on the grid points' rows
    (what the energy objective gives up is speed), and it passed the check between grid points, so where
    only θ̇ matters (joint speed: θ̇² linear in θ inside an interval stays below it there too) the energy plan
    needs no repair; without these rows a Kinova path's first energy solve went 7 % over a speed limit
    between grid points, and the tightening that repaired it left the plan 0.4 % slower than the
    time-optimal one, its J up to 0.6 % above the time-optimal plan's."""
    beta_top = np.asarray(beta_top, dtype=float)
    P, inner = beta_top.size, np.arange(1, beta_top.size - 1)
    G = sp.csr_matrix((np.ones(inner.size), (np.arange(inner.size), inner)), shape=(inner.size, 4 * P - 2))
    return G, np.full(inner.size, -np.inf), beta_top[inner] * (1.0 + BELOW_SLACK)


def better_of(planner, robot, time_optimal, law):
    """`time_optimal` or `law`, whichever has the smaller J = T + w ∫ τᵀRτ dt on 1 ms samples (ties: `law`).
    The time-optimal law is a feasible point of the energy problem, so the energy plan should never be worse;
    it can be where w is small and the energy plan's repairs (coarser than the time-optimal plan's moved
    stations) cost it more time than the energy saves. J is computed once per law, robot, path and weights
    (`plan_energy` and `kept_better` both compare the energy plan's law)."""
    return time_optimal if _J(planner, robot, time_optimal) < _J(planner, robot, law) else law


_J_MEMO: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()     # law -> [(robot, path, w, R, J)]


def _J(planner, robot, law) -> float:
    """J of `law` on `planner`'s path for `robot` (memoised per law: the same law is compared twice)."""
    from ..objectives.energy import energy_integral
    w, R, path = planner.energy_weight, planner.energy_R, planner.path
    R_key = None if R is None else (np.shape(R), np.asarray(R, dtype=float).tobytes())
    memo = _J_MEMO.setdefault(law, [])
    for r, p, w_, R_, J in memo:
        if r is robot and p is path and w_ == w and R_ == R_key:
            return J
    J = law.duration + w * energy_integral(sample_trajectory(robot, path, law, 1e-3), R)
    memo.append((robot, path, w, R_key, J))
    return J


def plan_rates(planner, robot, plan, timings):
    """Torque-rate / jerk limits (`rate_limits`) by the sequential convex scheme from the time-optimal plan."""
    from ..limits.rates import RateLimits
    rates, theta = planner.rates, planner.theta
    rates.check_path(robot, planner.path, theta)
    data, b_ref_visc, energy = _setup(planner, robot, plan)
    L, Bbar = path_scale(theta, plan.law.b)                     # normalised variables (`socp.scaling`)
    sigma, energy, unit = (theta - theta[0]) / L, scaled_energy(energy, L, Bbar), L * L * Bbar
    t0 = time.perf_counter()
    coeffs = rates.coefficients(robot, planner.path, theta)
    timings["coefficients"] += time.perf_counter() - t0
    values = BoundaryVelocity(plan.sd_start, plan.sd_end).values()
    rest_start, rest_end = plan.sd_start == 0, plan.sd_end == 0
    P, n = theta.size, robot.n
    rscales = {kind: np.ones((P, n)) for kind in rates.limits}
    law, scales = plan.law, None
    prev, solves, tightened, history = None, 0, 0, []
    status = solver = checked = check = None
    for _ in range(planner.max_rate_iterations):
        t0 = time.perf_counter()
        b_ref = np.maximum(law.b, 0.0)
        visc = None if b_ref_visc is None else tangent_point(b_ref)
        G, lo, hi = rates.rows(coeffs, theta, b_ref, rscales, 2 * P + 2 * (P - 1), rest_start, rest_end)
        G, lo, hi = bindable_rows(scaled_columns(G, P, L, Bbar), lo, hi,
                                  10.0 * max(b_ref.max() / unit, np.abs(law.sdd_grid).max() / (L * Bbar), 1.0))
        problem = GeneralProblem(sigma, scaled_blocks(grid_blocks(planner, data, visc, scales), L, Bbar),
                                 "interpolation", energy=energy, extra_rows=(G, lo, hi))
        timings["build"] += time.perf_counter() - t0
        status, solver, law, check, over, n_over = _solve_and_check(planner, robot, problem, values, timings,
                                                                    b_unit=unit)
        solves += 1
        t0 = time.perf_counter()
        sample = sample_trajectory(robot, planner.path, law, rates.dt_c)
        checked = rates.check_samples(robot, sample, rest_start, rest_end)
        timings["verify"] += time.perf_counter() - t0
        worst_rate = max(c[3].ratio for c in checked.values())
        history.append(dict(duration=law.duration, worst_rate_ratio=worst_rate, worst_ratio=check.worst_ratio))
        moving = prev is None or abs(prev - law.duration) > 1e-4 * law.duration
        prev = law.duration
        n_rate = RateLimits.tighten(rscales, checked, theta, planner.tol)
        if n_over:
            scales = tighten_grid(scales, over, check, P, n, planner.tol)
        tightened += bool(n_rate or n_over)
        if not n_rate and not n_over and not moving:
            break
    rate_check = {kind: c[3] for kind, c in checked.items()}
    worst = max(rate_check.values(), key=lambda w: w.ratio)
    if worst.ratio > 1.0 + planner.tol:
        warnings.warn(f"the plan still exceeds the {worst.kind} limit of joint {robot.joint_names[worst.joint]} "
                      f"by {100 * (worst.ratio - 1):.3f} % at t = {worst.theta:.6g} s on the {1e3 * rates.dt_c:g} ms "
                      f"samples after {solves} rate-limit solves (tol {100 * planner.tol:g} %); raise "
                      f"max_rate_iterations or use a finer grid", RuntimeWarning, stacklevel=3)
    info = dict(solves=solves, tightened=tightened, plain_duration=plan.duration, history=history)
    return law, check, status, solver, rate_check, info


def tighten_grid(scales, over, check, P, n, tol):
    """Lower each exceeded limit at the ends of the offending intervals by its excess."""
    scales = {} if scales is None else {k: v.copy() for k, v in scales.items()}
    for kind, mask in over.items():
        js, ks = np.nonzero(mask)
        if js.size == 0:
            continue
        sc = scales.setdefault(kind, np.ones((P, n)))
        f = tightening(check.ratios[kind][js, ks], tol)
        for end in (js, js + 1):
            np.minimum.at(sc, (end, ks), sc[end, ks] * f)
    return scales
