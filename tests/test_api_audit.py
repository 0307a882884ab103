"""The library API as a toppra user would call it (an audit): arguments that were taken as nonsense, or failed with
another library's error, are refused in one line naming the argument; plans still agree with independent oracles
(toppra on velocity/acceleration limits, finite differences, the analytic rest-to-rest time)."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import dynamics
from toppra_app import JointPath, TimeOptimalPlanner, plan_time_optimal
from toppra_app.errors import InputError

W3 = np.array([[0, 0.3, 0, -1.2, 0, 0.8, 0], [1.2, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5], [0.5, 0.5, 0.5, -1, 0, 0.9, 0.2]])


@functools.lru_cache(maxsize=None)
def iiwa():
    return dynamics.load_robot("iiwa7")


@functools.lru_cache(maxsize=None)
def line():
    return JointPath.from_waypoints(W3[:2])


def one_line(info, name):
    msg = str(info.value)
    assert msg.startswith(f"{name}: ") and "\n" not in msg, msg


# ------------------------------------------------------------------------------ JointPath.from_waypoints
@pytest.mark.parametrize("waypoints", [[[True, False], [False, True]], [["0", "1"], ["2", "3"]],
                                       [[0.0, 1.0], [2.0, "3"]], np.array([[1 + 0j, 2], [3, 4]]), None])
def test_waypoints_must_be_real_numbers(waypoints):
    """Booleans (read as 1/0) and text (read as numbers, also inside a list) were planned; `t`, `sd_start` and
    `tolerance` already refused them."""
    with pytest.raises(InputError) as info:
        JointPath.from_waypoints(waypoints)
    one_line(info, "waypoints")


@pytest.mark.parametrize("waypoints, s", [(W3, ["0", "1", "2"]), (W3, [0, "1", 2]), (W3, [[0, 1, 2], [3, 4, 5]]),
                                          (W3[:2], [False, True]), (W3, [None, 1, 2])])
def test_s_must_be_one_real_number_per_waypoint(waypoints, s):
    """Text and booleans were read as numbers, a 2-D s was flattened (s=[[0, 1], [2, 3]] taken as four values)."""
    with pytest.raises(InputError) as info:
        JointPath.from_waypoints(waypoints, s=s)
    one_line(info, "s")


def test_s_as_a_column_or_a_row_is_one_value_per_waypoint():
    """A column (np.loadtxt of one column, reshaped) or a single row is unambiguous: the same path as a 1-D s."""
    flat = JointPath.from_waypoints(W3, s=[0.0, 1.0, 3.0])
    for s in ([[0.0], [1.0], [3.0]], [[0.0, 1.0, 3.0]]):
        path = JointPath.from_waypoints(W3, s=s)
        at = np.array([0.5, 2.0])
        assert np.array_equal(path.knots, flat.knots) and np.array_equal(path(at), flat(at))


@pytest.mark.parametrize("s", [[0, 1e-300, 2e-300], [0, 1e300, 2e300], [-1e308, 0, 1e308]])
def test_an_s_the_spline_overflows_on_is_named(s):
    """Was "path: the spline gives non-finite joint positions" or scipy's "`dydx` must contain only finite
    values" reported as bc_type's fault."""
    with pytest.raises(InputError) as info:
        JointPath.from_waypoints(W3, s=s)
    one_line(info, "s")


def test_any_scale_of_s_that_fits_a_double_plans_the_same_motion():
    """The exact identity behind the message above: q(θ) on s·k is the same curve, so the same duration."""
    a = TimeOptimalPlanner(iiwa(), JointPath.from_waypoints(W3, s=[0, 1, 2]), max_splits=0).plan()
    b = TimeOptimalPlanner(iiwa(), JointPath.from_waypoints(W3, s=[0, 1024, 2048]), max_splits=0).plan()
    assert b.duration == pytest.approx(a.duration, rel=1e-9)


@pytest.mark.parametrize("bc_type", [None, 5, object()])
def test_bc_type_of_the_wrong_type_is_an_input_error(bc_type):
    """scipy's TypeError ("object of type 'int' has no len()") leaked."""
    with pytest.raises(InputError) as info:
        JointPath.from_waypoints(W3, bc_type=bc_type)
    one_line(info, "bc_type")


@pytest.mark.parametrize("path", [None, "waypoints.csv", b"x", {"q": [0, 1]}])
def test_a_path_that_is_nothing_like_one_names_path(path):
    """plan_time_optimal(robot, None) said "waypoints: ... got shape ()", naming no argument of the call."""
    with pytest.raises(InputError) as info:
        plan_time_optimal(iiwa(), path)
    one_line(info, "path")


