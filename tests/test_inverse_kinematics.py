"""Recursive inverse kinematics (Nicolato & Madrid 2005) and the damped least-squares comparison."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dynamics.forward_kinematics import frame_pose
from dynamics.inverse_kinematics import (IKError, _sinusoid_min, penalty_weight, pose_error, solve_ik,
                                         solve_ik_dls, track_path)
from dynamics.model import RobotModel
from dynamics.robots import load_robot


def circle_targets(p0, radius, period, dt, t_end):
    """Circle through p0 (centre p0 − (r, 0, 0)), counter-clockwise from p0, sampled every dt.

    The paper generates its trajectories with refcirc.m of the Planar Manipulators Toolbox and does not
    give the centre; we assume the circle starts at the initial end-effector position."""
    t = np.arange(0, round(t_end / dt) + 1) * dt
    w = 2 * np.pi / period
    c = np.asarray(p0) - [radius, 0.0, 0.0]
    return c + np.stack([radius * np.cos(w * t), radius * np.sin(w * t), 0 * t], axis=1)


def ellipse_targets(p0, rx, ry, period, dt, t_end):
    t = np.arange(0, round(t_end / dt) + 1) * dt
    w = 2 * np.pi / period
    c = np.asarray(p0) - [rx, 0.0, 0.0]
    return c + np.stack([rx * np.cos(w * t), ry * np.sin(w * t), 0 * t], axis=1)


# ------------------------------------------------------------------------------ the 1-D sub-problem
def test_sinusoid_minimiser_is_exact_on_intervals():
    rng = np.random.default_rng(0)
    grid = np.linspace(-4 * np.pi, 4 * np.pi, 200001)
    for _ in range(200):
        k1, k2 = rng.normal(size=2)
        lo, hi = np.sort(rng.uniform(-4, 4, size=2))
        d = _sinusoid_min(k1, k2, lo, hi)
        assert lo - 1e-15 <= d <= hi + 1e-15
        g = grid[(grid >= lo) & (grid <= hi)]
        f = k1 * np.cos(g) + k2 * np.sin(g)
        assert k1 * math.cos(d) + k2 * math.sin(d) <= f.min() + 1e-9


def test_single_joint_step_is_the_exact_minimiser_of_h():
    """One sweep on a 1-joint chain must land at the minimum of h over the joint angle (brute force)."""
    iiwa = load_robot("iiwa7")
    rng = np.random.default_rng(1)
    for _ in range(20):
        q = rng.uniform(iiwa.q_min, iiwa.q_max)
        target = frame_pose(iiwa, rng.uniform(iiwa.q_min, iiwa.q_max))
        L = 0.2
        # freeze every joint but joint 4 (index 3) through its limits
        qmin, qmax = q.copy(), q.copy()
        qmin[3], qmax[3] = iiwa.q_min[3], iiwa.q_max[3]
        res = solve_ik(iiwa, target, q, max_sweeps=1, newton_steps=0, rot_weight=L, q_min=qmin, q_max=qmax)
        grid = np.linspace(iiwa.q_min[3], iiwa.q_max[3], 20001)
        Q = np.tile(q, (grid.size, 1))
        Q[:, 3] = grid
        T = frame_pose(iiwa, Q)
        h = (np.sum((target[:3, 3] - T[:, :3, 3]) ** 2, axis=1)
             + L**2 * (3 - np.einsum("ij,nij->n", target[:3, :3], T[:, :3, :3])))
        p, r = pose_error(iiwa, res.q, target)
        h_res = p**2 + L**2 * 2 * (1 - math.cos(r))
        assert h_res <= h.min() + 1e-9
        assert np.all(np.delete(res.q, 3) == np.delete(q, 3))


# ------------------------------------------------------------------------------ single poses
@pytest.mark.parametrize("seed", range(6))
def test_solve_ik_iiwa_reaches_random_poses(seed):
    robot = load_robot("iiwa7")
    rng = np.random.default_rng(seed)
    q_goal = rng.uniform(0.8 * robot.q_min, 0.8 * robot.q_max)
    target = frame_pose(robot, q_goal)
    q0 = np.clip(q_goal + rng.normal(scale=0.4, size=7), robot.q_min, robot.q_max)
    res = solve_ik(robot, target, q0)
    assert res.success, res
    p, r = pose_error(robot, res.q, target)
    assert p <= 1e-6 and r <= 1e-6
    assert np.all(res.q >= robot.q_min) and np.all(res.q <= robot.q_max)
    assert res.newton_steps <= 30
    dls = solve_ik_dls(robot, target, q0)
    assert dls.success and max(pose_error(robot, dls.q, target)) <= 1e-6


def test_pure_recursive_method_converges_without_newton():
    robot = load_robot("iiwa7")
    rng = np.random.default_rng(4)
    q_goal = rng.uniform(0.8 * robot.q_min, 0.8 * robot.q_max)
    target = frame_pose(robot, q_goal)
    q0 = np.clip(q_goal + rng.normal(scale=0.3, size=7), robot.q_min, robot.q_max)
    res = solve_ik(robot, target, q0, newton_steps=0, max_sweeps=3000)
    assert res.success and res.newton_steps == 0 and res.sweeps > 5
    assert max(pose_error(robot, res.q, target)) <= 1e-6


def test_position_only_and_joint_limits_respected():
    robot = load_robot("iiwa7")
    q0 = np.array([0.0, 0.5, 0.0, -1.2, 0.0, 0.8, 0.0])
    target = np.array([0.45, 0.2, 0.35])
    qmin, qmax = robot.q_min.copy(), robot.q_max.copy()
    qmin[1], qmax[1] = 0.4, 0.6                           # narrow shoulder range
    res = solve_ik(robot, target, q0, q_min=qmin, q_max=qmax)
    assert res.success and res.rot_err == 0.0
    assert res.pos_err <= 1e-6
    assert qmin[1] - 1e-12 <= res.q[1] <= qmax[1] + 1e-12


def test_unreachable_target_reports_failure_not_exception():
    robot = load_robot("iiwa7")
    res = solve_ik(robot, np.array([2.0, 0.0, 0.5]), np.zeros(7) + 0.1, max_sweeps=200)
    assert not res.success
    assert res.status in ("stalled", "max_iterations")
    assert res.pos_err > 0.5


def test_prismatic_joint_chain():
    """A Cartesian x–y–z gantry (three prismatic joints) with a revolute wrist."""
    robot = RobotModel.create(
        name="gantry", parents=[-1, 0, 1, 2], joint_types=["prismatic"] * 3 + ["revolute"],
        placement_rotations=[np.eye(3)] * 4, placement_translations=[[0, 0, 0]] * 3 + [[0, 0, -0.1]],
        axes=[[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]], masses=[1.0] * 4, coms=np.zeros((4, 3)),
        inertias=[np.eye(3) * 0.01] * 4, frames={"tool": (3, np.eye(4))}, tool_frame="tool",
        q_min=[-1, -1, -1, -np.pi], q_max=[1, 1, 1, np.pi])
    T = np.eye(4)
    c, s = math.cos(0.7), math.sin(0.7)
    T[:3, :3] = [[c, -s, 0], [s, c, 0], [0, 0, 1]]
    T[:3, 3] = [0.3, -0.2, 0.4]
    res = solve_ik(robot, T, np.zeros(4), newton_steps=0)
    assert res.success and res.sweeps == 1
    np.testing.assert_allclose(res.q, [0.3, -0.2, 0.5, 0.7], atol=1e-12)


def test_paper_step_eq21_also_converges():
    robot = load_robot("iiwa7")
    rng = np.random.default_rng(8)
    q_goal = rng.uniform(0.7 * robot.q_min, 0.7 * robot.q_max)
    target = frame_pose(robot, q_goal)
    res = solve_ik(robot, target, q_goal + 0.2, step="paper")
    assert res.success


def test_bad_inputs():
    robot = load_robot("iiwa7")
    with pytest.raises(IKError, match="target"):
        solve_ik(robot, np.zeros(5), np.zeros(7))
    with pytest.raises(IKError, match="rotation"):
        solve_ik(robot, np.diag([2.0, 1, 1, 1]), np.zeros(7))
    with pytest.raises(IKError, match="q0"):
        solve_ik(robot, np.zeros(3), np.zeros(6))
    with pytest.raises(IKError, match="step"):
        solve_ik(robot, np.zeros(3), np.zeros(7), step="newton")
    with pytest.raises(ValueError):
        track_path(robot, np.zeros((3, 3)), np.zeros(7), method="pinv")      # dt required


def test_penalty_weight_eq23():
    np.testing.assert_allclose(penalty_weight([0.0, 0.5, 1.0, -1.0], -1.0, 1.0), [1.0, 0.75, 0.0, 0.0])
    assert penalty_weight(3.0, -np.inf, np.inf) == 1.0


# ------------------------------------------------------------------------------ path tracking
def test_track_path_iiwa_line_is_continuous():
    robot = load_robot("iiwa7")
    q0 = np.array([0.0, 0.6, 0.0, -1.3, 0.0, 1.2, 0.0])
    T0 = frame_pose(robot, q0)
    poses = np.repeat(T0[None], 51, axis=0)
    poses[:, 0, 3] += np.linspace(0, 0.15, 51)
    poses[:, 2, 3] -= np.linspace(0, 0.10, 51)
    tr = track_path(robot, poses, q0)
    assert tr.all_success
    # the paper's tolerance (10⁻⁵ m; the orientation as an arc of radius L = 0.2 m)
    assert tr.pos_err.max() <= 1e-5 and tr.rot_err.max() <= 1e-5 / 0.2
    assert tr.total_sweeps > 0
    p, r = np.max([pose_error(robot, q, T) for q, T in zip(tr.q, poses)], axis=0)
    assert p <= 1e-5 and r <= 5e-5
    assert np.abs(np.diff(tr.q, axis=0)).max() < 0.05            # no jumps between neighbours


PLANAR_THETA0 = np.array([np.pi / 4, np.pi / 6, np.pi / 2, np.pi / 4])


def test_paper_circle_with_joint4_position_limits():
    """Section 6, first simulation (Fig. 4): circle r = 0.15 m, period 1 s, Δt = 1 ms, tolerance 1e-5 m,
    joints moved 1 → 4, θ₀ = [π/4, π/6, π/2, π/4], joint 4 limited to [0.60, 0.85] rad, no penalty:
    joint 4 is clamped at its limits and the tracking accuracy is unaffected."""
    robot = load_robot("planar4")
    p0 = frame_pose(robot, PLANAR_THETA0)[:3, 3]
    targets = circle_targets(p0, 0.15, 1.0, 1e-3, 1.0)
    qmin, qmax = robot.q_min.copy(), robot.q_max.copy()
    qmin[3], qmax[3] = 0.60, 0.85
    tr = track_path(robot, targets, PLANAR_THETA0, step="paper", newton_steps=0, tol_pos=1e-5,
                    q_min=qmin, q_max=qmax)
    assert tr.all_success and tr.pos_err.max() <= 1e-5
    assert tr.q[:, 3].min() >= 0.60 - 1e-12 and tr.q[:, 3].max() <= 0.85 + 1e-12
    # joint 4 really hits both limits (the clamping of Fig. 4)
    assert np.isclose(tr.q[:, 3].min(), 0.60) and np.isclose(tr.q[:, 3].max(), 0.85)
    assert tr.sweeps.mean() < 10


def test_default_tracking_is_the_recursive_method_with_a_polish_only_where_needed():
    """track_path's defaults on the paper's own circle (1 kHz): the recursive sweeps do the tracking (every
    sample after the first needs some), with the paper's step and tolerance; a Newton polish only at the
    samples the first `polish_after` sweeps leave outside the tolerance — none when that budget is the
    paper's (the pure method needs at most 6 sweeps here), and the counts are reported."""
    robot = load_robot("planar4")
    p0 = frame_pose(robot, PLANAR_THETA0)[:3, 3]
    targets = circle_targets(p0, 0.15, 1.0, 1e-3, 1.0)
    paper = track_path(robot, targets, PLANAR_THETA0, step="paper", newton_steps=0, tol_pos=1e-5)
    tr = track_path(robot, targets, PLANAR_THETA0)
    assert tr.all_success and paper.all_success and tr.pos_err.max() <= 1e-5
    assert tr.sweeps[0] == 0 and np.all(tr.sweeps[1:] > 0)
    assert tr.total_sweeps > 3 * len(targets)
    # polished only where the 5 sweeps fell short; the paper's method needed a 6th sweep about as often
    assert np.all(tr.sweeps[tr.newton_steps > 0] == 5) and np.all(tr.sweeps <= 5)
    assert 0 < tr.polished < len(targets) // 2 and np.sum(paper.sweeps > 5) > 0
    generous = track_path(robot, targets, PLANAR_THETA0, polish_after=10)
    assert generous.polished == 0 and np.array_equal(generous.q, paper.q)
    for bad in (-1, 2.5, "5"):
        with pytest.raises(IKError, match="polish_after"):
            track_path(robot, targets[:3], PLANAR_THETA0, polish_after=bad)
    with pytest.raises(IKError, match="rot_weight"):
        track_path(robot, targets[:3], PLANAR_THETA0, rot_weight=0.0)
    # solve_ik took rot_weight=0 (a pose's orientation without weight) and "stalled" far from it
    with pytest.raises(IKError, match=r"rot_weight: expected a positive length \(m\), got 0.0"):
        solve_ik(robot, targets[0], PLANAR_THETA0, rot_weight=0.0)


