"""Thermal (RMS torque) limit over a cycle of several moves (issue "Limits and objectives …", item 4).

A cycle is M rest-to-rest moves along fixed paths, executed one after the other, then an idle time
T_idle = T − D (D = Σ move durations, T the cycle time) during which the robot **holds the end posture of
the last move against gravity** (torque g(q_end) with the last move's payload; Coulomb friction is zero at
rest). The cycle repeats, so the motor's thermal load is the cycle RMS

    τ_rms,k(cycle)² = ( Σ_m ∫ τ_k² dt + T_idle g_k(q_end)² ) / T   ≤   τ_rms,k²      for every joint k.

The right-hand side is linear in T, and ∫ τ_k² dt = ∫ τ_k²/√b dθ is convex in the speed profile b
(discretised per interval j and joint k as in `GeneralProblem._energy_term`, both ends with the interval's
a_j, quad-over-lin: ‖(τ̂_{j,k}, τ̂_{j+1,k})‖² ≤ s_{j,k}(r_j + r_{j+1}), τ̂ = τ/τ_rms). The one non-convex
term is −g_k² D (D a convex function of b); with D replaced by its tangent (a lower bound: conservative)
the least T is ONE convex problem (`thermal_problem.CycleProblem`), re-solved with the tangent at each
solution until T stops decreasing. If the time-optimal moves already meet the rating the answer is their
total duration T₀; if |g_k(q_end)| ≥ τ_rms,k no cycle time meets the rating (`InfeasiblePathError`).
A joint rated inf is not rated: it has no row (and no cones) in the problem and takes no part in the
rounds, and its cycle RMS is still measured and reported; at least one joint must be rated (`ratings`).

Each move uses the final grid of its time-optimal plan (adapted, split where the between-grid check
needed it), every interval halved (cut finer up to `MIN_CYCLE_INTERVALS`). The per-move plans are then
verified: the cycle RMS recomputed with `dynamics.inverse_dynamics` + `friction_torques` per interval of the
time law (`cycle_rms`) plus the idle hold; where it exceeds the rating by more than `rms_tol`
(discretisation), that joint's rating is tightened by the measured ratio and the problem solved again (at
most `max_retighten` times). Per-move limits are checked between grid points (`verify.check_time_law` and
each limit's own check); where a move is over one by more than the planner's `tol`, that limit is lowered
at the interval's ends and the problem solved again (`MAX_REPAIRS`; the default cell's cycle was 0.16 % over
a velocity limit without). `CyclePlan.within_limits` is the verdict on both.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

import dynamics

from ..checks import is_real, real, whole
from ..limits.rows import PathData
from ..errors import InfeasiblePathError, InputError, short_repr
from ..path import as_joint_path
from ..planner import TimeOptimalPlan, TimeOptimalPlanner
from ..planning.refine import checked
from ..planning.sequential import grid_blocks, tighten_grid
from ..trajectory import MotionStops, TimeLaw, joint_motion
from ..samples import SubSamples
from .thermal_problem import CycleProblem
from .thermal_result import CyclePlan

MAX_LINEARISATIONS = 40          # rounds re-linearising the motion time (plus one per tightening)
MAX_REDUCTION = 1e6              # a rating this many times below the joint's RMS over the time-optimal cycle is
                                 # refused at once (1e-300 N·m reached SCS as a raw allocation error)
MAX_REPAIRS = 4                  # rounds lowering a move's rows where it is over a limit between grid points
MIN_CYCLE_INTERVALS = 200        # intervals per move of the cycle problem at least (`_cycle_grid`)


# ---------------------------------------------------------------------------------------------- inputs
def ratings(tau_rms, joint_names) -> np.ndarray:
    """(n,) RMS torque ratings (N·m) from one number for every joint or one per joint. inf: the joint is not
    rated (no rating is known, or its motor does not overheat): it is left out of the limit, its RMS still
    reported. Bools, text, NaN, values ≤ 0, a wrong count and inf for every joint are refused with a one-line
    `InputError` naming tau_rms and the joint. (inf for every joint is no limit at all: almost surely a
    mistake, and the time-optimal moves are `TimeOptimalPlanner`'s plans, so it is refused rather than
    planned with a warning.)"""
    n = len(joint_names)
    what = "a rating > 0 N·m (inf: not rated)"
    if is_real(tau_rms):                                   # one for every joint
        out = np.full(n, _rating(tau_rms))
        if not out[0] > 0:
            raise InputError(f"tau_rms: expected {what} for every joint or one per joint, got {short_repr(tau_rms)}")
    elif isinstance(tau_rms, (list, tuple)) or (isinstance(tau_rms, np.ndarray) and tau_rms.ndim == 1):
        if len(tau_rms) != n:
            raise InputError(f"tau_rms: expected one rating per joint ({n}), got {len(tau_rms)}")
        out = np.array([_rating(v) for v in tau_rms])
        bad = np.flatnonzero(~(out > 0))                   # NaN (not a number), ≤ 0
        if bad.size:
            k = int(bad[0])
            raise InputError(f"tau_rms: joint {joint_names[k]} (#{k}): expected {what}, got {short_repr(tau_rms[k])}")
    else:
        raise InputError(f"tau_rms: expected {what} for every joint or one per joint ({n}), got {short_repr(tau_rms)}")
    if np.isinf(out).all():
        raise InputError(f"tau_rms: no joint is rated (inf for all {n}), so nothing limits the cycle; rate at "
                         f"least one joint, or plan without the thermal limit")
    return out


def _rating(value) -> float:
    """`value` as a float, NaN for anything but a real scalar (`checks.is_real`) or an int past 1.8e308."""
    try:
        return float(value) if is_real(value) else math.nan
    except OverflowError:
        return math.nan


def _inputs(robot, paths, payloads):
    if isinstance(paths, (str, bytes)) or not hasattr(paths, "__len__") or len(paths) == 0:
        raise InputError("paths: expected a non-empty list of paths (one per move of the cycle)")
    paths = [as_joint_path(p) for p in paths]
    for i, p in enumerate(paths):
        if p.dof != robot.n:
            raise InputError(f"paths: path {i} has {p.dof} joints, robot '{robot.name}' has {robot.n}")
    if payloads is None:
        payloads = [None] * len(paths)
    elif isinstance(payloads, (str, bytes, dict)) or not hasattr(payloads, "__len__"):
        raise InputError(f"payloads: expected a list of {len(paths)} payloads (one per path, None for none), "
                         f"got {short_repr(payloads)}")
    else:
        payloads = list(payloads)
        if len(payloads) != len(paths):
            raise InputError(f"payloads: expected {len(paths)} entries (one per path, None for none), "
                             f"got {len(payloads)}")
    return paths, payloads


MAX_QUADRATURE_STEPS = 10_000_000      # sub-steps of all moves together (3 torque evaluations each)


def _squared_torque_integral(plan, dt: float) -> np.ndarray:
    """(n,) ∫ τ_k² dt over one move, τ = RNEA + friction. Per interval j of the time law (where θ̈ jumps, so
    τ does too) m_j = ⌈Δt_j / dt⌉ equal sub-steps, each with 3-point Gauss–Legendre (exact for τ² of degree
    5 in t; the nodes are inside the interval, so no sample sits on a jump). A trapezoid over 1 ms samples
    straddles the jumps and was off by up to 2e-3 of the RMS (iiwa 7 "pick-place" cycle, joint 1)."""
    law = plan.law
    h = np.diff(law.t)
    m = np.maximum(np.ceil(h / dt), 1.0).astype(np.int64)
    j = np.repeat(np.arange(h.size), m)
    k = np.arange(j.size) - np.repeat(np.cumsum(m) - m, m)
    step = (h / m)[j]
    x, w = np.polynomial.legendre.leggauss(3)
    t = (law.t[j] + k * step)[:, None] + 0.5 * step[:, None] * (x + 1.0)           # (S, 3)
    s, sd, sdd = law(t.reshape(-1))
    tau = joint_motion(plan.robot, plan.path, s, sd, sdd).tau.reshape(t.shape + (-1,))
    return np.einsum("g,sgk,s->k", 0.5 * w, tau * tau, step)


def cycle_rms(plans, idle_time: float = 0.0, dt: float = 1e-3) -> tuple[np.ndarray, float]:
    """(RMS torque per joint, cycle time) of `plans` executed back to back, plus `idle_time` holding the
    last plan's end posture (gravity torque). τ = RNEA + friction, integrated per interval of each time law
    on sub-steps of at most `dt` (3-point Gauss–Legendre each: `_squared_torque_integral`)."""
    dt = real(dt, "dt", 0.0, None, bounds="(]", unit=" of seconds")
    steps = sum(int(np.sum(np.maximum(np.ceil(np.diff(p.law.t) / dt), 1.0))) for p in plans)
    if steps > MAX_QUADRATURE_STEPS:
        raise InputError(f"dt: {dt:g} s gives {steps:.3g} integration sub-steps over the moves, more than "
                         f"{MAX_QUADRATURE_STEPS:.0e}; use a larger dt")
    total = sum(_squared_torque_integral(p, dt) for p in plans)
    T = float(sum(p.duration for p in plans))
    last = plans[-1]
    g = dynamics.gravity_torques(last.robot, last.path.q(np.array([last.path.s_end]))[0])
    total = total + max(idle_time, 0.0) * g * g
    T += max(idle_time, 0.0)
    return np.sqrt(total / T), T


# ---------------------------------------------------------------------------------------------- API
def plan_cycle_with_rms_limit(robot, paths, tau_rms, payloads=None, *, grid=None, round_tol: float = 1e-5,
                              rms_tol: float = 1e-3, max_retighten: int = 3, dt: float = 1e-3,
                              bisect_tol=None, **options) -> CyclePlan:
    """Minimum cycle time of the moves along `paths` (executed in order, each rest to rest, `payloads[m]`
    merged for move m) such that the RMS torque of every rated joint over the cycle is ≤ `tau_rms` (N·m, one
    per joint or one for all; inf: the joint is not rated, `ratings`). Idle time (cycle time − motion time) is
    spent holding the last move's end posture (gravity torque). One convex problem per round, the idle time's
    motion time linearised at the last round's solution (module docstring); the rounds stop when the cycle
    time decreased by less than `round_tol` (relative). `rms_tol`: allowed relative excess of the cycle RMS
    (integrated per grid interval on sub-steps ≤ `dt`) before the rating is tightened and the problem solved
    again; `grid` and other `options` as for `TimeOptimalPlanner` (`bisect_tol`: the old name of `round_tol`,
    deprecated). Raises `InputError` (a `ValueError`) naming the field for bad inputs, `InfeasiblePathError`
    when no cycle time meets the rating."""
    t_start = time.perf_counter()
    tau_rms = ratings(tau_rms, list(robot.joint_names))
    paths, payloads = _inputs(robot, paths, payloads)
    if bisect_tol is not None:
        warnings.warn("plan_cycle_with_rms_limit: bisect_tol is now round_tol (there is no bisection)",
                      DeprecationWarning, stacklevel=2)
        round_tol = bisect_tol
    refuse_rate_limits(options)
    round_tol = real(round_tol, "round_tol", 0.0, 1.0, bounds="()")
    rms_tol = real(rms_tol, "rms_tol", 0.0, 1.0, bounds="()")
    max_retighten = whole(max_retighten, "max_retighten", 0, None)
    dt = real(dt, "dt", 0.0, None, bounds="(]", unit=" of seconds")
    solver = options.get("solver", "CLARABEL")
    names = list(robot.joint_names)

    # 1. time-optimal plan of every move (its final grid is reused below)
    # grids placed by time only (relocate=False): on grids with points moved to the switches of the
    # time-optimal profile the cycle problem below took ~10× longer per solve and went 0.1 % over a limit
    planners = [TimeOptimalPlanner(robot, p, grid, **{"relocate": False, **options}) for p in paths]
    opt_plans = [pl.plan(payload=pay) for pl, pay in zip(planners, payloads)]
    T0 = float(sum(p.duration for p in opt_plans))
    rms0, _ = cycle_rms(opt_plans, 0.0, dt)
    last = opt_plans[-1]
    g_end = dynamics.gravity_torques(last.robot, last.path.q(np.array([last.path.s_end]))[0])
    bad = np.flatnonzero(np.abs(g_end) >= tau_rms)
    if bad.size:
        k = int(bad[0])
        raise InfeasiblePathError(
            f"tau_rms: joint {names[k]} (#{k}) needs |g| = {abs(g_end[k]):.6g} N·m to hold the cycle's end "
            f"posture, not below its RMS rating {tau_rms[k]:.6g} N·m: no cycle time meets the rating",
            argument="tau_rms")
    worst0 = max(p.worst_ratio for p in opt_plans)
    reduction = rms0 / tau_rms                                # 0 for an unrated joint
    if reduction.max() > MAX_REDUCTION:
        raise _too_slow(names, rms0, tau_rms, upfront=True)

    def result(plans, T, rms, rating, log, retightened, worst):
        motion = float(sum(p.duration for p in plans))
        return CyclePlan(plans, opt_plans, float(max(T, motion)), motion, float(max(T - motion, 0.0)), rms, tau_rms,
                         rating, names, T0, rms0, float(worst), log, retightened, time.perf_counter() - t_start,
                         rms_tol)

    if (rms0 <= tau_rms).all():                                # the time-optimal cycle is cool enough
        return result(opt_plans, T0, rms0, tau_rms.copy(), [], 0, worst0)

    # 2. the convex feasibility problem on the moves' final grids (payload and boundary speeds baked in), with
    # the rated joints' torques only (an unrated joint has no rating row, so no cones either)
    rated = np.isfinite(tau_rms)
    moves = []
    for pl, plan in zip(planners, opt_plans):
        rp = plan.robot
        theta = _cycle_grid(plan.law.theta)
        S = pl.path.evaluate(theta)
        data = PathData(rp, theta, S.q, S.dq, S.ddq, None)
        has_visc = bool((rp.viscous[np.isfinite(rp.tau_max)] > 0).any())
        b_ref = None
        if has_visc:              # tangent rows √b ≤ (β + b/β)/2 are conservative for any b
            b_ref = np.maximum(np.interp(theta, plan.law.theta, plan.law.b), 1e-6 * max(plan.law.b.max(), 1e-12))
        co = data.coefficients
        moves.append(dict(theta=theta, data=data, b_ref=b_ref, scales=None, m=co.m[:, rated], c=co.c[:, rated],
                          d=co.d[:, rated], v=(rp.viscous * S.dq)[:, rated], robot=rp, planner=pl, plan=plan,
                          sub=SubSamples.build(pl.path, theta, pl.substeps)))
        _rows(moves[-1])
    scheme = getattr(planners[0], "scheme", "interpolation")
    cyc = CycleProblem(moves, tau_rms[rated], g_end[rated], T0, scheme)
    # the idle hold is charged with the tangent of the motion time (a lower bound: conservative), first at
    # the time-optimal profiles, then at each round's solution (T can only decrease: `thermal_problem`)
    cyc.linearise([np.interp(mv["theta"], mv["plan"].law.theta, mv["plan"].law.b) for mv in moves])

    log = []
    rating = tau_rms.copy()
    accepted = None
    tightened = repairs = 0
    prev, same_rating = None, False
    for rnd in range(max_retighten + MAX_LINEARISATIONS + MAX_REPAIRS):
        out = cyc.solve((rating[rated] / tau_rms[rated]) ** 2, solver, first_only=accepted is not None)
        if out is None:                 # the solver could not finish a later round: keep the accepted cycle
            break
        Tn, best = out
        T = Tn * T0
        log.append((T, True))
        try:
            plans = [_plan_from_b(mv, np.concatenate(([0.0], b[1:-1], [0.0]))) for mv, b in zip(moves, best)]
        except MotionStops:             # θ̇ → 0 on an interval: the rating asks for a motion too slow to plan
            if accepted is not None:
                break
            raise _too_slow(names, rms0, tau_rms, upfront=False) from None
        motion = float(sum(p.duration for p in plans))
        T = max(T, motion)
        rms, _ = cycle_rms(plans, T - motion, dt)
        worst = max(p.worst_ratio for p in plans)
        over = rms / tau_rms                                     # 0 for an unrated joint (rms / inf)
        ok_rms = bool((over <= 1.0 + rms_tol).all())
        repair = worst > 1.0 + planners[0].tol and repairs < MAX_REPAIRS
        if ok_rms and not repair and (accepted is None or T < accepted.cycle_time):
            accepted = result(plans, T, rms, rating, log, tightened, worst)
        settled = same_rating and T >= prev * (1.0 - round_tol)      # re-linearising gained (almost) nothing
        prev, same_rating = T, True
        if repair:                      # a move over a limit between grid points: its rows there lowered
            for mv, p in zip(moves, plans):
                _repaired(mv, p.check, planners[0].tol)
            cyc, repairs, same_rating = CycleProblem(moves, tau_rms[rated], g_end[rated], T0, scheme), repairs + 1, False
        if not ok_rms:
            if tightened >= max_retighten:
                break
            rating = np.where(over > 1.0, rating / np.maximum(over, 1.0), rating)   # tighten by the measured ratio
            tightened += 1
            same_rating = False
        elif settled and not repair:
            break
        cyc.linearise(best)
    if accepted is None:
        warnings.warn(f"thermal cycle: RMS still {100 * (over.max() - 1):.3f} % above the rating after "
                      f"{tightened} tightenings; use a finer grid", RuntimeWarning, stacklevel=2)
        accepted = result(plans, T, rms, rating, log, tightened, worst)
    accepted.solves = log
    if (problem := accepted.move_problem()) is not None:  # the cycle problem's rows are at grid points only
        warnings.warn(f"thermal cycle: {problem[1]}; use a finer grid", RuntimeWarning, stacklevel=2)
    accepted.seconds = time.perf_counter() - t_start
    return accepted


def refuse_rate_limits(options: dict) -> None:
    """An `InputError` where the planner `options` hold torque-rate or jerk limits (`torque_rate_max`, `jerk_max`,
    or a `controller` profile's): the cycle problem has no rate rows, so its moves would break them — on the
    built-in cell with a 1000 N·m/s controller profile, 29× (29 185 N·m/s), and the cycle came out shorter than
    the time-optimal one with the rates. (A profile's headroom and acceleration limits alone are kept.)"""
    ctrl = options.get("controller")
    from ..controller import ControllerProfile
    names = [k for k in ("torque_rate_max", "jerk_max") if options.get(k) is not None]
    if ctrl is not None and ControllerProfile.from_mapping(ctrl).has_rates:
        names.append("controller")
    if names:
        raise InputError(f"{names[0]}: the thermal cycle cannot keep torque-rate or jerk limits (its convex problem "
                         f"has no rate rows, so its moves would break them); plan the cycle without them")


def _rows(mv: dict) -> None:
    """The move's rows at its grid points (`planning.sequential.grid_blocks`), at rest at both ends, with its
    repairs' `scales`, into mv["blocks"]."""
    blocks = grid_blocks(mv["planner"], mv["data"], mv["b_ref"], mv["scales"])
    mv["blocks"] = [blk.at({"b_start": 0.0, "b_end": 0.0}) for blk in blocks]


def _repaired(mv: dict, check, tol: float) -> None:
    """Where the move's plan (`check`, between its grid points) is over a limit by more than `tol`, that limit
    lowered at the interval's ends by the excess (`planning.sequential.tighten_grid`, as rate-limited plans)."""
    over = {kind: ratios > 1.0 + tol for kind, ratios in check.ratios.items()}
    if any(o.any() for o in over.values()):
        mv["scales"] = tighten_grid(mv["scales"], over, check, mv["theta"].size, mv["robot"].n, tol)
        _rows(mv)


def _cycle_grid(theta: np.ndarray) -> np.ndarray:
    """The move's final grid with every interval cut in k ≥ 2 equal pieces, k so that there are at least
    `MIN_CYCLE_INTERVALS`: the cycle problem has rows at its grid points only (no inner stations), so it needs
    a finer grid than the planner's to stay within `tol` between them. (A user's 10-interval cell grid only
    halved left the built-in cell's return move 3.7 % over a velocity limit; cut into 200 and repaired,
    `MAX_REPAIRS`, within 0.06 %, the cycle time 2e-4 from the default grid's.)"""
    k = max(2, -(-MIN_CYCLE_INTERVALS // (theta.size - 1)))
    steps = np.arange(k) / k
    return np.append((theta[:-1, None] + np.diff(theta)[:, None] * steps).reshape(-1), theta[-1])


def _too_slow(names, rms0, tau_rms, upfront: bool) -> InfeasiblePathError:
    """The error for a rating no practical cycle meets, naming the joint rated furthest below its RMS over the
    time-optimal cycle: slowing a joint without gravity load lowers its RMS without bound, but a motion slow
    enough stops on the grid (θ̇ → 0); `upfront`: refused before planning (`MAX_REDUCTION`)."""
    k = int(np.argmax(rms0 / tau_rms))
    why = (f"more than {MAX_REDUCTION:.0e}× is refused" if upfront else
           "a motion slow enough for it stops on the grid (θ̇ → 0), and no cycle was found")
    return InfeasiblePathError(
        f"tau_rms: joint {names[k]} (#{k}) rated {tau_rms[k]:.6g} N·m, {rms0[k] / tau_rms[k]:.3g}× below its RMS "
        f"over the time-optimal cycle ({rms0[k]:.6g} N·m): {why}; check the rating and its unit (N·m)",
        argument="tau_rms")


def _plan_from_b(mv: dict, b: np.ndarray) -> TimeOptimalPlan:
    pl, rp = mv["planner"], mv["robot"]
    law = TimeLaw(mv["theta"], b)
    check, _, _ = checked(rp, mv["sub"], law, pl.limits, False, pl.tol)     # every limit, as the planner's
    motion = joint_motion(rp, pl.path, law.theta, law.sd_grid, law.sdd_grid, law.t)
    ref = mv["plan"]
    return TimeOptimalPlan(robot=rp, path=pl.path, law=law, check=check, torques=motion.tau, status="optimal",
                           solver="cycle", timings={}, iterations=0, reused_problem=False, planner=pl,
                           payload=ref.payload, energy_R=ref.energy_R, tol=pl.tol)
