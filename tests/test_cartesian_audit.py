"""A task-space user's audit: Cartesian tool paths of the palletizing cells (how far the planned joint spline
leaves the Cartesian path between IK samples, against Pinocchio's forward kinematics), pose targets of the IK
(a homogeneous matrix, position in the last column) and the units of the cell's tool-speed limit."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from dynamics.forward_kinematics import frame_pose
from dynamics.ik.batch import solve_ik_batch, track_paths
from dynamics.inverse_kinematics import IKError, solve_ik, solve_ik_dls, solve_ik_multistart, track_path
from dynamics.robots import load_robot
from fixtures import to_pinocchio
from scenarios.palletizing import DEFAULT_CELL, load_cell
from scenarios.palletizing.cartesian_path import cartesian_path
from scenarios.palletizing.cell import TCP_FRAME
from toppra_app.errors import InputError

pin = pytest.importorskip("pinocchio")


# ------------------------------------------------------------------------------ spline vs Cartesian path
@functools.lru_cache(maxsize=None)
def _first_box():
    from scenarios.palletizing.plan import plan_box
    cell = load_cell()
    return cell, plan_box(cell, 0, nominal=False, check_collisions=False)


def _pin_tcp(cell, Q):
    """Pinocchio's TCP poses (k, 4, 4)."""
    model = to_pinocchio(cell.robot)
    data = model.createData()
    fid = model.getFrameId(TCP_FRAME)
    out = []
    for q in Q:
        pin.framesForwardKinematics(model, data, q)
        out.append(data.oMf[fid].homogeneous.copy())
    return np.array(out)


def test_the_reported_path_deviation_is_the_splines_distance_from_the_cartesian_path():
    """path_deviation_m compared the spline halfway between IK samples with the chord of the two samples, not with
    the path: on the default cell's arc and blends it reported 0.41 mm for a spline that stays within 0.04 mm of
    the path (the chord's sagitta). Oracle: Pinocchio's TCP on 40 points per IK interval against the cell's
    Cartesian path sampled 20 001 times (1e-5 of its length apart, at the same arc length). The orientation's
    deviation was not reported at all (path_rotation_deviation_deg now)."""
    cell, box = _first_box()
    slot = box.moves[0].slot
    dense = cartesian_path(cell, slot, samples=20001)
    for m in box.moves:                               # loaded, and return (the same path backwards)
        u = np.linspace(0.0, 1.0, 40 * (len(m.cart.u) - 1) + 1)
        tcp = _pin_tcp(cell, m.path.q(u))
        along = u if m.kind == "loaded" else 1.0 - u
        path = np.stack([np.interp(along, dense.u, dense.poses[:, k, 3]) for k in range(3)], axis=1)
        true_max = float(np.linalg.norm(tcp[:, :3, 3] - path, axis=1).max())
        assert true_max < 1e-4, (m.kind, true_max)               # 80 samples: the spline keeps within 0.1 mm
        assert 0.8 * true_max <= m.path_error <= true_max * (1 + 1e-6) + 1e-9, (m.kind, m.path_error, true_max)
        # the tool's turn away from the path's orientation (the dense pose nearest in arc length: 1e-5 apart)
        near = dense.poses[np.rint(along * (len(dense.u) - 1)).astype(int), :3, :3]
        phi = np.arccos(np.clip(0.5 * (np.einsum("kij,kij->k", tcp[:, :3, :3], near) - 1.0), -1.0, 1.0))
        assert 1e-6 < phi.max() < math.radians(0.05)
        assert 0.8 * phi.max() <= m.path_rotation_error <= 1.05 * phi.max(), (m.kind, m.path_rotation_error, phi.max())
        assert m.summary(cell.robot)["path_rotation_deviation_deg"] == math.degrees(m.path_rotation_error)


def test_the_midpoint_poses_lie_on_the_path_halfway_between_samples():
    """`CartesianPath.mid`: the path's pose at the arc length halfway between two samples (tool down, the yaw the
    path has there) — the odd samples of the same path sampled twice as densely."""
    cell, box = _first_box()
    slot = box.moves[0].slot
    M = len(box.moves[0].cart.u)
    cart, twice = cartesian_path(cell, slot), cartesian_path(cell, slot, samples=2 * M - 1)
    np.testing.assert_allclose(cart.mid, twice.poses[1::2], atol=1e-9)


