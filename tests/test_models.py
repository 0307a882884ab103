"""Model construction: validation errors, immutability, the DH/MDH builders and the built-in robots."""

import numpy as np
import pytest

import dynamics as dyn
from dynamics import ModelError, RobotModel
from dynamics.builders import (as_inertias, dh_chain, from_dh, from_mdh, inertia_matrix, mdh_chain,
                               rotx, rpy_matrix)
from dynamics.robots import BUILTIN_ROBOTS, PUMA560_GEAR, PUMA560_JM, load_robot
from fixtures import assert_rel, random_inertia, random_states

PI = np.pi


def _args(**changes):
    """Keyword arguments of a valid 2-joint chain, with some replaced."""
    kw = dict(name="two", parents=[-1, 0], joint_types=["revolute", "prismatic"],
              placement_rotations=[np.eye(3)] * 2, placement_translations=[(0, 0, 0.3), (0.2, 0, 0)],
              axes=[(0, 0, 1), (1, 0, 0)], masses=[1.0, 2.0], coms=[(0.1, 0, 0), (0, 0, 0.05)],
              inertias=[np.diag([0.01, 0.02, 0.02])] * 2, frames={"tool": (1, np.eye(4))}, tool_frame="tool")
    kw.update(changes)
    return kw


def _one_line_error(match, fn, *args, **kw):
    with pytest.raises(ModelError, match=match) as info:
        fn(*args, **kw)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)
    return str(info.value)


# ------------------------------------------------------------------------------ validation
@pytest.mark.parametrize("changes, match", [
    (dict(masses=[1.0, -2.0]), r"link 'link2': mass must be positive"),
    (dict(inertias=[np.diag([0.01, 0.02, 0.02]), np.diag([0.01, -0.02, 0.02])]), r"link 'link2'.*(semi-definite|triangle)"),
    (dict(inertias=[np.diag([0.01, 0.01, 0.05]), np.diag([0.01, 0.02, 0.02])]), r"link 'link1'.*triangle inequality"),
    (dict(inertias=[np.array([[0.02, 0.01, 0], [0.0, 0.02, 0], [0, 0, 0.02]])] * 2), r"link 'link1'.*symmetric"),
    (dict(masses=[0.0, 1.0]), r"link 'link1': a massless link must have zero inertia"),
    (dict(axes=[(0, 0, 1), (0, 0, 0)]), r"joint 'joint2': axis must be a non-zero"),
    (dict(parents=[1, 0]), r"joint 'joint1': parent index 1 must come before"),
    (dict(parents=[-1, 1]), r"joint 'joint2': parent index 1 must come before"),
    (dict(joint_types=["revolute", "spherical"]), r"joint 'joint2': unknown joint type 'spherical'"),
    (dict(placement_rotations=[np.eye(3), 2 * np.eye(3)]), r"joint 'joint2': placement rotation"),
    (dict(q_min=[0.0, 1.0], q_max=[1.0, 0.5]), r"joint 'joint2': q_min 1.0 is above q_max 0.5"),
    (dict(tau_max=[10.0, 0.0]), r"joint 'joint2': tau_max must be positive"),
    (dict(coulomb=[-1.0, 0.0]), r"joint 'joint1': coulomb friction must be >= 0"),
    (dict(masses=[1.0, np.nan]), r"masses: values must be finite"),
    (dict(tool_frame="nope"), r"tool_frame: unknown frame 'nope'"),
    (dict(frames={"tool": ("nobody", np.eye(4))}), r"frame 'tool': unknown body 'nobody'"),
    (dict(joint_names=["a", "a"]), r"joint_names: duplicate"),
    # names go into one-line messages, CSV headers and exported URDFs (the URDF reader refused these; create did not)
    (dict(joint_names=["a", "b\nc"]), r"joint_names: expected non-empty printable strings, got 'b\\nc'"),
    (dict(joint_names=["a", 2]), r"joint_names: expected non-empty printable strings, got 2"),
    (dict(link_names=["l1", ""]), r"link_names: expected non-empty printable strings"),
    (dict(name="arm\r\n"), r"name: expected non-empty printable strings"),
    (dict(frames={"tool": (1, np.eye(4)), "x\ty": (0, np.eye(4))}), r"frames: expected non-empty printable"),
])
def test_bad_models_raise_one_clear_error(changes, match):
    _one_line_error(match, RobotModel.create, **_args(**changes))


