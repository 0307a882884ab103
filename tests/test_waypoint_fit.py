"""`JointPath.from_waypoints(..., tolerance=)`: a path with few knots within the tolerance of every waypoint
(`toppra_app.waypoint_fit`), checked against the noise-free motion the waypoints were drawn from, the
planner on that motion, and hostile inputs."""

from __future__ import annotations

import warnings

import hypothesis.strategies as hs
import numpy as np
import pytest
from hypothesis import given, settings

import dynamics
from toppra_app import JointPath, plan_time_optimal
from toppra_app.errors import InputError
from toppra_app.path import WaypointFitWarning
from toppra_app.planning.diagnose import warn_plan


def noisy(m: int, sigma: float, seed: int, n: int = 7):
    """(s, waypoints, the noise-free path): m samples of a smooth motion (a cubic spline through three
    random points over ±1 rad) with Gaussian noise σ."""
    rng = np.random.default_rng(seed)
    smooth = JointPath.from_waypoints(rng.uniform(-1.0, 1.0, size=(3, n)))
    s = np.linspace(0.0, 1.0, m)
    return s, smooth.q(s) + rng.normal(scale=sigma, size=(m, n)), smooth


def test_noise_is_removed_and_the_motion_is_the_noise_free_one():
    s, W, smooth = noisy(3000, 1e-4, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", WaypointFitWarning)
        path = JointPath.from_waypoints(W, tolerance=5e-4)
    assert np.abs(path.q(s) - W).max() <= 5e-4
    assert len(path.knots) - 1 <= 16                             # not 2999 segments
    x = np.linspace(0.0, 1.0, 5001)
    assert np.abs(path.q(x) - smooth.q(x)).max() <= 5e-4        # the motion under the noise, not the noise
    assert np.abs(path.ddq(x)).max() <= 2.0 * np.abs(smooth.ddq(x)).max() + 1.0
    robot = dynamics.load_robot("iiwa7")
    fitted, truth = plan_time_optimal(robot, path), plan_time_optimal(robot, smooth)
    assert fitted.duration == pytest.approx(truth.duration, rel=2e-3)
    assert fitted.worst_ratio <= 1.001


def test_the_noisy_interpolation_is_much_slower_which_is_why_the_fit_exists():
    """The same 400 waypoints interpolated: their noise caps the speed (the motion takes 17 % longer here;
    2.4× at 1000 waypoints, 7.4× at 3000: the noise's curvature grows with the square of their number);
    fitted within 4σ the plan is the noise-free one's."""
    s, W, smooth = noisy(400, 1e-4, 2)
    robot = dynamics.load_robot("iiwa7")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        exact = plan_time_optimal(robot, JointPath.from_waypoints(W), max_splits=0)
    fitted = plan_time_optimal(robot, JointPath.from_waypoints(W, tolerance=4e-4))
    assert exact.duration > 1.1 * fitted.duration
    assert fitted.duration == pytest.approx(plan_time_optimal(robot, smooth).duration, rel=2e-3)


def test_per_joint_tolerance_and_exact_ends():
    s, W, _ = noisy(500, 1e-5, 3, n=3)
    tol = np.array([1e-4, 1e-3, 1e-2])
    path = JointPath.from_waypoints(W, tolerance=tol)
    assert (np.abs(path.q(s) - W) <= tol).all()
    np.testing.assert_array_equal(path.q(np.array([0.0, 1.0])), W[[0, -1]])
    assert path.s_start == 0.0 and path.s_end == 1.0


def test_a_tolerance_below_the_scatter_interpolates_with_a_warning():
    s, W, _ = noisy(300, 1e-3, 4)
    with pytest.warns(WaypointFitWarning, match=r"misses waypoint \d+, joint \d+ by"):
        path = JointPath.from_waypoints(W, tolerance=1e-4)
    np.testing.assert_array_equal(path.knots, s)                # the interpolating spline, as without it
    np.testing.assert_allclose(path.q(s), W, atol=1e-12)


def test_few_waypoints_are_interpolated_silently():
    W = np.array([[0.0, 0.0], [0.5, 1.0], [1.0, 0.5], [0.2, 0.3]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = JointPath.from_waypoints(W, tolerance=1e-2)
    np.testing.assert_allclose(path.q(path.knots), W, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(hs.integers(2, 120), hs.integers(1, 4), hs.floats(1e-6, 1.0), hs.integers(0, 2 ** 32 - 1),
       hs.sampled_from(["walk", "steps", "noise", "smooth"]))
def test_every_waypoint_is_within_the_tolerance_whatever_they_are(m, n, tol, seed, kind):
    rng = np.random.default_rng(seed)
    if kind == "walk":
        W = np.cumsum(rng.normal(scale=0.1, size=(m, n)), axis=0)
    elif kind == "steps":
        W = np.repeat(rng.uniform(-1, 1, size=(m // 4 + 1, n)), 4, axis=0)[:m] + np.arange(m)[:, None] * 1e-3
    elif kind == "noise":
        W = rng.normal(scale=1e-3, size=(m, n))
    else:
        W = np.sin(np.linspace(0, 3, m)[:, None] * (1 + np.arange(n)))
    W[1:] += 1e-9 * np.arange(1, m)[:, None]                   # no repeated rows (those are merged)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WaypointFitWarning)
        path = JointPath.from_waypoints(W, tolerance=tol)
    s = np.linspace(0.0, 1.0, m)
    assert (np.abs(path.q(s) - W) <= tol * (1 + 1e-9) + 1e-12).all()
    np.testing.assert_allclose(path.q(np.array([0.0, 1.0])), W[[0, -1]], rtol=0, atol=1e-12)
    assert len(path.knots) <= m


@pytest.mark.parametrize("tol, message", [
    (0.0, "tolerance"), (-1e-3, "tolerance"), (np.nan, "tolerance"), (np.inf, "tolerance"), ("1e-3", "tolerance"),
    ([1e-3, 1e-3], "tolerance: expected a number or 3 values"), (True, "tolerance"),
])
def test_bad_tolerances_are_refused_naming_the_field(tol, message):
    _, W, _ = noisy(50, 1e-4, 5, n=3)
    with pytest.raises(InputError, match=message):
        JointPath.from_waypoints(W, tolerance=tol)


def test_the_gap_warning_on_a_dense_path_points_to_the_fit():
    class Check:
        worst_ratio = 1.0
    with pytest.warns(RuntimeWarning, match=r"tolerance=") as record:
        warn_plan(dynamics.load_robot("iiwa7"), Check(), 0.3, 0, 1e-3, 4096, dense=True)
    assert "JointPath.from_waypoints" in str(record[0].message)
    with pytest.warns(RuntimeWarning) as record:
        warn_plan(dynamics.load_robot("iiwa7"), Check(), 0.3, 0, 1e-3, 160)
    assert "tolerance=" not in str(record[0].message)


def test_command_line_waypoint_tolerance(tmp_path, capsys):
    from toppra_app.cli import main
    s, W, _ = noisy(600, 1e-4, 6)
    f = tmp_path / "wp.csv"
    np.savetxt(f, W, delimiter=",")
    assert main(["plan", str(f), "--out", str(tmp_path / "out"), "--no-plots", "--no-report",
                 "--waypoint-tolerance", "5e-4"]) == 0
    assert "knot intervals within 0.0005" in capsys.readouterr().out
    import json
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["waypoint_tolerance"] == [5e-4] * 7 and summary["knot_intervals"] < 20
    for bad in ("0", "-1", "nan"):
        assert main(["plan", str(f), "--out", str(tmp_path / "bad"), "--waypoint-tolerance", bad]) == 2
        err = capsys.readouterr().err.strip()
        assert "--waypoint-tolerance" in err and len(err.splitlines()) == 1
        assert not (tmp_path / "bad").exists()
