"""JointPath: cubic splines through waypoints, derivatives, wrapping scipy splines, input errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.interpolate import CubicSpline, make_interp_spline

from toppra_app import JointPath
from toppra_app.errors import InputError
from toppra_app.path import DuplicateWaypointWarning

W = np.array([[0.0, -0.5, 0.2], [0.8, 0.2, -0.3], [1.5, 0.5, 0.2], [0.9, 0.0, 0.5], [0.2, -0.3, 0.1]])


def test_interpolates_waypoints_on_uniform_s():
    path = JointPath.from_waypoints(W)
    assert (path.s_start, path.s_end) == (0.0, 1.0)
    assert path.dof == 3
    np.testing.assert_allclose(path.q(np.linspace(0, 1, len(W))), W, atol=1e-12)
    ref = CubicSpline(np.linspace(0, 1, len(W)), W, bc_type="not-a-knot")
    th = np.linspace(0, 1, 37)
    np.testing.assert_allclose(path.q(th), ref(th), atol=1e-12)


def test_derivatives_match_finite_differences():
    path = JointPath.from_waypoints(W, s=[0.0, 0.1, 0.45, 0.7, 1.3], bc_type="clamped")
    th = np.linspace(0.01, 1.29, 50)
    h = 1e-6
    np.testing.assert_allclose(path.dq(th), (path.q(th + h) - path.q(th - h)) / (2 * h), atol=1e-6)
    np.testing.assert_allclose(path.ddq(th), (path.dq(th + h) - path.dq(th - h)) / (2 * h), atol=1e-4)
    np.testing.assert_allclose(path.dq([0.0, 1.3]), 0.0, atol=1e-12)     # clamped ends


def test_shapes_scalar_and_vector():
    path = JointPath.from_waypoints(W)
    assert path.q(0.3).shape == (3,)
    assert path.dq(np.array([0.1, 0.2])).shape == (2, 3)
    S = path.evaluate(np.linspace(0, 1, 11))
    assert S.q.shape == S.dq.shape == S.ddq.shape == (11, 3)
    np.testing.assert_allclose(path(0.4, 1), path.dq(0.4))


def test_two_waypoints_give_a_straight_line():
    path = JointPath.from_waypoints([[0.0, 1.0], [2.0, -1.0]])
    th = np.linspace(0, 1, 9)
    np.testing.assert_allclose(path.q(th), np.outer(1 - th, [0, 1]) + np.outer(th, [2, -1]), atol=1e-14)
    np.testing.assert_allclose(path.dq(th), np.tile([2.0, -2.0], (9, 1)), atol=1e-14)
    np.testing.assert_allclose(path.ddq(th), 0.0, atol=1e-14)


def test_wraps_existing_scipy_splines():
    s = np.linspace(0, 2, len(W))
    for spline in (CubicSpline(s, W), make_interp_spline(s, W, k=3)):
        for path in (JointPath(spline), JointPath.from_spline(spline)):
            assert (path.s_start, path.s_end) == (0.0, 2.0)
            np.testing.assert_allclose(path.q(s), W, atol=1e-12)
            np.testing.assert_allclose(path.ddq(0.7), spline(0.7, 2), atol=1e-12)


def test_duplicate_waypoints_are_merged_with_a_warning():
    Wd = np.vstack([W[:2], W[1:2], W[2:]])
    with pytest.warns(DuplicateWaypointWarning, match="waypoint 2 \\(counted from 0\\) repeats"):
        path = JointPath.from_waypoints(Wd)
    assert path.waypoints.shape == W.shape
    # many repeats: one bounded line (a million repeated rows made a 7.9 MB warning)
    with pytest.warns(DuplicateWaypointWarning) as rec:
        JointPath.from_waypoints(np.vstack([W[:1]] * 5000 + [W[1:]]))
    assert len(str(rec[0].message)) < 200 and "4999 in all" in str(rec[0].message)
    assert np.isfinite(path.ddq(np.linspace(0, 1, 20))).all()
    # a near-duplicate (1e-11 and 1e-10 from the previous one) is the same path as an exact one: it was a point of
    # its own on the uniform s, where the spline nearly stopped
    for eps in (1e-11, 1e-10):
        with pytest.warns(DuplicateWaypointWarning, match="waypoint 2 .*repeats the previous one"):
            near = JointPath.from_waypoints(np.vstack([W[:2], W[1:2] + eps, W[2:]]))
        theta = np.linspace(0, 1, 50)
        np.testing.assert_allclose(near.q(theta), path.q(theta), atol=1e-9)
    with pytest.raises(InputError, match="identical"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            JointPath.from_waypoints([[1.0, 2.0], [1.0, 2.0]])


def test_a_motion_below_the_duplicate_threshold_is_not_called_identical_waypoints():
    """One joint moving 1e-9 rad: the waypoints are merged as duplicates and the path is refused, but the message
    said "all waypoints are identical" of waypoints that are not; it now gives the threshold and the move."""
    a = [0.0, 0.3, 0.0, -1.2, 0.0, 0.8, 0.0]
    b = list(a)
    b[2] = 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError) as err:
            JointPath.from_waypoints([a, b])
    msg = str(err.value)
    assert "identical" not in msg and "\n" not in msg
    assert "to 1.2e-09 in every joint" in msg and "largest move from the first is 1e-09" in msg


@pytest.mark.parametrize("waypoints, s, match", [
    ([[0.0, np.nan], [1.0, 2.0]], None, "waypoints: row 0, joint 1"),
    ([[0.0, 1.0]], None, "at least 2 waypoints"),
    ([[0.0, 1.0], [1.0, 2.0], [2.0, 0.0]], [0.0, 0.5, 0.5], "s: must be strictly increasing"),
    ([[0.0, 1.0], [1.0, 2.0]], [0.0], "s: expected 2 values"),
    ([[0.0, 1.0], [1.0, 2.0]], [0.0, np.inf], "s: value 1"),
    ("abc", None, "waypoints"),
])
def test_bad_inputs_name_the_field(waypoints, s, match):
    with pytest.raises(InputError, match=match):
        JointPath.from_waypoints(waypoints, s=s)
    assert issubclass(InputError, ValueError)


def test_bad_bc_type():
    with pytest.raises(InputError, match="bc_type"):
        JointPath.from_waypoints(W, bc_type="nonsense")
