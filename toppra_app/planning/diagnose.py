"""Telling a real infeasibility from a numerical one, and saying where and which limit.

Checked before any solve, in this order: the path stays inside the joint ranges (`check_positions`);
every grid point can be held at rest, i.e. gravity and Coulomb friction alone stay within the torque
limits (`check_holdable`); the boundary speeds are within the velocity limits and some θ̈ meets every
row there (`check_boundaries`). When all of these pass and the motion is rest-to-rest, a profile that
creeps along the path satisfies every limit, so a solver that reports "infeasible" is wrong and the
planner says so as a `SolverError`, never as an `InfeasiblePathError`.

After the last solve, `warn_plan` says where a plan still exceeds a limit by more than `tol`, or how much
slower than the optimum it may be (`plan.gap_estimate` over `WARN_ABOVE`).
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings

import numpy as np

from dynamics.checks import stacklevel_outside

from ..errors import InfeasiblePathError, InputError
from ..socp.solvers import SolverError, solve_with_chain
from ..verify import estimate_of, swing_room
from ..waypoint_fit import thinnable  # noqa: F401 - the plan warnings' hint to tolerance= (`planner`)
from . import cache

WARN_ABOVE = 0.05                  # warn where `plan.gap_estimate` still exceeds this after the refinements
                                   # (`planner.REFINE_ABOVE`; it over-states the gap, up to ~15×)
SWING_WARN = 3e-3                  # θ̈ linear: ... or the swing estimate this (`verify.swing_room`; suite ≤ 8e-4;
                                   # 7.8e-3 and 3.4e-3 on friction-limited iiwa paths 0.31 % and 0.11 % slower)
POSITION_SLACK = 1e-6               # of a joint's range: positions this far outside it are on it (`outside_range`)
MAX_TIME_SCALE = 1e15              # s: the longest motion a plan represents (`check_time_scale`)
SENSITIVE_MARGIN = 10.0            # warn where holding the robot at a rest end leaves less torque (× tol)
_HELD = threading.local()          # `held_back`: this thread's plan warnings held back, or None
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # toppra_app/: not the user's code


def outside_range(robot, q) -> np.ndarray:
    """Where positions q (..., n) leave the joint ranges by more than the rounding a file's digits leave
    (`POSITION_SLACK` of each range: a limit written to 8 digits, 2.96705973 for 170°, is on the limit)."""
    span = np.where(np.isfinite(robot.q_max - robot.q_min), robot.q_max - robot.q_min, 1.0)
    slack = POSITION_SLACK * span
    return (q > robot.q_max + slack) | (q < robot.q_min - slack)


def check_positions(robot, theta, q) -> None:
    over = outside_range(robot, q)
    if over.any():
        i, k = np.argwhere(over)[0]
        lim = robot.q_max[k] if q[i, k] > robot.q_max[k] else robot.q_min[k]
        raise InfeasiblePathError(
            f"path leaves the position range of joint {robot.joint_names[k]} (#{k}) at θ = {theta[i]:.6g}: "
            f"q = {q[i, k]:.9g} rad, limit {lim:.9g} rad (a waypoint is out of range or the spline "
            f"overshoots between waypoints)")


def check_time_scale(robot, theta, law) -> None:
    """Refuse limits so small that the motion would take more than `MAX_TIME_SCALE` (the path's length over its top
    speed θ̇ on the coarse rest-to-rest profile `law`): such θ̇² lose their digits in the time law, whose times are
    in seconds. qd_max = 1e-100 on the iiwa planned 0.0 s "within its limits", qdd_max = 1e-160 1.3e80 s instead
    of 2.2e80 s, qd_max = 1e-200 spent minutes splitting the grid. Usually a unit mistake."""
    if law is None:
        return
    top, L = float(np.max(law.b)), float(theta[-1] - theta[0])
    with np.errstate(divide="ignore"):
        scale = L / np.sqrt(top) if top > 0 else np.inf
    if scale > MAX_TIME_SCALE:
        raise InputError(f"robot '{robot.name}': its limits (tau_max, qd_max, qdd_max and any Cartesian ones) allow "
                         f"this path only at path speeds θ̇ up to {np.sqrt(top):.3g}, a motion of ~{scale:.3g} s, "
                         f"longer than the {MAX_TIME_SCALE:.0e} s a plan represents; check the limits' units")


def check_holdable(robot, theta, d, dq=None, stations: bool = False) -> None:
    """Gravity + Coulomb friction d̃ (P, n) within the torque limits at every grid point θ (P,): a creep
    along the path is then possible. (`dq`: q′ there, to tell gravity alone from the friction moving adds;
    `stations`: θ are a plan's stations, the points in its grid's intervals where rows are, named so: a payload
    the robot cannot hold was reported at "grid index 96 of 512" of a 129-point grid.)"""
    lim = np.isfinite(robot.tau_max)
    over = (np.abs(d) > robot.tau_max) & lim
    if over.any():
        i = int(np.nonzero(over)[0][0])
        ks = np.flatnonzero(over[i])
        k = int(ks[np.argmax(np.abs(d[i, ks]) / robot.tau_max[ks])])
        on_k = np.flatnonzero(over[:, k])
        g = d[i, k] - (0.0 if dq is None else robot.coulomb[k] * np.sign(dq[i, k]))    # d̃ without Coulomb
        what, why = ("gravity alone exceeds", "hold the path") if abs(g) > robot.tau_max[k] else \
            (f"gravity and Coulomb friction ({robot.coulomb[k]:.6g} N·m, moving) exceed", "creep along the path")
        raise InfeasiblePathError(
            f"{what} the torque limit of joint {robot.joint_names[k]} (#{k}) at θ = "
            f"{theta[i]:.6g} ({'station' if stations else 'grid index'} {i} of {theta.size - 1}): |d̃| = "
            f"{abs(d[i, k]):.6g} N·m > tau_max = {robot.tau_max[k]:.6g} N·m; the robot cannot {why} there "
            f"({on_k.size} {'stations' if stations else 'grid points'}, θ ∈ [{theta[on_k[0]]:.6g}, {theta[on_k[-1]]:.6g}])")


def warn_rest_margin(robot, theta, d, sd_start: float, sd_end: float, tol: float) -> None:
    """Warn where the path rests at an end (boundary speed 0) with gravity + Coulomb friction d̃ (at the
    grid points, (P, n)) needing all but less than `SENSITIVE_MARGIN` × tol of a joint's torque limit. The
    motion away from (or into) rest then has almost no torque to accelerate with, and its duration depends
    on how much of the check's tolerance a plan uses: a Panda path (URDF, 0.6 × rated torque) whose start
    needs 99.95 % of joint 2's limit planned in 6.2–9.2 s on different grids and objectives, all within tol."""
    lim = np.isfinite(robot.tau_max)
    if not lim.any():
        return
    for where, i, sd in (("start", 0, sd_start), ("end", -1, sd_end)):
        if sd != 0.0:
            continue
        ratio = np.abs(d[i]) / robot.tau_max                            # (0 where there is no limit)
        k = int(np.argmax(ratio))
        if 1.0 - ratio[k] < SENSITIVE_MARGIN * tol:
            warnings.warn(
                f"at rest at the path's {where} (θ = {theta[i]:.6g}) gravity and friction need {100 * ratio[k]:.3f} % "
                f"of the torque limit of joint {robot.joint_names[k]} (#{k}): the motion {'away from' if i == 0 else 'into'} "
                f"rest has almost no torque to accelerate with, so the plan is slow there and its duration depends "
                f"strongly on that limit (within the {100 * tol:g} % tolerance of the check durations can differ by "
                f"tens of percent between grids); move the path's {where} or raise the limit", RuntimeWarning,
                stacklevel=3)


