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


@pytest.mark.parametrize("waypoints, s", [(W3, ["0", "1", "2"]), (W3, [0, "1", 2]), (W3, [[0, 1, 2]]),
                                          (W3, [[0], [1], [2]]), (W3[:2], [False, True]), (W3, [None, 1, 2])])
def test_s_must_be_one_real_number_per_waypoint(waypoints, s):
    """Text and booleans were read as numbers, a 2-D s was flattened (s=[[0, 1], [2, 3]] taken as four values)."""
    with pytest.raises(InputError) as info:
        JointPath.from_waypoints(waypoints, s=s)
    one_line(info, "s")


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