def test_valid_model_and_massless_body():
    robot = RobotModel.create(**_args(masses=[0.0, 2.0], inertias=[np.zeros((3, 3)), np.diag([0.01, 0.02, 0.02])]))
    assert robot.n == 2 and not robot.all_revolute and robot.is_serial
    assert robot.frame() == (1, pytest.approx(np.eye(4)))


@pytest.mark.parametrize("q, match", [
    ([0.1, np.nan], r"q: non-finite value at sample 0, joint 1"),
    ([[0.1, 0.2], [np.inf, 0.0]], r"q: non-finite value at sample 1, joint 0"),
    ([0.1, 0.2, 0.3], r"q: expected shape \(2,\) or \(N, 2\)"),
    ([[[0.1, 0.2]]], r"q: expected shape"),
    ("ab", r"q: expected"),
])
def test_bad_inputs_raise_one_clear_error(q, match):
    robot = RobotModel.create(**_args())
    for fn in (dyn.mass_matrix, dyn.gravity_torques, dyn.christoffel, dyn.forward_kinematics):
        _one_line_error(match, fn, robot, q)


def test_mismatched_batches_raise():
    robot = RobotModel.create(**_args())
    _one_line_error(r"qd: shape", dyn.inverse_dynamics, robot, np.zeros((3, 2)), np.zeros((2, 2)), np.zeros((3, 2)))
    _one_line_error(r"qdd: expected shape", dyn.inverse_dynamics, robot, np.zeros(2), np.zeros(2), np.zeros(3))


def test_with_limits_returns_new_model_and_arrays_are_read_only():
    robot = load_robot("panda")
    slow = robot.with_limits(qd_max=1.0, tau_max=[50] * 7)
    assert slow is not robot
    assert np.all(slow.qd_max == 1.0) and np.all(slow.tau_max == 50)
    assert robot.qd_max[0] == 2.175 and robot.tau_max[0] == 87          # original unchanged
    assert np.array_equal(slow.qdd_max, robot.qdd_max)                # None keeps the value
    for arr in (robot.masses, robot.inertias, robot.q_max, robot.parents, robot.frame_transforms,
                slow.qd_max, slow.placement_rotations):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr.flat[0] = 1.0
    with pytest.raises(Exception):
        robot.masses = np.ones(7)                                      # frozen dataclass
    _one_line_error(r"qd_max: expected 7 values", robot.with_limits, qd_max=[1.0, 2.0])
    _one_line_error(r"joint 'panda_joint1': qdd_max must be positive", robot.with_limits, qdd_max=0.0)


# ------------------------------------------------------------------------------ DH builders
def _random_table(rng, n):
    return (rng.uniform(-PI, PI, n), rng.uniform(-0.5, 0.5, n), rng.uniform(-0.5, 0.5, n),
            rng.uniform(-PI, PI, n))


def _random_inertials(rng, n):
    masses = rng.uniform(0.5, 3.0, n)
    return masses, rng.uniform(-0.2, 0.2, (n, 3)), np.array([random_inertia(rng, m) for m in masses])


def _energies_from_chain(chain, masses, coms, inertias, gravity, q, qd, h=1e-6):
    """Kinetic and potential energy from link-frame poses T(q) of a DH/MDH chain (inertial data in those
    frames): velocities by central differences of the poses along q̇."""
    T, Tp, Tm = chain(q), chain(q + h * qd), chain(q - h * qd)
    Rdot = (Tp[:, :3, :3] - Tm[:, :3, :3]) / (2 * h)
    ke = pe = 0.0
    for i in range(len(masses)):
        R, o = T[i, :3, :3], T[i, :3, 3]
        W = Rdot[i] @ R.T
        w = np.array([W[2, 1], W[0, 2], W[1, 0]])
        c = lambda X: X[i, :3, :3] @ coms[i] + X[i, :3, 3]  # noqa: E731
        vc = (c(Tp) - c(Tm)) / (2 * h)
        ke += 0.5 * masses[i] * vc @ vc + 0.5 * w @ (R @ inertias[i] @ R.T) @ w
        pe -= masses[i] * gravity @ (R @ coms[i] + o)
    return ke, pe