def test_paper_circle_with_joint4_velocity_limits():
    """Section 6, second simulation (Fig. 5): the same with |θ̇₄| ≤ 0.5 rad/s (eq. 22)."""
    robot = load_robot("planar4")
    p0 = frame_pose(robot, PLANAR_THETA0)[:3, 3]
    dt = 1e-3
    targets = circle_targets(p0, 0.15, 1.0, dt, 1.0)
    qmin, qmax = robot.q_min.copy(), robot.q_max.copy()
    qmin[3], qmax[3] = 0.60, 0.85
    vmax = np.array([np.inf, np.inf, np.inf, 0.5])
    tr = track_path(robot, targets, PLANAR_THETA0, step="paper", newton_steps=0, tol_pos=1e-5,
                    q_min=qmin, q_max=qmax, dt=dt, qd_max=vmax)
    assert tr.all_success and tr.pos_err.max() <= 1e-5
    qd4 = np.diff(tr.q[:, 3]) / dt
    assert np.abs(qd4).max() <= 0.5 + 1e-9
    assert np.abs(qd4).max() >= 0.5 - 1e-6          # the velocity limit is active somewhere


def test_paper_repeatability_recursive_vs_pseudo_inverse():
    """Section 6, third simulation (Fig. 6–7): ellipse rx = 0.1 m, ry = 0.2 m, period 2 s from
    θ₀ = [π/3, π/3, −π/2, −π/2] (p₀ = (0.2732, 0.2732) m). Recursive method: limits ±π, reconfigure from
    θ = 0 to p₀, after 6 s the limits become the recorded ranges, penalty eq. 23–24 on. The joint motion
    becomes cyclic; the pseudo-inverse scheme (eq. 6, K = 100) drifts from period to period.
    (14 s instead of the paper's 50 s to keep the test short.)"""
    robot = load_robot("planar4")
    dt, period = 1e-3, 2.0
    theta0 = np.array([np.pi / 3, np.pi / 3, -np.pi / 2, -np.pi / 2])
    p0 = frame_pose(robot, theta0)[:3, 3]
    np.testing.assert_allclose(p0[:2], [0.2732, 0.2732], atol=1e-4)
    targets = ellipse_targets(p0, 0.1, 0.2, period, dt, 14.0)
    kw = dict(step="paper", newton_steps=0, tol_pos=1e-5, penalty=True)
    start = solve_ik(robot, p0, np.zeros(4), **kw)
    assert start.success
    k6 = round(6.0 / dt)
    first = track_path(robot, targets[: k6 + 1], start.q, **kw)
    lo, hi = first.q.min(axis=0), first.q.max(axis=0)
    second = track_path(robot, targets[k6:], first.q[-1], q_min=lo, q_max=hi, **kw)
    assert first.all_success and second.all_success
    assert max(first.pos_err.max(), second.pos_err.max()) <= 1e-5
    per = round(period / dt)
    q_rec = np.vstack([first.q, second.q[1:]])
    rec_drift = np.abs(np.diff(q_rec[::per], axis=0)).max(axis=1)
    assert rec_drift[-1] < 1e-5                               # cyclic joint motion
    assert rec_drift[-1] < 1e-2 * rec_drift[0]

    pinv = track_path(robot, targets, theta0, method="pinv", dt=dt, gain=100.0)
    assert pinv.pos_err.max() < 1e-4                           # it tracks the ellipse, but ...
    pinv_drift = np.abs(np.diff(pinv.q[::per], axis=0)).max(axis=1)
    assert pinv_drift.min() > 0.05                              # ... joints drift every period