# ------------------------------------------------------------------------------ pose targets
ROBOT = load_robot("iiwa7")
Q0 = np.array([0.0, 0.5, 0.0, -1.2, 0.0, 0.8, 0.0])
T = frame_pose(ROBOT, Q0 + 0.1)
JUNK = np.vstack([T[:3], [1.0, 2.0, 3.0, 4.0]])


@pytest.mark.parametrize("pose", [T.T, JUNK], ids=["transposed", "last-row"])
@pytest.mark.parametrize("solver", ["solve_ik", "solve_ik_dls", "track_path", "pinv", "multistart", "batch",
                                    "track_paths"])
def test_a_pose_whose_last_row_is_not_0001_is_refused(solver, pose):
    """A transposed pose (position in the last row, as row-vector conventions write it) was solved as a target at
    the base origin with the rotation transposed: 'stalled' 0.12 m away, as if out of reach; a junk last row was
    ignored. Now one line naming the argument."""
    call = {"solve_ik": lambda: solve_ik(ROBOT, pose, Q0),
            "solve_ik_dls": lambda: solve_ik_dls(ROBOT, pose, Q0),
            "track_path": lambda: track_path(ROBOT, np.array([T, pose]), Q0),
            "pinv": lambda: track_path(ROBOT, np.array([T, pose]), Q0, method="pinv", dt=1e-3),
            "multistart": lambda: solve_ik_multistart(ROBOT, [pose], [[Q0]]),
            "batch": lambda: solve_ik_batch(ROBOT, [T, pose], [Q0, Q0]),
            "track_paths": lambda: track_paths(ROBOT, [np.array([T, pose])], Q0)}[solver]
    with pytest.raises(IKError, match=r"\]: the last row of a pose \(4, 4\) must be \[0, 0, 0, 1\]|^target: the last"
                                      r" row") as e:
        call()
    assert "\n" not in str(e.value) and "transposed" in str(e.value)


def test_a_proper_pose_is_still_reached():
    res = solve_ik(ROBOT, T, Q0)
    assert res.success and res.pos_err <= 1e-6


# ------------------------------------------------------------------------------ units of the cell's limits
def _cell_with(tmp_path, line):
    f = tmp_path / "cell.toml"
    f.write_text(DEFAULT_CELL.read_text().replace("[boxes.heavy]", f"[limits]\n{line}\n\n[boxes.heavy]"))
    return f


def test_a_tool_speed_given_in_mm_per_s_is_refused_naming_the_unit(tmp_path):
    """tool_speed_max = 250 (meant as 250 mm/s near people) was read as 250 m/s: a limit that never acts, the
    cell planned at full speed without a word."""
    with pytest.raises(InputError) as e:
        load_cell(_cell_with(tmp_path, "tool_speed_max = 250"), check_reach=False)
    msg = str(e.value)
    assert "cell.toml: limits.tool_speed_max: 250 m/s" in msg and "mm/s" in msg and "\n" not in msg
    for ok in (0.25, 10):
        cell = load_cell(_cell_with(tmp_path, f"tool_speed_max = {ok}"), check_reach=False)
        assert math.isclose(cell.tool_speed_max, ok)


def test_a_preferred_posture_beyond_a_limit_names_the_joint_its_value_and_limits_in_degrees(tmp_path):
    """'joint iiwa_joint_4 outside its limits' gave neither the value read nor the limits, nor their unit (a posture
    written in radians or with a sign slip could not be told from the message). Limits: the model's, in degrees."""
    f = tmp_path / "cell.toml"
    f.write_text(DEFAULT_CELL.read_text().replace("# preferred_posture_deg = [...]",
                                                  "preferred_posture_deg = [0, 30, 0, -130, 0, 60, 0]"))
    with pytest.raises(InputError) as e:
        load_cell(f, check_reach=False)
    robot = load_robot("iiwa7")
    lo, hi = math.degrees(robot.q_min[3]), math.degrees(robot.q_max[3])
    assert str(e.value).endswith(f"cell.toml: cell.preferred_posture_deg: joint {robot.joint_names[3]} at -130° is "
                                 f"outside its limits {lo:g}° to {hi:g}°"), str(e.value)
