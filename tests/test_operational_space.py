"""Chang & Khatib (2000): operational-space inertia of branching robots with m operational points,
against (J M⁻¹ Jᵀ)⁻¹ from Pinocchio (crba, frame Jacobians in LOCAL_WORLD_ALIGNED: linear rows first)."""

from __future__ import annotations

import numpy as np
import pytest

import dynamics
from dynamics.model import ModelError
from dynamics.operational_space_inertia import operational_space_inertia, operational_space_inertia_inverse
from fixtures import random_tree_robot

pin = pytest.importorskip("pinocchio")
from test_trees import erd_path, load_urdf_tree, robot_from_pinocchio  # noqa: E402


def pin_inverse_osi(pmodel, q, frames):
    """J M⁻¹ Jᵀ per sample from Pinocchio, J the stacked LOCAL_WORLD_ALIGNED frame Jacobians."""
    data = pmodel.createData()
    out = []
    for qs in np.atleast_2d(q):
        M = pin.crba(pmodel, data, qs)
        M = np.triu(M) + np.triu(M, 1).T
        pin.computeJointJacobians(pmodel, data, qs)
        pin.updateFramePlacements(pmodel, data)
        J = np.vstack([pin.getFrameJacobian(pmodel, data, pmodel.getFrameId(f), pin.LOCAL_WORLD_ALIGNED)
                       for f in frames])
        out.append(J @ np.linalg.solve(M, J.T))
    return np.array(out)


@pytest.fixture(scope="module")
def panda():
    """Panda URDF with both finger joints free: a tree (the fingers branch at the hand) with
    prismatic joints, n = 9."""
    pmodel = pin.buildModelFromUrdf(erd_path("panda_description/urdf/panda.urdf"))
    return robot_from_pinocchio(pmodel, "panda9"), pmodel


def _q(robot, N=4, seed=0):
    rng = np.random.default_rng(seed)
    lo = np.maximum(robot.q_min, -2.5)
    hi = np.minimum(robot.q_max, 2.5)
    return rng.uniform(lo, hi, (N, robot.n))


def test_panda_single_point_lambda(panda):
    robot, pmodel = panda
    q = _q(robot)
    ref = np.linalg.inv(pin_inverse_osi(pmodel, q, ["panda_hand_tcp"]))
    Lam = operational_space_inertia(robot, q, ["panda_hand_tcp"])
    assert Lam.shape == (4, 6, 6)
    assert np.abs(Lam - ref).max() <= 1e-9 * np.abs(ref).max()
    assert np.allclose(operational_space_inertia(robot, q[1], "panda_hand_tcp"), Lam[1], rtol=1e-12, atol=1e-12)


def test_panda_several_points_inverse(panda):
    """m = 3 points on both finger branches and the elbow: 18 > 9 rows, so Λ is singular and only
    Λ⁻¹ exists."""
    robot, pmodel = panda
    q = _q(robot, seed=1)
    frames = ["panda_leftfinger", "panda_rightfinger", "panda_link4"]
    ref = pin_inverse_osi(pmodel, q, frames)
    Linv = operational_space_inertia_inverse(robot, q, frames)
    assert Linv.shape == (4, 18, 18)
    assert np.abs(Linv - ref).max() <= 1e-9 * np.abs(ref).max()
    with pytest.raises(ModelError, match="singular"):
        operational_space_inertia(robot, q, frames)


def test_quadruped_feet_inverse():
    """Solo-12 with a fixed base, all four feet (m = 4, 24 rows > 12 joints): Λ⁻¹ only."""
    robot, pmodel = load_urdf_tree("solo12")
    feet = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
    if not all(f in robot.frame_names + robot.link_names for f in feet):
        robot = robot_from_pinocchio(pmodel, "solo12")
    q = _q(robot, seed=2)
    ref = pin_inverse_osi(pmodel, q, feet)
    Linv = operational_space_inertia_inverse(robot, q, feet)
    assert np.abs(Linv - ref).max() <= 1e-9 * np.abs(ref).max()
    # feet on different legs are decoupled when the base is fixed
    assert np.abs(Linv[:, :6, 6:]).max() <= 1e-12 * np.abs(ref).max()


