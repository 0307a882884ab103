"""The inverse kinematics of many targets or paths side by side (`dynamics.ik.batch`): bit for bit the
one-by-one solvers' results (tests/test_inverse_kinematics.py tests those)."""

from __future__ import annotations

import numpy as np

from dynamics.forward_kinematics import frame_pose
from dynamics.inverse_kinematics import solve_ik, track_path
from dynamics.robots import load_robot


def _same_tracks(a, b):
    return all(np.array_equal(getattr(a, f), getattr(b, f))
               for f in ("q", "pos_err", "rot_err", "sweeps", "success", "newton_steps"))


def test_track_paths_side_by_side_equal_track_path_bit_for_bit():
    """dynamics.ik.batch.track_paths (the sweeps of sample k of every path in one set of array operations):
    each path's joints, errors, sweep and Newton counts exactly as track_path gives them — on the default
    palletizing cell's loaded paths (cut to different lengths, the velocity penalty near the limits, a Newton polish
    on about half the samples), with the recursive method alone, and on an iiwa line pressed against a
    narrowed joint range (clamped steps, stalls)."""
    from dynamics.ik.batch import track_paths
    from scenarios.palletizing import TCP_FRAME, cartesian_path, load_cell, pick_posture
    cell = load_cell()
    q0 = pick_posture(cell)
    paths = [cartesian_path(cell, s).poses for s in cell.slots[2:6]]
    paths = [p[:len(p) - 9 * i] for i, p in enumerate(paths)]
    for kw in (dict(predict=True, penalty=True), dict(newton_steps=0, max_sweeps=8, penalty=True), dict(polish_after=1)):
        kw["rot_weight"] = cell.rot_weight
        many = track_paths(cell.robot, paths, q0, TCP_FRAME, **kw)
        assert len({len(p) for p in paths}) > 1 and [len(t.q) for t in many] == [len(p) for p in paths]
        assert all(_same_tracks(track_path(cell.robot, p, q0, TCP_FRAME, **kw), t) for p, t in zip(paths, many))
    robot = load_robot("iiwa7")
    qa = np.array([0.0, 0.6, 0.0, -1.3, 0.0, 1.2, 0.0])
    lines = []
    for dx, n in ((0.15, 31), (-0.25, 45), (0.35, 20)):
        poses = np.repeat(frame_pose(robot, qa)[None], n, axis=0)
        poses[:, 0, 3] += np.linspace(0, dx, n)
        poses[:, 2, 3] -= np.linspace(0, 0.1, n)
        lines.append(poses)
    lo, hi = robot.q_min.copy(), robot.q_max.copy()
    lo[3], hi[1] = -1.35, 0.65                               # joints 2 and 4 run into these
    kw = dict(q_min=lo, q_max=hi, penalty=True, predict=True)
    many = track_paths(robot, lines, qa, **kw)
    one = [track_path(robot, p, qa, **kw) for p in lines]
    assert all(_same_tracks(a, b) for a, b in zip(one, many))
    assert not all(t.all_success for t in one)               # the narrowed range is felt


def test_solve_ik_batch_equals_solve_ik_bit_for_bit():
    """dynamics.ik.batch.solve_ik_batch (the pose IK of the palletizing cells: many targets, the sweeps side by
    side): every result as solve_ik gives it — joints, errors, sweeps, Newton steps and status — with the
    Newton finish (exact and paper step) and with the recursive method alone stopping short."""
    from dynamics.ik.batch import solve_ik_batch
    robot = load_robot("iiwa7")
    rng = np.random.default_rng(4)
    qs = rng.uniform(0.8 * robot.q_min, 0.8 * robot.q_max, (6, 7))
    targets, starts = [frame_pose(robot, q) for q in qs], list(qs[::-1] + 0.3)
    for kw in (dict(), dict(step="paper"), dict(newton_steps=0, max_sweeps=40)):
        many = solve_ik_batch(robot, targets, starts, **kw)
        for t, q0, b in zip(targets, starts, many):
            a = solve_ik(robot, t, q0, **kw)
            assert np.array_equal(a.q, b.q)
            assert (a.success, a.pos_err, a.rot_err, a.sweeps, a.newton_steps, a.status) == \
                   (b.success, b.pos_err, b.rot_err, b.sweeps, b.newton_steps, b.status)
    assert not all(r.success for r in many) and all(r.status == "max_iterations" for r in many if not r.success)