def test_predicted_start_tracks_the_same_path_with_fewer_sweeps():
    """track_path(predict=True): each sample starts from the previous solution extrapolated; every pose is
    still reached to the tolerance, with far fewer recursive sweeps on a densely sampled palletizing path."""
    from scenarios.palletizing import TCP_FRAME, cartesian_path, load_cell, pick_posture
    from dynamics.forward_kinematics import frame_pose
    cell = load_cell()
    cart = cartesian_path(cell, cell.slots[2])
    q0 = pick_posture(cell)
    kw = dict(rot_weight=cell.rot_weight, newton_steps=0)          # the recursive sweeps alone
    plain = track_path(cell.robot, cart.poses, q0, TCP_FRAME, **kw)
    fast = track_path(cell.robot, cart.poses, q0, TCP_FRAME, predict=True, **kw)
    assert plain.all_success and fast.all_success
    assert fast.sweeps.sum() < 0.5 * plain.sweeps.sum()
    T = frame_pose(cell.robot, fast.q, TCP_FRAME)
    assert np.linalg.norm(T[:, :3, 3] - cart.poses[:, :3, 3], axis=1).max() <= 1e-5
    # the default tracking (sweeps, then a Newton polish where they fall short): fewer polished samples
    plain_d = track_path(cell.robot, cart.poses, q0, TCP_FRAME, rot_weight=cell.rot_weight)
    fast_d = track_path(cell.robot, cart.poses, q0, TCP_FRAME, rot_weight=cell.rot_weight, predict=True)
    assert plain_d.all_success and fast_d.all_success
    assert fast_d.polished < 0.6 * plain_d.polished
    assert np.all(fast.q >= cell.robot.q_min) and np.all(fast.q <= cell.robot.q_max)
    # the joint path stays smooth: no larger jumps between samples than without prediction
    assert np.abs(np.diff(fast.q, axis=0)).max() <= 1.05 * np.abs(np.diff(plain.q, axis=0)).max()
    assert np.abs(np.diff(fast_d.q, axis=0)).max() <= 1.05 * np.abs(np.diff(plain_d.q, axis=0)).max()
    with pytest.raises(IKError, match="predict"):
        track_path(cell.robot, cart.poses, q0, TCP_FRAME, predict=True, dt=1e-3, qd_max="robot")


