"""The solver fallback chain (`socp.solvers.solve_with_chain`) with a probe: what is used, what is trusted,
what the caller is told — with a scripted `solve` standing in for the solvers, and on a real controller
plan (its duration must not depend on whether the probe was taken)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from toppra_app.socp.solvers import SolverError, installed_solvers, solve_with_chain, time_limit

PROBE = {"iterative_refinement_enable": False, "probe_marker": 1}


def scripted(statuses):
    """A `solve(name, options)` returning the given statuses in turn; records (name, options) of each call."""
    calls = []

    def solve(name, options):
        status = statuses[len(calls)]
        calls.append((name, dict(options)))
        x = None if status in ("infeasible", "solver_error") else np.array([1.0, float(len(calls))])
        return status, x, 0.01, 0.0

    return solve, calls


def test_an_optimal_probe_is_used_and_reported():
    solve, calls = scripted(["optimal"])
    told = []
    status, x, name, wall, _ = solve_with_chain(solve, "CLARABEL", clarabel={"extra": 2}, probe=PROBE,
                                                probed=told.append)
    assert (status, name, told, len(calls)) == ("optimal", "CLARABEL", [True], 1)
    assert calls[0][1]["probe_marker"] == 1 and calls[0][1]["extra"] == 2          # probe on top of both
    assert calls[0][1]["iterative_refinement_enable"] is False


@pytest.mark.parametrize("probe_status", ["optimal_inaccurate", "infeasible", "solver_error"])
def test_a_failed_probe_falls_through_to_the_chain_untrusted(probe_status):
    solve, calls = scripted([probe_status, "optimal"])
    told = []
    status, x, name, wall, _ = solve_with_chain(solve, "CLARABEL", clarabel={"iterative_refinement_enable": True},
                                                probe=PROBE, probed=told.append)
    assert status == "optimal" and told == [False] and len(calls) == 2
    assert x[1] == 2.0                                                              # the chain's solution
    assert "probe_marker" not in calls[1][1] and calls[1][1]["iterative_refinement_enable"] is True
    assert wall == pytest.approx(0.02)                                              # both tries counted


def test_infeasible_from_the_first_chain_solver_after_a_failed_probe_is_still_reported():
    solve, _ = scripted(["optimal_inaccurate", "infeasible"])
    status, x, *_ = solve_with_chain(solve, "CLARABEL", probe=PROBE, probed=lambda ok: None)
    assert status == "infeasible" and x is None


def test_without_a_probe_the_chain_is_unchanged():
    solve, calls = scripted(["optimal_inaccurate", "optimal"])
    status, x, name, *_ = solve_with_chain(solve, "CLARABEL", clarabel={"extra": 2})
    assert status == "optimal" and len(calls) == 2 and all(c[1]["extra"] == 2 for c in calls)
    solve, _ = scripted(["infeasible"])
    assert solve_with_chain(solve, "CLARABEL")[0] == "infeasible"


def test_every_try_failing_raises_and_an_inaccurate_one_is_kept_with_a_warning():
    solve, _ = scripted(["solver_error"] * 10)
    with pytest.raises(SolverError):
        solve_with_chain(solve, "CLARABEL", probe=PROBE)
    solve, _ = scripted(["optimal_inaccurate"] + ["solver_error"] * 10)
    with pytest.raises(SolverError):             # a probe's inaccurate result is never a fallback candidate
        solve_with_chain(solve, "CLARABEL", probe=PROBE)
    solve, _ = scripted(["solver_error", "optimal_inaccurate"] + ["solver_error"] * 10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = solve_with_chain(solve, "CLARABEL", probe=PROBE)[0]
    assert status == "optimal_inaccurate" and any("inaccurate" in str(w.message) for w in caught)


def test_an_inaccurate_result_is_told_to_a_caller_that_asks_instead_of_warned_about():
    """`inaccurate=` (the planner's): the warning goes into the list, for the caller to raise only if that solution
    becomes its result (`diagnose.plan_status`)."""
    solve, _ = scripted(["solver_error", "optimal_inaccurate"] + ["solver_error"] * 10)
    told = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        status = solve_with_chain(solve, "CLARABEL", inaccurate=told)[0]
    assert status == "optimal_inaccurate" and len(told) == 1 and "solved only inaccurately" in told[0]


def test_with_a_size_every_try_has_a_time_limit_and_one_that_reaches_it_is_a_failure():
    """`size` (the problem's rows) gives each Clarabel and SCS try its own time limit (`solvers.time_limit`); a try
    that ran that long is a failure, never the inaccurate result kept as a last resort: the chain ends in a clear
    `SolverError` (on a puma560 path of 3200 intervals SCS had run its 50 000 iterations for minutes, and its
    inaccurate result was a plan 7.45× over a limit). Without a size no limit is set."""
    limit = time_limit(115_000)
    assert 10.0 < limit < 20.0
    calls = []

    def slow(name, options):
        calls.append((name, dict(options)))
        return "optimal_inaccurate", np.array([1.0, 2.0]), limit + 0.01, 0.0
    with pytest.raises(SolverError, match="time limit"):
        solve_with_chain(slow, "CLARABEL", size=115_000)
    # (ECOS, installed with cvxpy < 1.6, takes no time limit but is judged by the same wall time)
    fallbacks = [name for name in ("ECOS", "SCS") if name in installed_solvers()]
    assert [c[0] for c in calls] == ["CLARABEL", "CLARABEL"] + fallbacks
    limited = [c[1].get("time_limit", c[1].get("time_limit_secs")) for c in calls if c[0] != "ECOS"]
    assert limited == [limit] * len(limited)
    solve, calls = scripted(["optimal_inaccurate", "optimal"])
    assert solve_with_chain(solve, "CLARABEL")[0] == "optimal"
    assert not any("time_limit" in c[1] or "time_limit_secs" in c[1] for c in calls)


def test_controller_plan_is_the_same_with_and_without_the_probe(monkeypatch):
    """The probe changes how the SOCP is solved, not what it is: durations agree to the solver's
    tolerance and the sampled torque rate stays within the limit either way."""
    from dynamics import load_robot
    from toppra_app import ControllerProfile, JointPath, TimeOptimalPlanner
    from toppra_app.planning import diagnose
    robot = load_robot("iiwa7")
    W = [[0.0, 0.4, 0.0, -1.2, 0.0, 1.0, 0.0], [1.0, 0.9, 0.3, -0.9, 0.2, 0.8, 0.5],
         [1.8, 0.6, -0.2, -1.5, -0.3, 1.1, -0.4]]
    profile = ControllerProfile(torque_headroom=0.9, velocity_headroom=0.95, torque_rate_max=1000.0)
    told = []
    real = diagnose.solve_station_problem

    def spy(*args, probed=None, **kwargs):
        if probed is not None:
            def tell(ok):
                told.append(ok)
                probed(ok)
            return real(*args, probed=tell, **kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(diagnose, "solve_station_problem", spy)
    with_probe = TimeOptimalPlanner(robot, JointPath.from_waypoints(W), controller=profile).plan()
    assert told and told[0] is True                                 # the probe was taken (and held here)
    monkeypatch.setattr(diagnose, "CONTROLLER_PROBE", {"iterative_refinement_enable": True})
    refined = TimeOptimalPlanner(robot, JointPath.from_waypoints(W), controller=profile).plan()
    assert with_probe.duration == pytest.approx(refined.duration, rel=1e-4)
    for plan in (with_probe, refined):
        assert plan.rate_check["torque_rate"].ratio <= 1.001


@pytest.mark.parametrize("first", ["optimal_inaccurate", "infeasible", "solver_error"])
def test_first_only_tries_one_solver_and_reports_anything_but_optimal_as_failed(first):
    """A problem with rows left out (`first_only`): one try; not "optimal" → "failed", no warning, no
    fallback (the planner solves again with every row instead of going down to SCS)."""
    solve, calls = scripted([first, "optimal", "optimal"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        status, x, name, _, _ = solve_with_chain(solve, "CLARABEL", first_only=True)
    assert (status, x, name, len(calls)) == ("failed", None, "CLARABEL", 1)
    solve, calls = scripted(["optimal"])
    assert solve_with_chain(solve, "CLARABEL", first_only=True)[0] == "optimal" and len(calls) == 1


def test_a_failed_solve_with_rows_left_out_is_solved_again_with_every_row(monkeypatch):
    """The planner's first solve leaves out rows far from binding at the sweeps' profile. Where its solver
    fails (once measured: Clarabel on a reduced out-and-back problem, then 9 s in SCS), the plan solves
    again with every row, with Clarabel only — and is the plan made without the failure."""
    import dynamics
    import toppra_app.socp.problem as problem
    from toppra_app import JointPath, plan_time_optimal
    from toppra_app.socp.problem import UNUSED
    robot = dynamics.load_robot("iiwa7")
    lo, hi = 0.8 * robot.q_min + 0.2 * robot.q_max, 0.2 * robot.q_min + 0.8 * robot.q_max
    W = np.random.default_rng(2).uniform(lo, hi, size=(4, robot.n))
    clean = plan_time_optimal(robot, JointPath.from_waypoints(W))
    real, seen = problem.StationProblem.solve, []

    def failing_once(self, values, solver, options):
        seen.append((solver, int((np.asarray(values["h"]) < UNUSED).sum())))
        if len(seen) == 1:
            return "solver_error", None, 0.0, 0.0
        return real(self, values, solver, options)
    monkeypatch.setattr(problem.StationProblem, "solve", failing_once)
    plan = plan_time_optimal(robot, JointPath.from_waypoints(W))
    assert [name for name, _ in seen] == ["CLARABEL"] * len(seen) and len(seen) == clean.iterations + 1
    assert seen[1][1] > seen[0][1]                              # the second: every row
    assert plan.duration == pytest.approx(clean.duration, rel=1e-6) and plan.worst_ratio <= 1.001
