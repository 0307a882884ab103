"""Planning one arm of a branching robot (Talos of example-robot-data, legs and the other arm locked, the torso
held by its motors): the planned torques against Pinocchio's RNEA on the full, unreduced model with the locked
joints at their positions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dynamics
from fixtures import erd_path
from toppra_app import JointPath, plan_time_optimal

pin = pytest.importorskip("pinocchio")

LEGS = [f"leg_{side}_{k}_joint" for side in ("left", "right") for k in range(1, 7)]
LOCKED = {**{j: 0.0 for j in LEGS}, **{f"arm_right_{k}_joint": 0.0 for k in range(1, 8)}, "arm_right_4_joint": -0.5,
          "gripper_right_joint": 0.0, "gripper_left_joint": 0.0, "head_1_joint": 0.2, "head_2_joint": 0.0}


@pytest.fixture(scope="module")
def talos():
    p = erd_path("robots/talos_data/robots/talos_reduced.urdf")
    if p is None:
        pytest.skip("example-robot-data talos_reduced.urdf not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # (its as-found inertias load with a URDFWarning)
        robot = dynamics.RobotModel.from_urdf(p, locked_joints=LOCKED, tool_frame="gripper_left_base_link")
    return p, robot


def pinocchio_torques(path: str, robot, q, qd, qdd, model=None) -> np.ndarray:
    """RNEA of the full model (every joint of the file; `model`: that model, changed), the locked joints held at
    their positions."""
    model = pin.buildModelFromUrdf(path) if model is None else model
    data = model.createData()
    cols = [model.idx_vs[model.getJointId(name)] for name in robot.joint_names]
    out = []
    for k in range(len(q)):
        Q = pin.neutral(model)
        for name, value in LOCKED.items():
            Q[model.idx_qs[model.getJointId(name)]] = value
        Q[cols] = q[k]
        V, A = np.zeros(model.nv), np.zeros(model.nv)
        V[cols], A[cols] = qd[k], qdd[k]
        out.append(pin.rnea(model, data, Q, V, A)[cols])
    return np.array(out)


def test_a_held_joint_of_recorded_waypoints_stays_at_rest_without_friction(talos):
    """A recorded left-arm motion (noisy, fitted with tolerance=) with the torso held at 0.12 and 0.32 rad. The
    least-squares fit gave the held torso joints q′ ~ 1e-15 of either sign, so the planner added their Coulomb
    friction (1 N·m in Talos' URDF) switching sign along the path: torques up to 1 N·m off for joints at rest.
    Now a held column stays exactly constant, as interpolated waypoints do, and the planned torques are Pinocchio's
    rigid-body torques plus the friction of the moving joints only."""
    path_file, robot = talos
    names = list(robot.joint_names)
    s = np.linspace(0.0, 1.0, 60)
    W = np.zeros((s.size, robot.n))
    W[:, names.index("torso_1_joint")] = 0.1234567
    W[:, names.index("torso_2_joint")] = 0.3217
    W[:, names.index("arm_left_1_joint")] = 0.4 * s
    W[:, names.index("arm_left_2_joint")] = 0.2 + 0.6 * s ** 2
    W[:, names.index("arm_left_4_joint")] = -0.5 - s
    moving = np.isin(np.arange(robot.n), [names.index(f"arm_left_{k}_joint") for k in (1, 2, 4)])
    W[:, moving] += np.random.default_rng(0).normal(scale=1e-4, size=(s.size, moving.sum()))
    path = JointPath.from_waypoints(W, tolerance=5e-4)
    assert len(path.knots) < 20                                     # fitted, not interpolated
    theta = np.linspace(0.0, 1.0, 2001)
    assert (path.dq(theta)[:, ~moving] == 0).all() and (path.ddq(theta)[:, ~moving] == 0).all()
    assert (path.q(theta)[:, ~moving] == W[0, ~moving]).all()
    assert np.abs(path.q(s) - W).max() <= 5e-4

    plan = plan_time_optimal(robot, path)
    t, q, qd, qdd, tau = plan.sample(5e-3)
    rigid = pinocchio_torques(path_file, robot, q, qd, qdd)
    friction = np.asarray(robot.coulomb) * np.sign(qd) + np.asarray(robot.viscous) * qd
    inner = slice(1, -1)                                            # (at rest at the ends: friction of sign q′)
    scale = np.abs(tau).max()
    assert np.abs(tau[inner] - rigid[inner] - friction[inner]).max() <= 1e-9 * scale
    assert np.abs(tau[:, ~moving] - rigid[:, ~moving]).max() <= 1e-9 * scale


def _csv(path, header, rows) -> str:
    path.write_text(",".join(header) + "\n" + "\n".join(",".join(f"{v:g}" for v in r) for r in rows) + "\n")
    return str(path)


def test_a_column_of_a_locked_or_mimic_joint_says_why_it_is_not_a_joint(tmp_path, capsys, panda_urdf, talos):
    """Waypoints exported for every joint of the URDF (MoveIt, a recorder) name joints the model does not plan.
    A locked joint's column was 'is not a joint of the robot' — of a joint in the file the user had just locked on
    the same command line — and so was a coupled <mimic> finger's. Now the line says which it is."""
    from toppra_app.cli import main
    path_file, robot = talos
    names = list(robot.joint_names) + ["arm_right_1_joint"]
    rows = [np.zeros(len(names)), np.r_[np.zeros(2), 0.3, 0.5, np.zeros(robot.n - 4), 0.0]]
    f = _csv(tmp_path / "talos.csv", names, rows)
    locks = [a for name, value in LOCKED.items() for a in ("--lock", f"{name}={value}")]
    assert main(["plan", f, "--robot", path_file, *locks, "--out", str(tmp_path / "o"), "--no-plots",
                 "--no-report"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "column 'arm_right_1_joint' is locked (--lock arm_right_1_joint=0): leave it out" in err
    assert "not a joint" not in err

    panda = [f"panda_joint{k}" for k in range(1, 8)] + ["panda_finger_joint1", "panda_finger_joint2"]
    q = [0, -0.3, 0, -2.0, 0, 1.6, 0.8, 0.02, 0.02]
    f = _csv(tmp_path / "panda.csv", panda, [q, np.add(q, [0.3] + [0] * 8)])
    assert main(["plan", f, "--robot", panda_urdf, "--out", str(tmp_path / "p"), "--no-plots", "--no-report"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and ("column 'panda_finger_joint2' is a <mimic> joint following 'panda_finger_joint1' "
                                "(--mimic independent makes it a joint of its own): leave it out") in err
    assert main(["plan", f, "--robot", panda_urdf, "--mimic", "independent", "--out", str(tmp_path / "p"),
                 "--no-plots", "--no-report"]) == 0


def test_a_payload_on_one_of_two_hands_against_pinocchio(talos):
    """A 1.5 kg box held off-centre in the left gripper (payload_frame; the tool frame default would be elsewhere
    on a tree): the planned torques are the full model's with the box added to the left wrist body in Pinocchio."""
    path_file, robot = talos
    robot = robot.replace(tool_frame="gripper_right_base_link")              # the payload is not at the tool
    names = list(robot.joint_names)
    w0, w1 = np.zeros(robot.n), np.zeros(robot.n)
    for name, a, b in (("torso_1_joint", 0.0, 0.2), ("arm_left_2_joint", 0.3, 0.9), ("arm_left_4_joint", -0.6, -1.4)):
        w0[names.index(name)], w1[names.index(name)] = a, b
    box = dynamics.RigidBodyInertia.box(1.5, (0.1, 0.08, 0.06), com_offset=(0.02, 0.0, 0.05))
    plan = plan_time_optimal(robot.with_limits(tau_max=np.asarray(robot.tau_max) * 3), JointPath.from_waypoints([w0, w1]),
                             payload=box, payload_frame="gripper_left_base_link")
    t, q, qd, qdd, tau = plan.sample(1e-2)
    model = pin.buildModelFromUrdf(path_file)
    frame = model.frames[model.getFrameId("gripper_left_base_link")]
    model.inertias[frame.parentJoint] = model.inertias[frame.parentJoint] + frame.placement.act(
        pin.Inertia(box.mass, np.asarray(box.com), np.asarray(box.inertia)))
    friction = np.asarray(robot.coulomb) * np.sign(w1 - w0) + np.asarray(robot.viscous) * qd
    assert np.abs(tau - pinocchio_torques(path_file, robot, q, qd, qdd, model) - friction).max() <= 1e-9 * np.abs(tau).max()
