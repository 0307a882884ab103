"""The default tool frame of a URDF robot whose last joints are locked: the tool of the robot with them free
(UR's tool0, the Panda's panda_hand_tcp), at the same place — not the bare link of the last moving body."""

import numpy as np
import pytest

import dynamics as dyn
from dynamics.urdf import from_urdf
from fixtures import erd_path

CASES = [("ur_description/urdf/ur5_robot.urdf", {"wrist_3_joint": 0.4}, "tool0"),
         ("ur_description/urdf/ur5_robot.urdf", {"wrist_2_joint": -0.3, "wrist_3_joint": 0.4}, "tool0"),
         ("panda_description/urdf/panda.urdf", {"panda_joint7": 0.5, "panda_finger_joint1": 0.02}, "panda_hand_tcp"),
         ("xarm_description/urdf/xarm7.urdf", {"joint7": 0.2}, "link_eef")]


@pytest.mark.parametrize("rel, locked, tool", CASES, ids=["ur5-wrist3", "ur5-wrist23", "panda-7", "xarm7-7"])
def test_locking_the_last_joints_keeps_the_tool(rel, locked, tool):
    """These came out as wrist_2_link / wrist_1_link, panda_link6 and link6: a payload on the default frame sat
    0.1-0.2 m from the flange. Fingers locked beyond the tool stay passed over (the Panda's)."""
    path = erd_path(f"robots/{rel}")
    if path is None:
        pytest.skip("example-robot-data not installed")
    free = from_urdf(path)
    robot = from_urdf(path, locked_joints=locked)
    assert free.tool_frame == tool and robot.tool_frame == tool
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = rng.uniform(-1.0, 1.0, robot.n)
        full = dict(zip(robot.joint_names, q)) | locked
        qf = np.array([full[j] for j in free.joint_names])          # (the Panda's second finger follows the first)
        assert np.abs(dyn.frame_pose(robot, q, tool) - dyn.frame_pose(free, qf, tool)).max() < 1e-12


@pytest.mark.parametrize("rel", ["panda_description/urdf/panda.urdf", "baxter_description/urdf/baxter.urdf",
                                 "pr2_description/urdf/pr2.urdf", "tiago_pro_description/robots/tiago_pro.urdf"])
def test_the_tool_does_not_depend_on_the_mimic_mode(rel):
    """Loaded with mimic="independent" the fingers at the end were not passed over: the Panda's tool was
    panda_rightfinger (a payload on a finger), Baxter's l_gripper_r_finger_tip, PR2's l_gripper_r_parallel_link.
    Over example-robot-data the two modes now agree for all 64 files (58 before)."""
    import warnings
    path = erd_path(f"robots/{rel}")
    if path is None:
        pytest.skip("example-robot-data not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                     # the as-found corrections of PR2 (tested elsewhere)
        coupled, free = from_urdf(path), from_urdf(path, mimic="independent")
    assert free.tool_frame == coupled.tool_frame
    q = np.zeros(free.n)
    qc = np.zeros(coupled.n)
    assert np.abs(dyn.frame_pose(free, q, free.tool_frame) - dyn.frame_pose(coupled, qc, coupled.tool_frame)).max() < 1e-12


@pytest.mark.parametrize("rel", ["kinova_description/robots/kinova.urdf",
                                 "anymal_b_simple_description/robots/anymal-kinova.urdf"])
def test_the_kinova_tool_is_its_end_effector_not_a_finger_tip(rel):
    """The Kinova's last link carries j2s6s200_end_effector and two fixed fingers with their tips; the default
    was the last of them, j2s6s200_link_finger_tip_2 (issue 12), 4 cm off the axis. It is placed where
    Pinocchio places that frame."""
    pin = pytest.importorskip("pinocchio")
    path = erd_path(f"robots/{rel}")
    if path is None:
        pytest.skip("example-robot-data not installed")
    robot = from_urdf(path)
    assert robot.tool_frame == "j2s6s200_end_effector"
    model = pin.buildModelFromUrdf(path)
    data = model.createData()
    q = np.random.default_rng(5).uniform(-1.0, 1.0, robot.n)
    qp = pin.neutral(model)
    for name, value in zip(robot.joint_names, q):
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 2:                                     # continuous joints: (cos, sin) in Pinocchio
            qp[joint.idx_q:joint.idx_q + 2] = np.cos(value), np.sin(value)
        else:
            qp[joint.idx_q] = value
    pin.framesForwardKinematics(model, data, qp)
    expected = data.oMf[model.getFrameId("j2s6s200_end_effector")].homogeneous
    assert np.abs(dyn.frame_pose(robot, q, robot.tool_frame) - expected).max() < 1e-12


@pytest.mark.parametrize("rel, warned", [("talos_data/robots/talos_reduced.urdf", True),
                                         ("romeo_description/urdf/romeo_small.urdf", True),
                                         ("panda_description/urdf/panda.urdf", False),      # fingers: no branches
                                         ("kinova_description/robots/kinova.urdf", False),
                                         ("ur_description/urdf/ur5_robot.urdf", False)])
def test_a_branching_robot_says_which_tool_frame_it_took(rel, warned):
    """A tree's default tool frame is its last body's (Talos's right_sole_link, Romeo's r_gripper): a payload or
    an IK target without a frame went there silently. Loading it now warns naming the ends and the frame, unless
    tool_frame= is given; a gripper's fingers are not branches."""
    import warnings
    path = erd_path(f"robots/{rel}")
    if path is None:
        pytest.skip("example-robot-data not installed")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = from_urdf(path)
        chosen = from_urdf(path, tool_frame=robot.link_names[0])
    notes = [str(w.message) for w in caught if "branches" in str(w.message)]
    assert len(notes) == int(warned) and chosen.tool_frame == robot.link_names[0]
    if warned:
        assert f"its default tool frame is '{robot.tool_frame}'" in notes[0] and "tool_frame=" in notes[0]
        assert notes[0].startswith(path) and "\n" not in notes[0]