@pytest.mark.parametrize("convention", ["mdh", "dh"])
@pytest.mark.parametrize("types", ["RRRRRR", "RPRRPR", "PRP"])
def test_dh_builders_kinematics_and_inertia_mapping(convention, types):
    """Frames equal the DH chain; kinetic energy ½q̇ᵀMq̇ and the gravity torques equal those computed
    directly in the table's link frames (so COMs and inertias are moved into body frames correctly)."""
    rng = np.random.default_rng(len(types) + (convention == "dh"))
    n = len(types)
    alpha, a, d, off = _random_table(rng, n)
    masses, coms, inertias = _random_inertials(rng, n)
    build, chain_fn = (from_mdh, mdh_chain) if convention == "mdh" else (from_dh, dh_chain)
    jt = ["prismatic" if t == "P" else "revolute" for t in types]
    robot = build("t", alpha, a, d, off, masses, coms, inertias, joint_types=types, flange=0.05)
    assert robot.joint_types == tuple(jt)

    def chain(q):
        return chain_fn(alpha, a, d, off, q, jt)

    for q, qd, _ in zip(*random_states(robot, 3, 1)):
        ref = chain(q)
        T = dyn.forward_kinematics(robot, q)
        for i in range(n):
            got = T[i] if convention == "mdh" else dyn.frame_pose(robot, q, f"dh_frame_{i + 1}")
            assert_rel(got, ref[i], 1e-12, f"frame {i + 1}")
        assert_rel(dyn.frame_pose(robot, q, "flange"), ref[-1] @ _tz(0.05), 1e-12, "flange")
        ke, _ = _energies_from_chain(chain, masses, coms, inertias, robot.gravity, q, qd)
        assert 0.5 * qd @ dyn.mass_matrix(robot, q) @ qd == pytest.approx(ke, rel=1e-7)
        steps = np.eye(n) * 1e-6
        g_fd = np.array([(_energies_from_chain(chain, masses, coms, inertias, robot.gravity, q + s, qd)[1]
                          - _energies_from_chain(chain, masses, coms, inertias, robot.gravity, q - s, qd)[1]) / 2e-6
                         for s in steps])
        assert np.abs(dyn.gravity_torques(robot, q) - g_fd).max() < 1e-6


def test_inertia_forms_and_builder_errors():
    I6 = [(1.0, 2.0, 3.0, 0.1, 0.2, 0.3)]
    assert np.array_equal(as_inertias(I6, 1)[0], inertia_matrix(1, 2, 3, 0.1, 0.2, 0.3))
    assert np.array_equal(as_inertias([(1.0, 2.0, 3.0)], 1)[0], np.diag([1.0, 2.0, 3.0]))
    _one_line_error(r"inertias: expected shape", as_inertias, [(1.0, 2.0)], 1)
    m, c, I = [1.0, 1.0], [(0, 0, 0)] * 2, [(0.1, 0.1, 0.1)] * 2
    _one_line_error(r"robot 'x': a: expected 2 values", from_mdh, "x", [0, 0], [0], [0, 0], None, m, c, I)
    _one_line_error(r"robot 'x': d: values must be finite", from_dh, "x", [0, 0], [0, 0], [0, np.nan], None, m, c, I)
    _one_line_error(r"robot 'x': joint_types", from_dh, "x", [0, 0], [0, 0], [0, 0], None, m, c, I, joint_types="RX")
    _one_line_error(r"robot 'x': flange", from_mdh, "x", [0, 0], [0, 0], [0, 0], None, m, c, I, flange=[1, 2])
    _one_line_error(r"robot 'x': masses: expected 2 values", from_mdh, "x", [0, 0], [0, 0], [0, 0], None, [1.0], c, I)


