"""A toppra 0.6 script ported to the library (an audit): toppra's path object and a spline along another axis are
refused in one line that says what to pass, a 0-d array is named as an array (the message read "expected a number
from 0 to 1e+150, got 0.1"), and a plan is callable as toppra's trajectories are, ``traj(ts, order)``."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

import dynamics
from toppra_app import JointPath, plan_time_optimal
from toppra_app.errors import InputError

W = np.array([[0, 0.3, 0, -1.2, 0, 0.8, 0], [1.2, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5], [0.5, 0.5, 0.5, -1, 0, 0.9, 0.2],
              [0.9, 0.1, -0.3, -1.5, 0.4, 0.2, 0.0]])
SS = np.array([0.0, 0.5, 1.2, 2.0])


@functools.lru_cache(maxsize=None)
def plan():
    return plan_time_optimal(dynamics.load_robot("iiwa7"), JointPath.from_waypoints(W, s=SS), sd_end=0.1)


def one_line(info, name):
    msg = str(info.value)
    assert msg.startswith(f"{name}: ") and "\n" not in msg, msg
    return msg


# ------------------------------------------------------------------------------ 0-d arrays
@pytest.mark.parametrize("call, name, shown", [
    (lambda: plan_time_optimal(dynamics.load_robot("iiwa7"), W, sd_end=np.array(0.1)), "sd_end", "array(0.1)"),
    (lambda: plan().sample(np.array(1e-3)), "dt", "array(0.001)"),
    (lambda: plan_time_optimal(dynamics.load_robot("iiwa7"), W, grid=np.array(100)), "grid", "array(100)")])
def test_a_0d_array_is_named_as_an_array(call, name, shown):
    """The scalar checks refuse arrays, 0-d ones too, but printed one as its number: "sd_end: expected a number from
    0 to 1e+150, got 0.1" (a number in range); the grid's line did not show the value at all."""
    with pytest.raises(InputError) as info:
        call()
    assert one_line(info, name).endswith(f"got {shown}")


# ------------------------------------------------------------------------------ paths
def test_a_spline_along_another_axis_is_refused_in_one_line():
    """CubicSpline(ss, W.T, axis=1) gives values (joints, m): numpy's "cannot reshape array of size 112 into shape
    (16,1)" (a plain ValueError naming nothing) came out of JointPath."""
    with pytest.raises(InputError) as info:
        JointPath(CubicSpline(SS, W.T, axis=1))
    assert "axis" in one_line(info, "path")
    assert JointPath(CubicSpline(SS, W)).dof == 7                  # axis=0 is taken


@pytest.mark.parametrize("bc_type", ["not-a-knot", "clamped", "natural"])
def test_a_toppra_path_names_its_conversion_which_is_the_same_spline(bc_type):
    """toppra's SplineInterpolator was refused as "expected a scipy spline (CubicSpline, PPoly or BSpline)"; the line
    now names `JointPath.from_waypoints(waypoints, s=ss, bc_type=...)`, which is toppra's spline (q, q′, q″)."""
    ta = pytest.importorskip("toppra")
    theirs = ta.SplineInterpolator(SS, W, bc_type=bc_type)
    with pytest.raises(InputError) as info:
        plan_time_optimal(dynamics.load_robot("iiwa7"), theirs)
    assert "JointPath.from_waypoints(waypoints, s=ss, bc_type=...)" in one_line(info, "path")
    ours, x = JointPath.from_waypoints(W, s=SS, bc_type=bc_type), np.linspace(SS[0], SS[-1], 97)
    for order in range(3):
        assert np.allclose(ours(x, order), theirs(x, order), rtol=0, atol=1e-12)
    assert (ours.s_start, ours.s_end) == tuple(theirs.path_interval)


# ------------------------------------------------------------------------------ traj(ts, order)
def test_a_plan_is_called_as_a_toppra_trajectory():
    """toppra's trajectories are called ``traj(ts)``, ``traj(ts, 1)``, ``traj(ts, 2)``; a plan was not callable
    (TypeError). The call is eval / evald / evaldd, with toppra's shapes: (n,) for a time, (m, n) for m times."""
    ta = pytest.importorskip("toppra")
    from toppra import algorithm, constraint
    p, t = plan(), np.linspace(0.0, plan().duration, 11)
    for order, method in enumerate((p.eval, p.evald, p.evaldd)):
        assert np.array_equal(p(t, order), method(t)) and np.array_equal(p(0.3, order=order), method(0.3))
    assert np.array_equal(p(t), p.eval(t))
    theirs = algorithm.TOPPRA([constraint.JointVelocityConstraint(np.ones(7))], ta.SplineInterpolator(SS, W),
                              parametrizer="ParametrizeConstAccel").compute_trajectory(0, 0)
    for ts in (0.3, [0.1, 0.2], np.array([0.1])):
        assert all(np.shape(p(ts, k)) == np.shape(theirs(ts, k)) for k in range(3))
    for order in (3, -1, 1.5, True, "1", None, np.array([1, 2])):
        with pytest.raises(InputError) as info:
            p(t, order)
        one_line(info, "order")


# ------------------------------------------------------------------------------ reversed
def test_a_reversed_plan_keeps_its_end_speeds():
    """`reversed` of a plan from and to θ̇ = 0.1 recorded sd_start = sd_end = 0 (its summary too) while its motion
    starts and ends at 0.1: the end speeds swap places, and q̇ of the reversed motion is −q̇ of the plan run back."""
    p = plan_time_optimal(dynamics.load_robot("iiwa7"), JointPath.from_waypoints(W[:3]), sd_start=0.1, sd_end=0.1)
    r = p.reversed(JointPath.from_waypoints(W[:3][::-1]))
    assert (r.sd_start, r.sd_end) == (p.sd_end, p.sd_start) == (r.sd[0], r.sd[-1])
    assert (r.summary()["sd_start"], r.summary()["sd_end"]) == (0.1, 0.1)
    assert np.allclose(r.evald([0.0, r.duration]), -p.evald([p.duration, 0.0]), rtol=0, atol=1e-12)


def test_a_path_is_called_with_a_whole_order_only():
    """``JointPath(x, order)`` read 1.5 and True as 1 and None as 0, where toppra's paths refuse them."""
    path = JointPath.from_waypoints(W, s=SS)
    x = np.linspace(0.0, 2.0, 5)
    for order in range(4):
        assert np.array_equal(path(x, np.int64(order)), np.asarray(path.spline(x, order)))
    for order in (4, -1, 1.5, True, "1", None, np.array([1, 2])):
        with pytest.raises(InputError) as info:
            path(x, order)
        one_line(info, "order")