def two_arm_tree():
    """A torso (3 joints) carrying two 6-joint arms: n = 15, two hands (m = 2, 12 rows ≤ 15)."""
    parents = [-1, 0, 1, 2, 3, 4, 5, 6, 7, 2, 9, 10, 11, 12, 13]
    base = random_tree_robot(parents, seed=2, prismatic=0.2, name="two-arms")
    T = np.eye(4)
    T[:3, 3] = [0.1, -0.2, 0.05]
    return dynamics.RobotModel.create(
        name="two-arms", parents=base.parents, joint_types=base.joint_types,
        placement_rotations=base.placement_rotations, placement_translations=base.placement_translations,
        axes=base.axes, masses=base.masses, coms=base.coms, inertias=base.inertias,
        frames={"left_hand": (8, T), "right_hand": (14, T)})


def test_two_arm_tree_lambda_against_pinocchio():
    from fixtures import to_pinocchio
    robot = two_arm_tree()
    pmodel = to_pinocchio(robot)
    for name in robot.frame_names:
        body, T = robot.frame(name)
        pmodel.addFrame(pin.Frame(name, body + 1, pin.SE3(T[:3, :3], T[:3, 3]), pin.FrameType.OP_FRAME))
    q = _q(robot, seed=3)
    frames = ["left_hand", "right_hand"]
    ref_inv = pin_inverse_osi(pmodel, q, frames)
    assert np.abs(operational_space_inertia_inverse(robot, q, frames) - ref_inv).max() <= 1e-9 * np.abs(ref_inv).max()
    ref = np.linalg.inv(ref_inv)
    Lam = operational_space_inertia(robot, q, frames)
    assert Lam.shape == (4, 12, 12)
    assert np.abs(Lam - ref).max() <= 1e-7 * np.abs(ref).max()
    # and against our own J M⁻¹ Jᵀ, with an interior body as a third point (Λ⁻¹ only: 18 > 15)
    frames3 = frames + ["link3"]
    J = np.concatenate([dynamics.frame_jacobian(robot, q, f) for f in frames3], axis=1)
    ours = J @ np.linalg.solve(dynamics.mass_matrix(robot, q), np.swapaxes(J, 1, 2))
    assert np.abs(operational_space_inertia_inverse(robot, q, frames3) - ours).max() <= 1e-10 * np.abs(ours).max()


def test_default_frame_and_errors(panda):
    robot = two_arm_tree().replace(tool_frame="left_hand")
    q = _q(robot, N=1)[0]
    assert np.allclose(operational_space_inertia(robot, q), operational_space_inertia(robot, q, ["left_hand"]))
    with pytest.raises(ModelError, match="unknown frame"):
        operational_space_inertia_inverse(robot, q, ["nope"])
    massless = robot.replace(masses=np.where(np.arange(robot.n) == 14, 0.0, robot.masses),
                             inertias=np.where((np.arange(robot.n) == 14)[:, None, None], 0.0, robot.inertias))
    with pytest.raises(ModelError, match="moves no mass"):
        operational_space_inertia_inverse(massless, q, ["right_hand"])


def test_rotor_armature_enters_the_operational_space_inertia(panda):
    """With a rotor inertia per joint (Pinocchio's `armature` on its own model), Λ⁻¹ = J M⁻¹ Jᵀ still
    holds: the recursion adds the armature to each joint's articulated inertia D_i."""
    robot, pmodel = panda
    arm = np.linspace(0.05, 0.4, robot.n)
    geared = robot.replace(armature=arm)
    pm = pmodel.copy()
    a = np.zeros(pm.nv)
    for i, name in enumerate(robot.joint_names):
        a[pm.joints[pm.getJointId(name)].idx_v] = arm[i]
    pm.armature = a
    q = _q(robot, seed=3)
    frames = ["panda_hand_tcp", "panda_link4"]
    ref = pin_inverse_osi(pm, q, frames)
    ours = operational_space_inertia_inverse(geared, q, frames)
    assert np.abs(ours - ref).max() <= 1e-9 * np.abs(ref).max()
    assert np.abs(ours - operational_space_inertia_inverse(robot, q, frames)).max() > 1e-3 * np.abs(ref).max()