# ------------------------------------------------------------------------------ several starts, symmetric targets
def test_multistart_reaches_a_panda_pose_a_single_start_misses(panda_urdf):
    """From a posture with joint 7 near its limit (the Panda cell's first pick posture) the recursive IK
    stalls short of a tool-down pose; other starts and the same pose turned by π (a box's symmetry) reach
    it to 1e-9. The reached pose is checked independently with Pinocchio's forward kinematics."""
    import pinocchio as pin
    from dynamics.inverse_kinematics import random_seeds, solve_ik_multistart
    from dynamics.urdf import from_urdf
    from scenarios.palletizing.cell import tool_down_pose
    fingers = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
    robot = from_urdf(panda_urdf, locked_joints=fingers)
    start = np.array([-1.963, 0.265, 0.581, -2.170, -0.210, 2.382, -2.816])
    r, az, yaw = 0.6734, 0.9906, 2.0111
    T = tool_down_pose([r * math.cos(az), r * math.sin(az), 0.3414], yaw)
    single = solve_ik(robot, T, start)
    assert not single.success and single.pos_err > 0.01
    turned = tool_down_pose(T[:3, 3], yaw + math.pi)
    tight = dict(tol_pos=1e-12, tol_rot=1e-12)
    ms = solve_ik_multistart(robot, [T, turned], [[start], random_seeds(robot, 8, seed=12)], **tight)
    assert ms.success and not ms.first_try and ms.attempts == 2 and ms.target == 1 and ms.seed == 0
    assert ms.best.pos_err < 1e-9 and ms.best.rot_err < 1e-9
    assert np.all(ms.best.q >= robot.q_min) and np.all(ms.best.q <= robot.q_max)
    # more starts, the configured yaw only: a random start reaches it too
    ms_seeds = solve_ik_multistart(robot, [T], [[start], random_seeds(robot, 8, seed=12)], **tight)
    assert ms_seeds.success and ms_seeds.seed > 0 and ms_seeds.best.pos_err < 1e-9
    # Pinocchio's forward kinematics of the reached postures (fingers at their locked positions)
    model = pin.buildModelFromUrdf(panda_urdf)
    data = model.createData()
    fid = model.getFrameId(robot.tool_frame)
    for q, goal in ((ms.best.q, turned), (ms_seeds.best.q, T)):
        qp = pin.neutral(model)
        for name, value in list(zip(robot.joint_names, q)) + list(fingers.items()):
            qp[model.joints[model.getJointId(name)].idx_q] = value
        pin.framesForwardKinematics(model, data, qp)
        M = data.oMf[fid]
        assert np.linalg.norm(M.translation - goal[:3, 3]) < 1e-9
        assert np.linalg.norm(pin.log3(goal[:3, :3].T @ M.rotation)) < 1e-9


