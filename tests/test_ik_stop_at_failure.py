"""`track_path(..., stop_at_failure=True)` and `track_paths`: a path that leaves the reach stops at its first
sample not reached — the samples up to it exactly as the full tracking gives them — instead of spending
`max_sweeps` sweeps and the Newton steps on every later sample; the palletizing cells use it, so a cell whose
transfer leaves the reach is refused in about a second (was 10-11 s for the two moves of `--quick`)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dynamics.forward_kinematics import frame_pose
from dynamics.inverse_kinematics import track_path
from dynamics.robots import load_robot


def _radial(robot, qa, reach, n):
    """Tool-down poses from the pose at qa straight out, horizontally away from the base, by `reach` m."""
    Ta = frame_pose(robot, qa)
    d = Ta[:3, 3].copy()
    d[2] = 0.0
    d /= np.linalg.norm(d)
    poses = np.repeat(Ta[None], n, axis=0)
    poses[:, :3, 3] += np.linspace(0.0, reach, n)[:, None] * d
    return poses


def test_a_path_leaving_the_reach_stops_at_its_first_failure_with_the_same_samples():
    from dynamics.ik.batch import track_paths
    robot = load_robot("ur5e")
    qa = np.array([0.0, -1.0, 1.0, -1.57, -1.57, 0.0])
    out = _radial(robot, qa, 0.16, 17)                  # leaves the UR5e's reach after ~0.11 m
    inside = _radial(robot, qa, 0.05, 9)
    kw = dict(predict=True, penalty=True)
    full = track_path(robot, out, qa, **kw)
    k = int(np.flatnonzero(~full.success)[0])
    assert 5 < k < 16 and not full.success[k:].any()    # every later sample fails too (the costly part)
    stop = track_path(robot, out, qa, stop_at_failure=True, **kw)
    for f in ("q", "pos_err", "rot_err", "sweeps", "success", "newton_steps"):
        assert np.array_equal(getattr(stop, f)[:k + 1], getattr(full, f)[:k + 1]), f
    assert not stop.success[k:].any() and np.isnan(stop.pos_err[k + 1:]).all() and (stop.sweeps[k + 1:] == 0).all()
    assert np.array_equal(stop.q[k + 1:], np.repeat(stop.q[k][None], len(out) - k - 1, axis=0))
    # independent check of what was reached: the tool pose of every solved sample by forward kinematics
    for q, T, ok in zip(stop.q[:k], out[:k], stop.success[:k]):
        assert ok and np.linalg.norm(frame_pose(robot, q)[:3, 3] - T[:3, 3]) <= 1e-5
    # side by side: the failing path stops, the other one goes on, each as track_path gives it
    many = track_paths(robot, [out, inside], qa, stop_at_failure=True, **kw)
    one = [track_path(robot, p, qa, stop_at_failure=True, **kw) for p in (out, inside)]
    for a, b in zip(many, one):
        for f in ("q", "pos_err", "rot_err", "sweeps", "success", "newton_steps"):
            assert np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True), f
    assert many[1].all_success


def test_a_cell_whose_transfer_leaves_the_reach_is_refused_at_the_first_failure_naming_how_close_it_comes(tmp_path):
    """The default cell with its transfer 0.6 m higher: the first loaded path leaves the iiwa's reach. The
    message names the first sample not reached (as tracking the path up to it), without solving the later
    samples (8-9 s when each cost its sweeps and Newton steps), and how close the robot can come to that pose:
    at most the tracking's own attempt (which starts from an extrapolation and overstated it, 12.7 against
    10.1 mm on such a cell) and near the best of an independent bounded minimisation of the same residual
    (eq. 10) from twelve starts."""
    from scipy.optimize import minimize
    from dynamics.ik.common import pose_error
    from scenarios.palletizing import DEFAULT_CELL, TCP_FRAME, cartesian_path, load_cell, pick_posture
    from scenarios.palletizing.moves import IKFailure, move_geometries, place_posture
    (tmp_path / "high.toml").write_text(DEFAULT_CELL.read_text().replace("clearance = 0.05 ", "clearance = 0.6 "))
    cell = load_cell(tmp_path / "high.toml")
    with pytest.raises(IKFailure) as e:
        move_geometries(cell, cell.slots[:2])
    m = re.search(r"box 1 \(L1R1C1\), loaded move: the path to the slot leaves the reach of iiwa7 at sample (\d+) "
                  r"of 80, .*: closest ([\d.]+) mm and ([\d.]+)° away \((\d+) more solves", str(e.value))
    assert m, str(e.value)
    k = int(m.group(1)) - 1
    slot, _ = place_posture(cell, cell.slots[0])
    poses = cartesian_path(cell, slot).poses
    ref = track_path(cell.robot, poses[:k + 1], pick_posture(cell), TCP_FRAME, rot_weight=cell.rot_weight,
                     predict=True, penalty=True)
    assert ref.success[:k].all() and not ref.success[k]
    L2 = cell.rot_weight ** 2
    said = (float(m.group(2)) * 1e-3) ** 2 + L2 * np.radians(float(m.group(3))) ** 2
    tracked = ref.pos_err[k] ** 2 + L2 * ref.rot_err[k] ** 2
    r = cell.robot
    cost = lambda q: float(np.dot(e := pose_error(r, q, poses[k], TCP_FRAME), (1.0, L2) * np.asarray(e)))  # noqa: E731
    rng = np.random.default_rng(3)
    starts = [ref.q[k - 1]] + list(rng.uniform(r.q_min, r.q_max, size=(11, r.n)))
    best = min(minimize(cost, q0, bounds=list(zip(r.q_min, r.q_max)), method="L-BFGS-B").fun for q0 in starts)
    assert said <= tracked * (1 + 1e-3) + 1e-10
    assert best * (1 - 1e-3) - 1e-10 <= said <= 1.05 * best, (said, best, tracked)


def test_a_sample_the_tracking_missed_but_another_posture_reaches_is_said_so():
    """Where the tracking stops at a pose that other starts reach (a joint limit or a singularity between the
    samples' posture and the one that reaches it), the message says the path cannot be followed there rather
    than naming a distance out of reach. (A tracked path of the default cell, its sample 30 marked missed.)"""
    import dataclasses
    from scenarios.palletizing import TCP_FRAME, cartesian_path, load_cell, pick_posture
    from scenarios.palletizing.moves import _left_reach, place_posture
    cell = load_cell()
    slot, _ = place_posture(cell, cell.slots[0])
    cart = cartesian_path(cell, slot)
    tr = track_path(cell.robot, cart.poses, pick_posture(cell), TCP_FRAME, rot_weight=cell.rot_weight,
                    predict=True, penalty=True)
    assert tr.all_success
    missed = dataclasses.replace(tr, success=np.arange(tr.success.size) != 29)
    msg = str(_left_reach(cell, slot, cart, missed))
    assert re.fullmatch(r".*default_cell.toml: pattern: box 1 \(L1R1C1\), loaded move: the path to the slot cannot "
                        r"be followed by iiwa7 past sample 29 of \d+: the pose \(.*\) m, yaw .*° is reached only in "
                        r"another posture \(a joint limit or a singularity on the way\); move the pallet or the pick",
                        msg), msg