def check_boundaries(robot, theta, dq, blocks, sd_start: float, sd_end: float) -> None:
    """The boundary speeds: within the velocity limits, and some θ̈ meets every row there.
    `blocks`: the rows at the grid points (values applied), θ̇² terms evaluated at the boundary speed."""
    P = theta.size
    for name, i, sd in (("sd_start", 0, sd_start), ("sd_end", P - 1, sd_end)):
        if sd == 0:
            continue
        qd = dq[i] * sd
        ratio = np.abs(qd) / robot.qd_max
        if (ratio > 1 + 4e-10).any():          # (the velocity row below refuses ratio² > 1 + 1e-9)
            k = int(np.argmax(ratio))
            fast, top = _distinct(abs(qd[k]), robot.qd_max[k])
            raise InfeasiblePathError(
                f"{name} = {sd:.6g} is too fast at θ = {theta[i]:.6g} (grid index {i}): joint "
                f"{robot.joint_names[k]} (#{k}) would move at {fast} > qd_max = {top}", argument=name)
        _check_point(robot, theta, blocks, i, sd * sd, name)


def _check_point(robot, theta, blocks, i: int, b: float, name: str) -> None:
    """Is there any θ̈ meeting every row at grid point i with θ̇² = b fixed?"""
    lo_a, hi_a, why_lo, why_hi = -np.inf, np.inf, None, None
    for blk in blocks:
        if blk.equality or (blk.points is not None and not blk.points[i]):
            continue
        for r in range(blk.size):
            A, rest = blk.A[i, r], blk.B[i, r] * b + blk.C[i, r] * np.sqrt(b)
            for side, has in (("hi", blk.has_hi[r]), ("lo", blk.has_lo[r])):
                if not has:
                    continue
                bound = (blk.hi if side == "hi" else blk.lo)[i, r] - rest
                if abs(A) < 1e-12:
                    if (side == "hi" and bound < -1e-9) or (side == "lo" and bound > 1e-9):
                        _raise_point(robot, theta, i, name, blk, r, b, alone=True)
                    continue
                v = bound / A
                upper = (side == "hi") == (A > 0)
                if upper and v < hi_a:
                    hi_a, why_hi = v, (blk, r)
                if not upper and v > lo_a:
                    lo_a, why_lo = v, (blk, r)
    if lo_a > hi_a + 1e-9 * max(1.0, abs(lo_a)):
        _raise_point(robot, theta, i, name, *why_hi, b, other=why_lo)