def test_operational_frames_named_twice_or_on_the_base_are_refused_in_one_line():
    """Before: a repeated frame was accepted, and 20 000 repeats asked numpy for 215 GiB (MemoryError); the
    base link was reported as an unknown frame; bytes were read as a list of ints ("got 102")."""
    robot, q = dynamics.load_robot("panda"), np.full(7, 0.3)
    for frames, message in [(["flange", "panda_link4", "flange"], "frames: 'flange' is given twice (entries 0 and 2)"),
                            (["flange"] * 20000, "frames: 'flange' is given twice (entries 0 and 1)"),
                            (["panda_link0"], "frames: 'panda_link0' is the fixed base of robot 'panda'"),
                            (b"flange", "frames: expected a frame name or a list of frame names, got b'flange'")]:
        for function in (operational_space_inertia_inverse, operational_space_inertia):
            with pytest.raises(dynamics.ModelError) as err:
                function(robot, np.zeros((2, 7)) + q, frames)
            assert str(err.value).startswith(message) and "\n" not in str(err.value)



def _millimetre(big):
    """`big` shrunk 1000× in length (frames and prismatic strokes too) and 10⁶× in mass."""
    scale = np.r_[1, 1, 1, 1e-3]
    return big.replace(placement_translations=big.placement_translations * 1e-3, coms=big.coms * 1e-3,
                       masses=big.masses * 1e-6, inertias=big.inertias * 1e-12,
                       frame_transforms=big.frame_transforms * scale + np.eye(4)[3][:, None] * (1 - scale))


def _small_cases():
    for big, frame in ((dynamics.load_robot("iiwa7"), "flange"), (two_arm_tree(), "left_hand")):
        small = _millimetre(big)
        q = _q(small, seed=5)
        q[:, [t == "prismatic" for t in small.joint_types]] *= 1e-3          # millimetre strokes
        yield small, q, frame


def test_a_millimetre_robot_is_not_refused_as_moving_no_mass():
    """A micro-manipulator: the iiwa 7 and the two-armed tree (prismatic joints too) shrunk 1000× in length and
    10⁶× in mass (links of 1e-6 … 4e-6 kg, wrist inertias ~1e-14 kg·m²). Before, a joint's articulated inertia D
    was compared with 1e-12 · max(1, |I^A|), an absolute 1e-12 kg·m², so the wrist was refused as "moves no mass"
    (and with it the Cartesian limits, which call this). Now Λ⁻¹ matches Pinocchio's J M⁻¹ Jᵀ as at full size."""
    from fixtures import to_pinocchio
    for small, q, frame in _small_cases():
        ref = pin_inverse_osi(to_pinocchio(small), q, [frame])
        ours = operational_space_inertia_inverse(small, q, [frame])
        assert np.abs(ours - ref).max() <= 1e-9 * np.abs(ref).max()


def test_a_millimetre_robot_has_an_operational_space_inertia():
    """The same shrunk robots: Λ⁻¹'s angular rows are 1/(kg·m²) and its linear ones 1/kg, so in metres a robot
    1000× smaller has eigenvalue ratios 10⁶× smaller (the iiwa 7 at these q: 1e-11 … 1e-13, full size 1e-5 …
    1e-7), and Λ was refused as singular at rcond = 1e-12. The test is now on Λ⁻¹ scaled to unit diagonal,
    which does not depend on the unit; Λ inverts Pinocchio's J M⁻¹ Jᵀ, and at full size still equals the old Λ."""
    from fixtures import to_pinocchio
    for small, q, frame in _small_cases():
        ref = pin_inverse_osi(to_pinocchio(small), q, [frame])
        lam, expected = operational_space_inertia(small, q, [frame]), np.linalg.inv(ref)
        size = np.sqrt(np.einsum("nii->ni", expected))                    # |Λ_ab| ≤ √(Λ_aa Λ_bb), in any unit
        assert (np.abs(lam - expected) / (size[:, :, None] * size[:, None, :])).max() <= 1e-7
    robot, q = dynamics.load_robot("iiwa7"), _q(dynamics.load_robot("iiwa7"), seed=5)
    Linv = operational_space_inertia_inverse(robot, q, "flange")
    assert np.abs(operational_space_inertia(robot, q) - np.linalg.inv(Linv)).max() <= 1e-9 * np.abs(np.linalg.inv(Linv)).max()
    assert np.abs(np.linalg.svd(Linv[0], compute_uv=False)).min() > 0       # (a regular configuration)
    with pytest.raises(ModelError, match="is singular"):                     # elbow stretched: still refused
        operational_space_inertia(robot, np.zeros(7))