def test_duplicate_waypoints_keep_the_last_s():
    """The merge of duplicates (rewritten here) still keeps the path's end at the last s."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = JointPath.from_waypoints([W3[0], W3[1], W3[1]], s=[0.0, 0.5, 2.0])
    assert (p.s_start, p.s_end) == (0.0, 2.0) and np.allclose(p.q(2.0), W3[1], atol=0, rtol=0)


# ------------------------------------------------------------------------------ TimeOptimalPlanner options
@pytest.mark.parametrize("option", ["prune", "relocate", "allow_overload", "check_position_limits"])
@pytest.mark.parametrize("value", ["no", None, 0.5, [1, 2], np.zeros(7)])
def test_switches_take_true_or_false_only(option, value):
    """bool() took "no" (True), None (False) and a list; an array failed with numpy's "truth value ... ambiguous"
    (docs/planner.md: a bad value of any option is an InputError naming it)."""
    with pytest.raises(InputError) as info:
        TimeOptimalPlanner(iiwa(), line(), **{option: value})
    one_line(info, option)


def test_switches_still_switch():
    assert TimeOptimalPlanner(iiwa(), line(), prune=np.bool_(False), relocate=False).relocate is False


@pytest.mark.parametrize("frame", ["iiwa_link_77", 7, True])
def test_payload_frame_is_checked_when_the_planner_is_made(frame):
    """A misspelt payload_frame was taken silently; the first plan with a payload then said "frame 'x': ...", not
    naming the option."""
    with pytest.raises(InputError) as info:
        TimeOptimalPlanner(iiwa(), line(), payload_frame=frame)
    one_line(info, "payload_frame")


def test_payload_frame_puts_the_payload_there():
    """A 2 kg point mass at the flange's origin (the default tool frame) and at iiwa_link_7's: different plans,
    the first the same as payload=2.0 with no frame given."""
    at_flange = TimeOptimalPlanner(iiwa(), line(), payload_frame="flange").plan(payload=2.0).duration
    assert at_flange == TimeOptimalPlanner(iiwa(), line()).plan(payload=2.0).duration
    assert TimeOptimalPlanner(iiwa(), line(), payload_frame="iiwa_link_7").plan(payload=2.0).duration != at_flange


@pytest.mark.parametrize("limits", [3, "torque", [1, 2], {"a": 1}, np.ones(3)])
def test_limits_must_be_a_list_of_limits(limits):
    """A number or a string failed with "'int' object is not iterable", a list of numbers with an AttributeError."""
    with pytest.raises(InputError) as info:
        TimeOptimalPlanner(iiwa(), line(), limits=limits)
    one_line(info, "limits")


@pytest.mark.parametrize("rate_dt", [-1, 0, "x", None, np.nan])
def test_rate_dt_is_checked_without_rate_limits_too(rate_dt):
    with pytest.raises(InputError) as info:
        TimeOptimalPlanner(iiwa(), line(), rate_dt=rate_dt)
    one_line(info, "rate_dt")


def test_start_must_be_a_time_law_of_the_path():
    """start="x" failed with an AttributeError ('str' object has no attribute 'b_at') where the robot has viscous
    friction, and any value was ignored where it has none."""
    viscous = iiwa().replace(viscous=np.full(7, 0.5))
    planner = TimeOptimalPlanner(viscous, line())
    for start in ("x", 5, JointPath.from_waypoints(W3, s=[0, 1, 2])):
        with pytest.raises(InputError) as info:
            planner.plan(start=start)
        one_line(info, "start")
    other = TimeOptimalPlanner(iiwa(), JointPath.from_waypoints(W3, s=[0, 1, 2])).plan()
    with pytest.raises(InputError):
        planner.plan(start=other.law)                 # a law on θ ∈ [0, 2], this path's θ ∈ [0, 1]
    first = planner.plan()
    assert planner.plan(start=first.law).duration == pytest.approx(first.duration, rel=1e-6)


# ------------------------------------------------------------------------------ rate limits too large to bind
@pytest.mark.parametrize("value", [1e20, 1e200])
def test_a_huge_rate_limit_plans_as_no_limit_or_is_named(value):
    """torque_rate_max / jerk_max of 1e20 failed after 3.6 s (Clarabel, then SCS out of time), of 1e200 with cvxpy's
    raw "Problem data contains NaN or Inf". As options they now plan (the sequential scheme), within 0.1 % of the
    plan without them; in a controller profile they are refused, naming the field (inf is "no limit")."""
    plain = TimeOptimalPlanner(iiwa(), line()).plan().duration
    for kind in ("torque_rate_max", "jerk_max"):
        assert TimeOptimalPlanner(iiwa(), line(), **{kind: value}).plan().duration == pytest.approx(plain, rel=1e-3)
        with pytest.raises(InputError) as info:
            TimeOptimalPlanner(iiwa(), line(), controller={kind: value})
        one_line(info, f"controller.{kind}")


# ------------------------------------------------------------------------------ limits too small to plan with
@pytest.mark.parametrize("limits", [dict(qd_max=1e-100), dict(qdd_max=1e-160), dict(qd_max=1e-300)])
def test_limits_that_give_an_endless_motion_are_refused(limits):
    """qd_max = 1e-100 planned a motion of 0.0 s "within its limits" (θ̇² ~ 1e-200 underflowed in the time law),
    qdd_max = 1e-160 one of 1.3e80 s where 2 √(1.2 / a) = 2.2e80 s, and qd_max = 1e-300 spent minutes splitting."""
    with pytest.raises(InputError) as info:
        TimeOptimalPlanner(iiwa().with_limits(**limits), line()).plan()
    one_line(info, "robot 'iiwa7'")


@pytest.mark.parametrize("a", [1.0, 1e-6, 1e-20])
def test_a_slow_motion_still_takes_the_analytic_time(a):
    """Acceleration limits alone on a straight line: bang-bang on the joint with the longest way (1.2 rad),
    T = 2 √(1.2 / a); the plan may be shorter only by its tolerance (1e-3 over the limit)."""
    robot = iiwa().with_limits(tau_max=np.inf, qd_max=np.inf, qdd_max=a)
    T = 2.0 * np.sqrt(1.2 / a)
    assert T * (1 - 1e-3) <= TimeOptimalPlanner(robot, line()).plan().duration <= T * (1 + 1e-6)


# ------------------------------------------------------------------------------ toppra, finite differences
def test_velocity_and_acceleration_limits_against_toppra():
    """toppra 0.6 (TOPPRA, JointVelocityConstraint, JointAccelerationConstraint) on the same spline: ours is no
    longer than toppra's on 1000 intervals and not shorter than it by more than its discretisation; no limit over
    by more than the tolerance on 0.1 ms samples."""
    ta = pytest.importorskip("toppra")
    from toppra import algorithm, constraint
    rng = np.random.default_rng(3)
    W, ss = rng.uniform(-1, 1, (5, 7)), np.linspace(0, 1, 5)
    vlim, alim = rng.uniform(0.5, 2, 7), rng.uniform(1, 5, 7)
    robot = iiwa().with_limits(tau_max=np.inf, qd_max=vlim, qdd_max=alim)
    plan = plan_time_optimal(robot, JointPath.from_waypoints(W, s=ss))
    cons = [constraint.JointVelocityConstraint(np.c_[-vlim, vlim]),
            constraint.JointAccelerationConstraint(np.c_[-alim, alim])]
    ref = algorithm.TOPPRA(cons, ta.SplineInterpolator(ss, W), gridpoints=np.linspace(0, 1, 1001),
                           parametrizer="ParametrizeConstAccel").compute_trajectory(0, 0).duration
    assert ref * (1 - 3e-3) <= plan.duration <= ref
    smp = plan.sample(1e-4)
    assert np.max(np.abs(smp.qd) / vlim) <= 1 + 1e-3 and np.max(np.abs(smp.qdd) / alim) <= 1 + 1e-3


def test_eval_agrees_with_finite_differences_sample_and_clips_outside():
    plan = plan_time_optimal(iiwa(), JointPath.from_waypoints(W3))
    T, h = plan.duration, 1e-6
    t = np.linspace(0.01, T - 0.01, 41)
    assert np.abs((plan.eval(t + h) - plan.eval(t - h)) / (2 * h) - plan.evald(t)).max() < 1e-6
    assert np.abs((plan.evald(t + h) - plan.evald(t - h)) / (2 * h) - plan.evaldd(t)).max() < 1e-4
    smp = plan.sample(1e-3)
    assert np.array_equal(plan.eval(smp.t), smp.q) and np.array_equal(plan.evald(list(smp.t)), smp.qd)
    assert np.allclose(plan.evaldd(smp.t), smp.qdd, rtol=0, atol=1e-12 * np.abs(smp.qdd).max())   # (q″ θ̇ θ̇ rounding)
    assert smp.t[-1] == T and np.array_equal(plan.eval(-1.0), plan.eval(0)) and np.allclose(plan.eval(T + 5), W3[-1], rtol=0, atol=1e-12)
    assert np.array_equal(plan.evald(np.float32(0.25)), plan.evald(float(np.float32(0.25))))