# ------------------------------------------------------------------------------ built-ins
def test_builtins_load():
    assert load_robot() is load_robot("iiwa7") is load_robot("IIWA7")
    for name in BUILTIN_ROBOTS:
        robot = load_robot(name)
        assert robot.name == name
        assert robot.tool_frame == "flange" and "flange" in robot.frame_names
        assert np.isfinite(dyn.mass_matrix(robot, np.zeros(robot.n))).all()
    _one_line_error(r"robot 'kr1000': unknown built-in robot \(known: iiwa7, panda", load_robot, "kr1000")
    assert dyn.RobotModel.from_mdh is not None and dyn.RobotModel.from_dh is not None


def test_builtin_numbers():
    iiwa = load_robot("iiwa7")
    assert iiwa.n == 7 and iiwa.rated_payload == 7.0
    assert iiwa.masses.sum() == pytest.approx(2.7025 + 2.7258 + 3.175 + 2.73 + 1.69 + 1.8 + 0.4)
    assert np.degrees(iiwa.q_max) == pytest.approx([170, 120, 170, 120, 170, 120, 175])
    assert np.degrees(iiwa.qd_max) == pytest.approx([98, 98, 100, 130, 140, 180, 180])
    assert iiwa.tau_max.tolist() == [176, 176, 110, 110, 110, 40, 40]
    panda = load_robot("panda")
    assert panda.rated_payload == 3.0 and panda.qdd_max.tolist() == [15, 7.5, 10, 12.5, 15, 20, 20]
    assert panda.q_min[5] == -0.0175 and panda.q_max[3] == -0.0698
    ur = load_robot("ur5e")
    assert ur.rated_payload == 5.0 and ur.masses.sum() == pytest.approx(17.7)
    assert np.degrees(ur.q_max) == pytest.approx([360, 360, 180, 360, 360, 360])
    puma = load_robot("puma560")
    assert puma.masses[1:].tolist() == [17.4, 4.8, 0.82, 0.34, 0.09]
    planar = load_robot("planar4")
    assert np.allclose(dyn.gravity_torques(planar, random_states(planar, 4, 0)[0]), 0.0)


def test_iiwa7_kinematics_match_the_mdh_table():
    """Drake's link frames (A2/A6 origins put on KUKA's axes) reproduce the KST modified DH table
    (d = 0.34, 0.40, 0.40, 0.126): flange pose equal for random q; media flange 0.035 m further."""
    robot = load_robot("iiwa7")
    alpha = [0, -PI / 2, PI / 2, PI / 2, -PI / 2, -PI / 2, PI / 2]
    d = [0.34, 0, 0.40, 0, 0.40, 0, 0.126]
    q = random_states(robot, 20, 3)[0]
    T = dyn.frame_pose(robot, q, "flange")
    Tm = dyn.frame_pose(robot, q, "media_flange")
    for s in range(20):
        ref = mdh_chain(alpha, np.zeros(7), d, None, q[s])
        assert_rel(T[s], ref[-1], 1e-12, "flange")
        assert np.allclose(Tm[s, :3, 3], ref[-1][:3, 3] + 0.035 * ref[-1][:3, 2], atol=1e-12)
        # every joint axis (origin line and direction) agrees with the MDH frame of that joint
        B = dyn.forward_kinematics(robot, q[s])
        for i in range(7):
            z = B[i, :3, :3] @ robot.axes[i]
            assert np.allclose(z, ref[i][:3, 2], atol=1e-12)
            assert np.allclose(np.cross(B[i, :3, 3] - ref[i][:3, 3], z), 0.0, atol=1e-12)
    # straight-up pose: flange at 0.34 + 0.40 + 0.40 + 0.126 m
    assert dyn.frame_pose(robot, np.zeros(7))[:3, 3] == pytest.approx([0, 0, 1.266], abs=1e-12)
    # link-frame orientations are Drake's at q = 0 (rpy of link 2: (π/2, 0, −π))
    assert np.allclose(dyn.forward_kinematics(robot, np.zeros(7))[1, :3, :3], rpy_matrix(PI / 2, 0, -PI), atol=1e-12)


