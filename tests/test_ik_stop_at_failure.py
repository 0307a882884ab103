"""`track_path(..., stop_at_failure=True)` and `track_paths`: a path that leaves the reach stops at its first
sample not reached — the samples up to it exactly as the full tracking gives them — instead of spending
`max_sweeps` sweeps and the Newton steps on every later sample; the palletizing cells use it, so a cell whose
transfer leaves the reach is refused in about a second (was 10-11 s for the two moves of `--quick`)."""

from __future__ import annotations

import re
import time

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


def test_a_cell_whose_transfer_leaves_the_reach_is_refused_quickly_with_the_first_failure(tmp_path):
    """The default cell with its transfer 0.6 m higher: the first loaded path leaves the iiwa's reach. The
    message names the same sample and closest distance as tracking the path up to that sample."""
    from scenarios.palletizing import DEFAULT_CELL, TCP_FRAME, cartesian_path, load_cell, pick_posture
    from scenarios.palletizing.moves import IKFailure, move_geometries, place_posture
    (tmp_path / "high.toml").write_text(DEFAULT_CELL.read_text().replace("clearance = 0.05 ", "clearance = 0.6 "))
    cell = load_cell(tmp_path / "high.toml")
    t0 = time.perf_counter()
    with pytest.raises(IKFailure) as e:
        move_geometries(cell, cell.slots[:2])
    assert time.perf_counter() - t0 < 4.0                # 8-9 s when every later sample was solved too
    m = re.search(r"box 1 \(L1R1C1\), loaded move: the path to the slot leaves the reach of iiwa7 at sample (\d+) "
                  r"of 80, .*: closest ([\d.]+) mm and ([\d.]+)° away", str(e.value))
    assert m, str(e.value)
    k = int(m.group(1)) - 1
    slot, _ = place_posture(cell, cell.slots[0])
    ref = track_path(cell.robot, cartesian_path(cell, slot).poses[:k + 1], pick_posture(cell), TCP_FRAME,
                     rot_weight=cell.rot_weight, predict=True, penalty=True)
    assert ref.success[:k].all() and not ref.success[k]
    assert float(m.group(2)) == pytest.approx(1e3 * ref.pos_err[k], abs=0.051)
    assert float(m.group(3)) == pytest.approx(np.degrees(ref.rot_err[k]), abs=0.0051)
