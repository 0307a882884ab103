"""Inverse kinematics as a kinematics user drives it (audit): what the solvers report as reached is checked
against the tool pose from `frame_pose` and the joint limits — `track_path(method="pinv")`, the pseudo-inverse
scheme of Nicolato & Madrid's eq. 6 kept for comparison, on the paper's Fig. 4 circle (Section 6), and starts
beyond a joint limit (eq. 22)."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics import load_robot
from dynamics.forward_kinematics import frame_pose
from dynamics.ik.batch import solve_ik_batch, track_paths
from dynamics.inverse_kinematics import IKError, solve_ik, solve_ik_dls, solve_ik_multistart, track_path
from test_inverse_kinematics import PLANAR_THETA0, circle_targets


def _fig4():
    robot = load_robot("planar4")
    targets = circle_targets(frame_pose(robot, PLANAR_THETA0)[:3, 3], 0.15, 1.0, 1e-3, 1.0)
    q_min, q_max = robot.q_min.copy(), robot.q_max.copy()
    q_min[3], q_max[3] = 0.60, 0.85                       # the paper's joint-4 range (Fig. 4)
    return robot, targets, q_min, q_max


def test_pinv_success_means_within_the_tolerance_and_the_joint_limits():
    """Before: every sample within 1 mm counted as reached whatever tol_pos said, and q_min/q_max were ignored
    without a word — on Fig. 4's circle joint 4 went down to 0.36 rad (limit 0.60) and errors reached 4.6e-5 m
    (tolerance 1e-5 m), yet all_success was True. Eq. 6 has no limits (the paper's point against it): the joints
    are still not clamped, but those samples are reported as not reached."""
    robot, targets, q_min, q_max = _fig4()
    res = track_path(robot, targets, PLANAR_THETA0, method="pinv", dt=1e-3, gain=100.0, q_min=q_min, q_max=q_max)
    err = np.linalg.norm(frame_pose(robot, res.q)[:, :3, 3] - targets, axis=1)       # independent of the solver
    np.testing.assert_allclose(res.pos_err, err, atol=1e-15)
    inside = np.all((res.q >= q_min) & (res.q <= q_max), axis=1)
    assert not inside.all()                                # eq. 6 leaves joint 4's range ...
    assert res.q[:, 3].min() < 0.5
    np.testing.assert_array_equal(res.success, (err <= 1e-5) & inside)             # ... and that is reported
    assert not res.all_success
    # a tolerance the scheme does keep, without the joint-4 limits: every sample reached
    loose = track_path(robot, targets, PLANAR_THETA0, method="pinv", dt=1e-3, gain=100.0, tol_pos=1e-4)
    assert loose.all_success and loose.pos_err.max() <= 1e-4


@pytest.mark.parametrize("option", [dict(penalty=True), dict(qd_max="robot"), dict(predict=True),
                                    dict(stop_at_failure=True)], ids=lambda o: next(iter(o)))
def test_pinv_refuses_the_recursive_methods_options(option):
    """Each was accepted and had no effect (the velocity limit of eq. 22 and the penalty of eq. 23–24 belong to
    the recursive method)."""
    robot, targets, _, _ = _fig4()
    with pytest.raises(IKError) as err:
        track_path(robot, targets[:5], PLANAR_THETA0, method="pinv", dt=1e-3, **option)
    name = next(iter(option))
    assert str(err.value).startswith(f"{name}: not used by method='pinv'") and "\n" not in str(err.value)


def test_a_start_beyond_a_joint_limit_is_not_returned_as_the_solution():
    """The iiwa's joint 1 at 3.0 rad (limit 2.967) with the target its own flange pose: every solver returned the
    start itself, "converged", outside the limits that "are always respected" (a target 1 mm away was solved within
    them). Now the start's chain joints are brought onto the limits first; the pose is still reached (joint 1
    alone cannot restore it: the others move too) and every returned posture is within the limits."""
    robot = load_robot("iiwa7")
    q0 = np.array([3.0, 0.3, 0.0, -1.2, 0.0, 0.8, 0.0])
    target = frame_pose(robot, q0)

    def check(q, what):
        assert np.all((robot.q_min <= q) & (q <= robot.q_max)), what
        T = frame_pose(robot, q)
        assert np.linalg.norm(T[:3, 3] - target[:3, 3]) <= 1e-5, what
        assert np.abs(T[:3, :3] - target[:3, :3]).max() <= 1e-4, what

    for what, res in (("solve_ik", solve_ik(robot, target, q0)), ("dls", solve_ik_dls(robot, target, q0)),
                      ("multistart", solve_ik_multistart(robot, [target], [q0]).best)):
        assert res.success, what
        check(res.q, what)
    batch = solve_ik_batch(robot, [target, target], [q0, q0])
    assert all(r.success for r in batch) and np.array_equal(batch[0].q, solve_ik(robot, target, q0).q)
    path = np.repeat(target[None], 3, axis=0)
    for tr in [track_path(robot, path, q0)] + track_paths(robot, [path, path], q0):
        assert tr.all_success
        for q in tr.q:
            check(q, "track")
