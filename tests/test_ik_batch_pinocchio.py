"""The batch IK functions against an independent oracle: Pinocchio's forward kinematics of the joint positions
they return reaches the targets (made by Pinocchio's FK of random configurations) within the tolerance they
report, the errors they report are Pinocchio's, the joint limits hold, and every result is the single-pose
solver's (`solve_ik`, `track_path`) — on built-in robots and on the Panda URDF of example-robot-data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pin = pytest.importorskip("pinocchio")

from dynamics.ik.batch import solve_ik_batch, track_paths  # noqa: E402
from dynamics.inverse_kinematics import solve_ik, track_path  # noqa: E402
from dynamics.robots import load_robot  # noqa: E402
from fixtures import PANDA_FINGERS, to_pinocchio  # noqa: E402

BUILT_IN = {name: load_robot(name) for name in ("iiwa7", "panda", "ur5e", "puma560")}


class PinFK:
    """Pinocchio's pose of the tool frame, joints matched by name (other joints at 0)."""

    def __init__(self, robot, model):
        self.robot, self.model, self.data = robot, model, model.createData()
        self.idx = [model.joints[model.getJointId(name)].idx_q for name in robot.joint_names]
        self.fid = model.getFrameId(robot.tool_frame)

    def __call__(self, q) -> np.ndarray:
        qp = pin.neutral(self.model)
        qp[self.idx] = q
        pin.framesForwardKinematics(self.model, self.data, qp)
        return self.data.oMf[self.fid].homogeneous.copy()

    def errors(self, q, T) -> tuple[float, float]:
        M = self(q)
        return float(np.linalg.norm(T[:3, 3] - M[:3, 3])), float(np.linalg.norm(pin.log3(T[:3, :3].T @ M[:3, :3])))


FK = {name: PinFK(robot, to_pinocchio(robot)) for name, robot in BUILT_IN.items()}


def _configurations(robot, rng, k):
    return rng.uniform(robot.q_min + 0.1 * (robot.q_max - robot.q_min), robot.q_max - 0.1 * (robot.q_max - robot.q_min),
                       (k, robot.n))


def _check(fk, robot, T, q, pos_err, rot_err, success, tol_pos, tol_rot):
    pe, re = fk.errors(q, T)
    assert abs(pe - pos_err) <= 1e-12 and abs(re - rot_err) <= 1e-12           # the errors reported are true
    assert not success or (pe <= tol_pos + 1e-15 and re <= tol_rot + 1e-15)
    assert np.all(q >= robot.q_min) and np.all(q <= robot.q_max)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(BUILT_IN)), seed=st.integers(0, 2**32 - 1), spread=st.floats(0.05, 0.6),
       step=st.sampled_from(["exact", "paper"]))
def test_solve_ik_batch_reaches_pinocchio_targets_as_solve_ik_does(name, seed, spread, step):
    robot, fk = BUILT_IN[name], FK[name]
    rng = np.random.default_rng(seed)
    Q = _configurations(robot, rng, 5)
    targets = [fk(q) for q in Q]
    starts = np.clip(Q + rng.normal(0.0, spread, Q.shape), robot.q_min, robot.q_max)
    starts[0] = Q[0]                                       # one start already there: 0 sweeps
    many = solve_ik_batch(robot, targets, starts, step=step)
    assert many[0].success and many[0].sweeps == 0 and many[0].newton_steps == 0
    assert sum(r.success for r in many) >= 3               # reachable targets from nearby starts
    for T, q0, b in zip(targets, starts, many):
        a = solve_ik(robot, T, q0, step=step)
        assert np.array_equal(a.q, b.q) and (a.success, a.pos_err, a.rot_err, a.sweeps, a.newton_steps, a.status) \
            == (b.success, b.pos_err, b.rot_err, b.sweeps, b.newton_steps, b.status)
        _check(fk, robot, T, b.q, b.pos_err, b.rot_err, b.success, 1e-6, 1e-6)


def test_track_paths_on_the_panda_urdf_reach_pinocchio_poses_as_track_path_does(panda_urdf):
    """Three paths of different lengths (Pinocchio's FK along straight joint-space segments) from the same
    start, with the prediction and the penalty and without: the tracked samples reach their poses to the
    tracking tolerance (√h ≤ 1e-5 m, so 1e-5 m and 5e-5 rad) by Pinocchio's FK."""
    from dynamics.model import RobotModel
    robot = RobotModel.from_urdf(panda_urdf, locked_joints=PANDA_FINGERS)
    fk = PinFK(robot, pin.buildModelFromUrdf(panda_urdf))
    rng = np.random.default_rng(11)
    qa = _configurations(robot, rng, 1)[0]
    paths = []
    for i, n in enumerate((12, 20, 7)):
        qb = np.clip(qa + rng.normal(0.0, 0.25, robot.n), robot.q_min, robot.q_max)
        paths.append(np.array([fk(qa + s * (qb - qa)) for s in np.linspace(0.0, 1.0, n)]))
    for kw in (dict(), dict(predict=True, penalty=True)):
        many = track_paths(robot, paths, qa, **kw)
        for P, t in zip(paths, many):
            one = track_path(robot, P, qa, **kw)
            for f in ("q", "pos_err", "rot_err", "sweeps", "success", "newton_steps"):
                assert np.array_equal(getattr(one, f), getattr(t, f)), f
            assert t.all_success
            for T, q, pe, re, ok in zip(P, t.q, t.pos_err, t.rot_err, t.success):
                _check(fk, robot, T, q, pe, re, ok, 1e-5, 1e-5 / 0.2)