def test_panda_and_ur5e_and_puma_tables():
    panda = load_robot("panda")
    alpha = [0, -PI / 2, PI / 2, PI / 2, -PI / 2, PI / 2, PI / 2]
    a = [0, 0, 0, 0.0825, -0.0825, 0, 0.088]
    d = [0.333, 0, 0.316, 0, 0.384, 0, 0]
    for q in random_states(panda, 5, 2)[0]:
        ref = mdh_chain(alpha, a, d, None, q)
        assert_rel(dyn.forward_kinematics(panda, q), ref, 1e-12, "panda links")
        assert_rel(dyn.frame_pose(panda, q), ref[-1] @ _tz(0.107), 1e-12, "panda flange")
    ur = load_robot("ur5e")
    ua, ud = [0, -0.425, -0.3922, 0, 0, 0], [0.1625, 0, 0, 0.1333, 0.0997, 0.0996]
    ualpha = [PI / 2, 0, 0, PI / 2, -PI / 2, 0]
    for q in random_states(ur, 5, 2)[0]:
        assert_rel(dyn.frame_pose(ur, q), dh_chain(ualpha, ua, ud, None, q)[-1], 1e-12, "ur5e flange")
    # UR5e at q = 0: flange at x = a2 + a3, y = −(d4 + d6), z = d1 − d5
    assert dyn.frame_pose(ur, np.zeros(6))[:3, 3] == pytest.approx([-0.8172, -0.2329, 0.0628], abs=1e-12)
    puma = load_robot("puma560")
    pa, pd = [0, 0.4318, 0.0203, 0, 0, 0], [0.672, 0, 0.15005, 0.4318, 0, 0]
    palpha = [PI / 2, 0, -PI / 2, PI / 2, -PI / 2, 0]
    for q in random_states(puma, 5, 2)[0]:
        assert_rel(dyn.frame_pose(puma, q), dh_chain(palpha, pa, pd, None, q)[-1], 1e-12, "puma flange")


def _tz(z):
    T = np.eye(4)
    T[2, 3] = z
    return T


def test_puma560_is_corkes_model_as_published():
    """Corke's numbers unchanged (link 1 massless with I_yy = 0.35 only; link 3 outside the triangle
    inequality) and the rotor inertia G²·J_m on M's diagonal: M equals the rigid-body M plus that
    diagonal, RNEA adds armature·q̈, and joint 1 alone sees 0.35 + 0.784 kg m² from link 1 and its motor."""
    puma = load_robot("puma560")
    assert puma.masses.tolist() == [0.0, 17.4, 4.8, 0.82, 0.34, 0.09] and not puma.realisable_inertias
    R3 = rotx(-PI / 2)
    assert np.allclose(np.diag(R3.T @ puma.inertias[2] @ R3), [0.066, 0.086, 0.0125])
    arm = np.array(PUMA560_GEAR) ** 2 * np.array(PUMA560_JM)
    assert puma.armature == pytest.approx(arm) and arm[0] == pytest.approx(0.784, abs=1e-3)
    rigid = puma.replace(armature=np.zeros(6))
    q, qd, qdd = random_states(puma, 6, 9)
    assert_rel(dyn.mass_matrix(puma, q), dyn.mass_matrix(rigid, q) + np.diag(arm), 1e-14, "M")
    assert_rel(dyn.inverse_dynamics(puma, q, qd, qdd), dyn.inverse_dynamics(rigid, q, qd, qdd) + arm * qdd,
               1e-12, "tau")
    only1 = puma.replace(masses=np.zeros(6), inertias=np.concatenate([puma.inertias[:1], np.zeros((5, 3, 3))]))
    assert dyn.mass_matrix(only1, np.zeros(6))[0, 0] == pytest.approx(0.35 + arm[0])