def _distinct(x: float, y: float) -> tuple[str, str]:
    """x and y printed to 6 significant digits, or as many more as it takes to tell them apart."""
    for digits in range(6, 18):
        a, b = f"{x:.{digits}g}", f"{y:.{digits}g}"
        if a != b:
            break
    return a, b


def _label(robot, blk, r) -> str:
    k = int(blk.joints[r])
    return f"{blk.kind} limit" + (f" of joint {robot.joint_names[k]} (#{k})" if k >= 0 else "")


def _raise_point(robot, theta, i, name, blk, r, b, other=None, alone=False):
    if alone:       # (a row without θ̈: the velocity limit, a torque limit where the path turns back)
        raise InfeasiblePathError(f"{name} = {np.sqrt(b):.6g} is too fast at θ = {theta[i]:.6g} (grid index {i}): "
                                  f"it exceeds the {_label(robot, blk, r)}, which bounds the path speed alone there",
                                  argument=name)
    msg = (f"{name} = {np.sqrt(b):.6g} cannot be met at θ = {theta[i]:.6g} (grid index {i}): "
           f"no path acceleration satisfies the {_label(robot, blk, r)}")
    if other is not None and (other[0] is not blk or other[1] != r):
        msg += f" together with the {_label(robot, *other)}"
    raise InfeasiblePathError(msg, argument=name)


# the controller profile's structure (`socp.controller_problem`) with Clarabel: the duration to 1e-6 (gap)
# rather than 1e-7 (~20 % fewer iterations), iterative refinement on (the rows near a rest end are tiny:
# without it a solve may end "almost solved" or, once measured, "infeasible"). Each solve is first probed
# without refinement (~25 % faster an iteration), the probe kept only if "optimal"; after a failed probe
# the plan's later solves go straight to the chain (`ControllerRows.probe`). Controller benchmark, one
# interleaved A/B run: median planning time 2.32× → 1.85× the plain plan's. Clarabel's equilibration stays on
# here (the plain plans go without, `solvers.FAST_CLARABEL`): without it the controller's cones stopped up to
# 3.6e-4 long on iiwa 7 paths (tests/test_tangent_objective.py)
CONTROLLER_CLARABEL: dict = dict(iterative_refinement_enable=True, tol_gap_abs=1e-6, tol_gap_rel=1e-6,
                                 equilibrate_enable=True)
CONTROLLER_PROBE: dict = dict(iterative_refinement_enable=False, tol_gap_abs=1e-6, tol_gap_rel=1e-6,
                              equilibrate_enable=True, max_iter=120)
# (max_iter: probes that succeeded took ≤ 24 iterations on the controller suite's non-dense paths, 78–109 on its
# dense ones; the two that failed ran 186–200 before giving up, 0.4 s each: capped, the same plans 0.15 s sooner)


def solve_station_problem(N: int, R: int, values: dict, solver, sd_start: float, sd_end: float, K: int = 0,
                          probed=None, linear: bool = False, reduced: bool = False, inaccurate: list | None = None):
    """Solve the compiled problem of structure (N, R) with `values` down the solver chain; K > 0: with K
    controller-row slots, and with `probed` (a callable told whether it succeeded) a `CONTROLLER_PROBE`
    try first; `linear`: θ̈ linear per interval; `values` with "weights": the tangent objective (1′) of
    `socp.problem` (its √β cones only where a row has a √β term); `reduced`: rows were left out, one try and
    status "failed" unless it ends "optimal" (`solve_with_chain`, as `inaccurate`). An infeasible report is
    explained: rest to rest with every point holdable (checked before) it is a numerical failure (`SolverError`)
    — creeping is always feasible; otherwise the boundary speeds cannot be met."""
    tangent = "weights" in values
    roots = bool(np.any(values["gl"]) or np.any(values["gr"]))
    with cache.acquire(N, R, K, linear, tangent, roots) as problem:
        out = solve_with_chain(lambda name, opts: problem.solve(values, name, opts), solver,
                               clarabel=CONTROLLER_CLARABEL if K else None,
                               probe=CONTROLLER_PROBE if K and probed else None, probed=probed, first_only=reduced,
                               size=N * R + (N + 1) * K, inaccurate=inaccurate)
    if out[0] != "infeasible":
        return out
    if sd_start == 0 and sd_end == 0:
        raise SolverError("the solver reported the rest-to-rest problem infeasible, but every grid point can be "
                          "held at rest, so a (slow) profile exists: a numerical failure; try another grid "
                          "(grid=...) or solver (solver=...)")
    raise InfeasiblePathError(
        f"no speed profile satisfies the limits along the path (solver status: infeasible). Every grid point "
        f"can be held at rest, so the boundary speeds (sd_start = {sd_start:g}, sd_end = {sd_end:g}) cannot be "
        f"reached or left within the limits on the {N}-interval grid")