def test_multistart_bad_inputs_and_unreachable():
    from dynamics.inverse_kinematics import random_seeds, solve_ik_multistart
    robot = load_robot("iiwa7")
    with pytest.raises(IKError, match="stages"):
        solve_ik_multistart(robot, [np.zeros(3)], [np.zeros((1, 6))])
    with pytest.raises(IKError, match="targets"):
        solve_ik_multistart(robot, [], [np.zeros((1, 7))])
    with pytest.raises(IKError, match="count"):
        random_seeds(robot, -1)
    with pytest.raises(IKError, match="count"):
        random_seeds(robot, 2.5)
    with pytest.raises(IKError, match="reference"):
        solve_ik_multistart(robot, [np.zeros(3)], [np.zeros((1, 7))], reference=np.zeros(3))
    S = random_seeds(robot, 50, seed=3)
    assert np.all(S > robot.q_min) and np.all(S < robot.q_max)
    np.testing.assert_array_equal(S, random_seeds(robot, 50, seed=3))
    far = solve_ik_multistart(robot, [np.array([2.0, 0.0, 0.5])], [[np.zeros(7) + 0.1], S[:3]], max_sweeps=100)
    assert not far.success and far.best is None and far.attempts == 4
    # the closest attempt is the least error of all, and its error is that of its posture: 2 m from the
    # base, the stretched arm (shoulder at 0.36 m, ~0.95 m to the flange) stays about 1.06–1.08 m short
    assert far.closest.pos_err == min(t[3] for t in far.tried)
    assert far.closest.pos_err == pytest.approx(pose_error(robot, far.closest.q, np.array([2.0, 0.0, 0.5]))[0])
    assert 1.0 < far.closest.pos_err < 1.1