def plan_status(noted: list, law) -> str:
    """The status of the solve that gave the plan's time law `law` — "optimal_inaccurate", with the solver chain's
    warning, where `noted` ([(law, warning)] of the inaccurate solves) holds it. The warning of an inaccurate solve
    whose law is not the plan's (a tangent round, a repair or a controller pass that another solve replaced) is
    dropped: the plan's own solve was accurate (a tiny UR3 motion's first controller pass, with the linear law,
    warned of a solve whose profile only set the next pass's caps)."""
    warning = next((w for solved, w in noted if solved is law), None)
    if warning is None:
        return "optimal"
    _warn(warning, RuntimeWarning)
    return "optimal_inaccurate"


def warn_plan(robot, check, estimate, rounds: int, tol: float, intervals: int, dense: bool = False,
              law=None) -> None:
    """Warn (a `RuntimeWarning` at the caller of `TimeOptimalPlanner.plan`) where the plan still exceeds a limit
    by more than `tol` after `rounds` repairs, or else where its gap estimate exceeds `WARN_ABOVE`, or, θ̈ linear
    (`law`), its swing estimate `SWING_WARN` after the grid's refinements — on a `dense` waypoint path each pointing
    to the waypoint fit too (noise there is curvature that caps the speed and bends the limits inside intervals)."""
    fit = ("; if the waypoints are recorded or noisy, JointPath.from_waypoints(..., tolerance=...) (on the command "
           "line --waypoint-tolerance) fits a path with far fewer knots within that tolerance (docs/planner.md)") \
        if dense else ""
    if check.worst_ratio > 1.0 + tol:
        w = max(check.worst.values(), key=lambda x: x.ratio)
        which = f" of joint {robot.joint_names[w.joint]}" if w.joint >= 0 else ""
        _warn(f"the plan still exceeds the {w.kind} limit{which} by {100 * (w.ratio - 1):.3f} % at "
              f"θ = {w.theta:.6g} after {rounds} refinements (tol {100 * tol:g} %); use a finer grid" + fit,
              RuntimeWarning)
    elif estimate is not None and estimate > WARN_ABOVE:
        _warn(f"the time-optimal motion may take up to {100 * estimate:.2g} % less time than the plan: the "
              f"limits leave room inside intervals of the {intervals}-interval grid that its time law (θ̈ "
              f"constant or linear per interval) cannot use (plan.gap_estimate; it over-states the gap, "
              f"1.5–15× on our benchmark suite); a finer grid (grid=...) plans closer to the optimum" + fit,
              RuntimeWarning)
    elif estimate is not None and law is not None and law.linear and \
            (swing := estimate_of(swing_room(check, law), law)) is not None and swing > SWING_WARN:
        _warn(f"the time-optimal motion may take up to {100 * swing:.2g} % less time than the plan: θ̇² swings "
              f"across intervals of the {intervals}-interval grid more than its time law (θ̈ linear per "
              f"interval) follows (the swing estimate, `verify.swing_room`; it over-stated the gap 2–3× "
              f"where measured); a finer grid (grid=..., e.g. {4 * intervals}) plans closer to the optimum"
              + fit, RuntimeWarning)


@contextlib.contextmanager
def held_back():
    """The plan warnings (`warn_plan`, `plan_status`) raised inside, in this thread, held back in the list this
    yields as (message, category) — for a plan that may be discarded (`finer.split_for_limits`); `release` warns
    them where it is kept. (A thread-local list: `warnings.catch_warnings` would catch other threads' too.)"""
    outer = getattr(_HELD, "list", None)
    _HELD.list = held = []
    try:
        yield held
    finally:
        _HELD.list = outer


def release(held: list) -> None:
    """Warn the warnings `held_back` held."""
    for message, category in held:
        _warn(message, category)


def _warn(message: str, category) -> None:
    """`warnings.warn` at the first caller outside toppra_app — the user's call of `TimeOptimalPlanner.plan`, also
    from a finer grid's planner (`finer`) — or held back (`held_back`)."""
    held = getattr(_HELD, "list", None)
    if held is not None:
        held.append((message, category))
        return
    warnings.warn(message, category, stacklevel=stacklevel_outside(_PACKAGE))
