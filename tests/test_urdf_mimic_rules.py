"""URDF <mimic> joints on hand-written files: the coupled model equals the hand-coupled independent one,
Christoffel symbols by finite differences, Pinocchio, chains, locked and fixed leaders, joint types,
errors, to_urdf, and a property test on random trees with random couplings (the example-robot-data
files: test_urdf_mimic.py)."""

import re

import numpy as np
import pytest

import dynamics as dyn
from dynamics import ModelError, RobotModel
from dynamics.mimic import Coupling
from dynamics.urdf import from_urdf
from fixtures import assert_rel, make_random_robot
from test_urdf import inertial, joint, write
from test_urdf_mimic import PinCoupled, compare

pin = pytest.importorskip("pinocchio")


# ------------------------------------------------------------------------------ a hand-written file
LINKS = ('<link name="base"/>' + "".join(f'<link name="{n}">{inertial(m, xyz=c)}</link>' for n, m, c in
                                          (("a", 2.0, "0.1 0 0.2"), ("b", 1.5, "0 0.1 0.1"), ("c", 0.7, "0.05 0 0.1"),
                                           ("d", 0.4, "0 0.02 0.05"))))


def mimic_file(tmp_path, mult="-2", offset="0.3", b_type="revolute", extra_d="", name="robot.urdf"):
    """base -a(j1)- a -b(j2)- b -c(j3 = mult·j1 + offset)- c, and d on j4 under a (a second branch)."""
    lim = '<limit lower="-1" upper="1" velocity="3" effort="40"/><dynamics friction="0.1" damping="0.2"/>'
    lim3 = '<limit lower="-0.5" upper="2" velocity="4" effort="7"/><dynamics friction="0.05" damping="0.1"/>'
    mim = f'<mimic joint="j1" multiplier="{mult}" offset="{offset}"/>'
    return write(tmp_path, LINKS
                 + joint("j1", "base", "a", axis="0 0 1", extra=lim)
                 + joint("j2", "a", "b", axis="0 1 0", xyz="0.3 0 0.1", rpy="0.2 0 0.1", extra=lim)
                 + joint("j3", "b", "c", jtype=b_type, axis="1 0 1", xyz="0 0.2 0.3", rpy="0 0.4 0", extra=lim3 + mim)
                 + joint("j4", "a", "d", axis="1 0 0", xyz="0 0.1 0", extra=lim + extra_d), name=name)


def hand_coupled(free: RobotModel, coupled: RobotModel):
    """G and q0 of the coupled model in the free model's joint order, written out by hand."""
    G = np.zeros((free.n, coupled.n))
    q0 = np.zeros(free.n)
    for b, name in enumerate(free.joint_names):
        G[b, coupled.joint_names.index(name if name != "j3" else "j1")] = -2.0 if name == "j3" else 1.0
    q0[free.joint_names.index("j3")] = 0.3
    return G, q0


def test_hand_written_mimic_equals_the_hand_coupled_free_model(tmp_path):
    path = mimic_file(tmp_path)
    robot, free = from_urdf(path), from_urdf(path, mimic="independent")
    assert robot.joint_names == ("j1", "j2", "j4") and robot.body_joint_names == ("j1", "j2", "j3", "j4")
    assert free.n == 4 and robot.n == 3 and robot.link_names == free.link_names
    G, q0 = hand_coupled(free, robot)
    assert np.array_equal(robot.coupling.G, G) and np.array_equal(robot.coupling.offset, q0)
    rng = np.random.default_rng(4)
    q, v, a = (rng.uniform(-1, 1, (5, 3)) for _ in range(3))
    qb, vb, ab = q @ G.T + q0, v @ G.T, a @ G.T
    Mb = dyn.mass_matrix(free, qb)
    assert_rel(dyn.mass_matrix(robot, q), G.T @ Mb @ G, 1e-13, "M")
    assert_rel(dyn.inverse_dynamics(robot, q, v, a), dyn.inverse_dynamics(free, qb, vb, ab) @ G, 1e-13, "rnea")
    assert_rel(dyn.motor_torques(robot, q, v, a), dyn.motor_torques(free, qb, vb, ab) @ G, 1e-13, "friction too")
    assert_rel(dyn.forward_kinematics(robot, q), dyn.forward_kinematics(free, qb), 1e-14, "poses")
    assert_rel(dyn.frame_jacobian(robot, q, "c"), dyn.frame_jacobian(free, qb, "c") @ G, 1e-13, "J")
    # limits: j1 ∈ [-1, 1] and j3 = -2 j1 + 0.3 ∈ [-0.5, 2] → j1 ∈ [-0.85, 0.4]; velocity 4 / 2; the leader's effort
    assert np.allclose(robot.q_min, [-0.85, -1, -1]) and np.allclose(robot.q_max, [0.4, 1, 1])
    assert np.allclose(robot.qd_max, [2, 3, 3]) and np.allclose(robot.tau_max, [40, 40, 40])
    assert np.allclose(robot.coulomb, [0.1 + 2 * 0.05, 0.1, 0.1]) and np.allclose(robot.viscous, [0.2 + 4 * 0.1, 0.2, 0.2])


def test_hand_written_mimic_christoffel_by_finite_differences(tmp_path):
    """c^k_ij = ½(∂M_kj/∂q_i + ∂M_ki/∂q_j − ∂M_ij/∂q_k) of the coupled M, by central differences —
    independent of the G⊗G⊗G contraction; and J by differences of the frame position."""
    robot = from_urdf(mimic_file(tmp_path))
    q = np.array([0.3, -0.7, 0.5])
    h = 1e-6
    dM = np.array([(dyn.mass_matrix(robot, q + h * e) - dyn.mass_matrix(robot, q - h * e)) / (2 * h) for e in np.eye(3)])
    C_fd = 0.5 * (np.einsum("ikj->kij", dM) + np.einsum("jki->kij", dM) - dM)   # dM[i] = ∂M/∂q_i
    C = dyn.christoffel(robot, q)
    assert_rel(C, C_fd, 1e-7, "christoffel vs FD")
    assert_rel(dyn.christoffel_tree(robot, q), C, 1e-12, "tree algorithm")
    p = lambda x: dyn.frame_pose(robot, x, "c")[:3, 3]
    J_fd = np.stack([(p(q + h * e) - p(q - h * e)) / (2 * h) for e in np.eye(3)], axis=1)
    assert_rel(dyn.frame_jacobian(robot, q, "c")[:3], J_fd, 1e-8, "J vs FD")


def test_hand_written_mimic_against_pinocchio(tmp_path):
    path = mimic_file(tmp_path)
    robot = from_urdf(path)
    own = pin.buildModelFromUrdf(path, mimic=True)
    compare(robot, PinCoupled(own, list(robot.joint_names), np.eye(3), np.zeros(3)), seed=5)


def test_operational_space_inertia_and_payload_of_a_coupled_model(tmp_path):
    robot = from_urdf(mimic_file(tmp_path))
    q = np.array([0.1, 0.4, -0.3])
    J = dyn.frame_jacobian(robot, q, "c")[:3]
    Linv = dyn.operational_space_inertia_inverse(robot, q, "c")
    M = dyn.mass_matrix(robot, q)
    assert_rel(Linv[:3, :3], J @ np.linalg.solve(M, J.T), 1e-12, "Λ⁻¹")
    heavier = robot.with_payload(dyn.RigidBodyInertia(1.0, [0, 0, 0.1], np.eye(3) * 1e-3), frame="c")
    assert heavier.coupling is robot.coupling and heavier.masses[2] == pytest.approx(robot.masses[2] + 1.0)
    assert np.abs(dyn.mass_matrix(heavier, q) - M).max() > 1e-3


def test_inverse_kinematics_of_a_coupled_model(tmp_path):
    robot = from_urdf(mimic_file(tmp_path))
    # the chain to d (j1, j4) is made of independent joints
    q_true = np.array([0.3, 0.0, -0.4])
    target = dyn.frame_pose(robot, q_true, "d")[:3, 3]
    res = dyn.solve_ik(robot, target, np.zeros(3), "d")
    assert res.success and np.linalg.norm(dyn.frame_pose(robot, res.q, "d")[:3, 3] - target) < 1e-6
    with pytest.raises(dyn.IKError, match=r"frame 'c': moved by the mimic joint 'j3' \(follows 'j1'\)"):
        dyn.solve_ik(robot, target, np.zeros(3), "c")


# ------------------------------------------------------------------------------ chains, locks, types, errors
def test_chains_resolve_to_the_root_leader(tmp_path):
    lim = '<limit lower="-3" upper="3" velocity="3" effort="40"/>'
    path = write(tmp_path, LINKS
                 + joint("j1", "base", "a", extra=lim)
                 + joint("j2", "a", "b", axis="0 1 0", extra=lim + '<mimic joint="j3" multiplier="0.5" offset="0.1"/>')
                 + joint("j3", "b", "c", axis="1 0 0", extra=lim + '<mimic joint="j1" multiplier="-2" offset="0.2"/>')
                 + joint("j4", "a", "d", extra=lim))
    robot = from_urdf(path)
    c = robot.coupling
    assert robot.joint_names == ("j1", "j4")
    # j3 = -2 j1 + 0.2;  j2 = 0.5 j3 + 0.1 = -j1 + 0.2
    assert np.allclose(c.multiplier, [1, -1, -2, 1]) and np.allclose(c.offset, [0, 0.2, 0.2, 0])
    assert list(c.coordinate) == [0, 0, 0, 1]
    # position limits: j1 within ±3, j2 = -j1 + 0.2 ∈ ±3 → j1 ∈ [-2.8, 3], j3 → j1 ∈ [-1.4, 1.6]
    assert np.allclose([robot.q_min[0], robot.q_max[0]], [-1.4, 1.6])


def test_loops_missing_and_fixed_leaders_are_refused(tmp_path):
    lim = '<limit lower="-3" upper="3" velocity="3" effort="40"/>'
    loop = write(tmp_path, LINKS + joint("j1", "base", "a", extra=lim + '<mimic joint="j2"/>')
                 + joint("j2", "a", "b", extra=lim + '<mimic joint="j1"/>') + joint("j3", "b", "c", extra=lim)
                 + joint("j4", "a", "d", extra=lim), name="loop.urdf")
    with pytest.raises(ModelError, match=r"loop.urdf: joint '(j1|j2)' <mimic joint=\"j[12]\">: the mimic joints "
                                         r"j[12] -> j[12] -> j[12] form a loop"):
        from_urdf(loop)
    assert from_urdf(loop, mimic="independent").n == 4
    fixed = write(tmp_path, LINKS + joint("j1", "base", "a", jtype="fixed")
                  + joint("j2", "a", "b", extra=lim + '<mimic joint="j1"/>') + joint("j3", "b", "c", extra=lim)
                  + joint("j4", "a", "d", extra=lim), name="fixed.urdf")
    with pytest.raises(ModelError, match=r"fixed.urdf: joint 'j2' <mimic joint=\"j1\">: 'j1' is a fixed joint; "
                                         r"a mimic needs a movable leader"):
        from_urdf(fixed)


def test_a_locked_leader_locks_its_mimic_at_multiplier_value_plus_offset(tmp_path):
    path = mimic_file(tmp_path)
    held = from_urdf(path, locked_joints={"j1": 0.25})
    explicit = from_urdf(path, locked_joints={"j1": 0.25, "j3": -2 * 0.25 + 0.3})
    assert held.coupling is None and held.joint_names == ("j2", "j4")
    q = np.array([0.4, -0.2])
    assert_rel(dyn.mass_matrix(held, q), dyn.mass_matrix(explicit, q), 1e-15, "M")
    other = from_urdf(path, mimic="independent", locked_joints={"j1": 0.25, "j3": 0.0})    # (not the mimic's)
    assert not np.allclose(dyn.mass_matrix(held, q), dyn.mass_matrix(other, q))
    with pytest.raises(ModelError, match=r"locked joint 'j3': position 0 contradicts its <mimic> of 'j1', locked "
                                         r"at 0.25, which holds it at -0.2"):
        from_urdf(path, locked_joints={"j1": 0.25, "j3": 0.0})
    # locking the mimic joint itself leaves its leader free
    own = from_urdf(path, locked_joints={"j3": 0.1})
    assert own.coupling is None and own.joint_names == ("j1", "j2", "j4")


def test_a_prismatic_joint_may_follow_a_revolute_one(tmp_path):
    path = mimic_file(tmp_path, b_type="prismatic", mult="0.05", offset="0.01")
    robot, free = from_urdf(path), from_urdf(path, mimic="independent")
    G = robot.coupling.G[[robot.body_joint_names.index(n) for n in free.joint_names]]
    q, v = np.array([0.2, -0.5, 0.9]), np.array([1.0, 0.3, -0.2])
    qb = G @ q + np.array([0, 0, 0.01, 0])
    assert robot.joint_types[2] == "prismatic"
    assert_rel(dyn.inverse_dynamics(robot, q, v, v), G.T @ dyn.inverse_dynamics(free, qb, G @ v, G @ v), 1e-13, "rnea")
    h = 1e-6
    dM = np.array([(dyn.mass_matrix(robot, q + h * e) - dyn.mass_matrix(robot, q - h * e)) / (2 * h) for e in np.eye(3)])
    C_fd = 0.5 * (np.einsum("ikj->kij", dM) + np.einsum("jki->kij", dM) - dM)
    assert_rel(dyn.christoffel(robot, q), C_fd, 1e-7, "christoffel vs FD")


@pytest.mark.parametrize("kw, match", [
    (dict(mult="0"), r"joint 'j3' <mimic>: multiplier=\"0\" holds the joint still; lock it"),
    (dict(mult="nan"), r"joint 'j3' <mimic>: <mimic multiplier=\"nan\">: not a number"),
    (dict(mult="inf"), r"joint 'j3' <mimic>: multiplier and offset must be finite"),
    (dict(mult="1", offset="5"), r"joint 'j3' <mimic>: its limits \[-0.5, 2.0\] allow 'j1' only in \[-5.5, -3.0\], "
                                 r"outside its own \[-1.0, 1.0\]"),
])
def test_bad_mimic_elements_give_one_line(tmp_path, kw, match):
    with pytest.raises(ModelError, match=match) as info:
        from_urdf(mimic_file(tmp_path, **kw))
    assert "\n" not in str(info.value) and "robot.urdf" in str(info.value)


@pytest.mark.parametrize("mode", ["Coupled", "", None, 1, "both"])
def test_invalid_mimic_option(tmp_path, mode):
    with pytest.raises(ModelError, match=r"from_urdf: mimic: expected 'coupled' or 'independent', got") as info:
        from_urdf(mimic_file(tmp_path), mimic=mode)
    assert isinstance(info.value, ValueError)


def test_model_checks_its_coupling():
    base = make_random_robot(3, [-1, 0, 1], [False] * 3, seed=1)
    fields = {k: getattr(base, k) for k in ("parents", "joint_types", "placement_rotations", "placement_translations",
                                            "axes", "masses", "coms", "inertias")}
    ok = Coupling.create(["a", "b", "c"], [0, 1, 0], [1, 1, -2], [0, 0, 0.3])
    robot = RobotModel.create(name="m", joint_names=["a", "b"], coupling=ok, **fields)
    assert robot.n == 2 and robot.n_bodies == 3 and robot.q_min.shape == (2,)
    with pytest.raises(ModelError, match=r"coupling: coordinate 'a' must drive the body of joint 'a' with multiplier 1"):
        RobotModel.create(name="m", joint_names=["a", "b"], coupling=Coupling.create(["a", "b", "c"], [0, 1, 0],
                                                                                      [2, 1, -2], [0, 0, 0]), **fields)
    with pytest.raises(ModelError, match=r"coupling: joint 'c': multiplier must be a finite non-zero number"):
        RobotModel.create(name="m", joint_names=["a", "b"], coupling=Coupling.create(["a", "b", "c"], [0, 1, 0],
                                                                                      [1, 1, 0], [0, 0, 0]), **fields)
    with pytest.raises(ModelError, match=r"coupling: expected a dynamics.mimic.Coupling or None, got 'x'"):
        RobotModel.create(name="m", joint_names=["a", "b"], coupling="x", **fields)
    with pytest.raises(ModelError, match=r"coupling: multiplier: expected 3 values \(one per body\), got shape \(2,\)"):
        Coupling.create(["a", "b", "c"], [0, 1, 0], [1, 1], [0, 0, 0])
    with pytest.raises(ModelError, match=r"q: expected shape \(2,\) or \(N, 2\)"):
        dyn.mass_matrix(robot, np.zeros(3))
    with pytest.raises(ModelError, match=r"dense=False: robot 'm' has mimic joints"):
        dyn.christoffel_tree(robot, np.zeros(2), dense=False)


# ------------------------------------------------------------------------------ to_urdf
def test_to_urdf_writes_mimic_joints_back(tmp_path):
    robot = from_urdf(mimic_file(tmp_path))
    text = robot.to_urdf()
    assert re.search(r'<joint name="j3" type="revolute">.*<limit lower="-0.5" upper="2.0" velocity="4.0" effort="40.0"/>'
                     r'.*<mimic joint="j1" multiplier="-2.0" offset="0.3"/>', text, re.S)
    back = from_urdf(robot.to_urdf(tmp_path / "back.urdf"))
    assert back.joint_names == robot.joint_names and back.body_joint_names == robot.body_joint_names
    assert np.array_equal(back.coupling.G, robot.coupling.G) and np.array_equal(back.coupling.offset, robot.coupling.offset)
    for key in ("q_min", "q_max", "qd_max", "tau_max", "coulomb", "viscous"):
        assert np.allclose(getattr(back, key), getattr(robot, key), rtol=1e-15, atol=1e-15), key
    q = np.array([0.2, -0.1, 0.7])
    assert_rel(dyn.mass_matrix(back, q), dyn.mass_matrix(robot, q), 1e-14, "M")
    own = pin.buildModelFromUrdf(str(tmp_path / "back.urdf"), mimic=True)
    compare(robot, PinCoupled(own, list(robot.joint_names), np.eye(3), np.zeros(3)), seed=6, christoffel=False)


def test_a_mimic_joints_armature_joins_its_leaders_times_the_multiplier_squared(tmp_path):
    """<dynamics armature> of j3 = -2 j1 + 0.3: its rotor's energy ½ a (2 q̇1)² adds 4a to j1's; to_urdf
    writes the coordinate's on the leader and none on the mimic, and reads back the same."""
    path = mimic_file(tmp_path)
    with open(path) as fh:
        text = fh.read().replace('damping="0.1"/>', 'damping="0.1" armature="0.05"/>')      # j3's <dynamics>
    with open(path, "w") as fh:
        fh.write(text)
    robot, free = from_urdf(path), from_urdf(path, mimic="independent")
    assert free.joint_names == ("j1", "j2", "j3", "j4") and np.array_equal(free.armature, [0, 0, 0.05, 0])
    assert np.allclose(robot.armature, [4 * 0.05, 0, 0], rtol=1e-15)
    G, q0 = hand_coupled(free, robot)
    q = np.random.default_rng(5).uniform(-1, 1, (4, 3))
    assert_rel(dyn.mass_matrix(robot, q), G.T @ dyn.mass_matrix(free, q @ G.T + q0) @ G, 1e-13, "M")
    back = from_urdf(robot.to_urdf(tmp_path / "back.urdf"))
    assert np.array_equal(back.armature, robot.armature)
    assert_rel(dyn.mass_matrix(back, q), dyn.mass_matrix(robot, q), 1e-14, "M")


# ------------------------------------------------------------------------------ property: random trees, random couplings
try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from fixtures import random_robots
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    given = None


def couple(free: RobotModel, draw_leaders, multipliers, offsets) -> RobotModel:
    """`free` with the bodies of `draw_leaders` (body -> leader body, leaders not themselves followers)
    moved by their leader's coordinate: q_b = m q_leader + o."""
    leaders = [b for b in range(free.n) if b not in draw_leaders]
    coordinate = [leaders.index(draw_leaders.get(b, b)) for b in range(free.n)]
    mult = [multipliers[b] if b in draw_leaders else 1.0 for b in range(free.n)]
    off = [offsets[b] if b in draw_leaders else 0.0 for b in range(free.n)]
    fields = {k: getattr(free, k) for k in ("parents", "joint_types", "placement_rotations", "placement_translations",
                                            "axes", "masses", "coms", "inertias", "link_names", "gravity")}
    return RobotModel.create(name="coupled", joint_names=[free.joint_names[b] for b in leaders],
                             coupling=Coupling.create(free.joint_names, coordinate, mult, off),
                             coulomb=0.3, viscous=0.1, tool_frame=free.tool_frame,
                             frames={nm: (int(b), T) for nm, b, T in zip(free.frame_names, free.frame_bodies,
                                                                       free.frame_transforms)}, **fields)


if given is not None:
    @st.composite
    def coupled_robots(draw):
        free = draw(random_robots(max_n=6))
        followers = {}
        for b in range(1, free.n):
            if draw(st.booleans()):
                leader = draw(st.integers(0, free.n - 1))
                if leader != b and leader not in followers:
                    followers[b] = leader
        followers = {b: a for b, a in followers.items() if b not in followers.values()}
        mult = [draw(st.sampled_from([-2.0, -1.0, -0.5, 0.7, 1.0, 1.5])) for _ in range(free.n)]
        off = [draw(st.floats(-0.5, 0.5)) for _ in range(free.n)]
        return free, couple(free, followers, mult, off)

    @settings(max_examples=40, deadline=None)
    @given(coupled_robots(), st.integers(0, 2**31 - 1))
    def test_coupled_dynamics_are_the_free_dynamics_mapped_by_G(pair, seed):
        free, robot = pair
        G, q0 = robot.coupling.G, robot.coupling.offset
        rng = np.random.default_rng(seed)
        q, v, a = (rng.uniform(-2, 2, (3, robot.n)) for _ in range(3))
        qb, vb, ab = q @ G.T + q0, v @ G.T, a @ G.T
        Mb = dyn.mass_matrix(free, qb)
        M = dyn.mass_matrix(robot, q)
        scale = np.abs(M).max()
        assert_rel(M, np.swapaxes(G, 0, 1) @ Mb @ G, 1e-12, "M")
        assert_rel(dyn.inverse_dynamics(robot, q, v, a), dyn.inverse_dynamics(free, qb, vb, ab) @ G, 1e-12, "rnea",
                   scale=scale)
        C = dyn.christoffel(robot, q)
        assert_rel(C, np.einsum("nabc,ak,bi,cj->nkij", dyn.christoffel(free, qb), G, G, G), 1e-12, "C", scale=scale)
        assert_rel(dyn.christoffel_tree(robot, q), C, 1e-10, "C tree", scale=scale)
        full = dyn.coriolis_matrix_tree(robot, q, v, full=True)
        assert_rel(full.C, np.einsum("nkij,ni->nkj", C, v), 1e-10, "Coriolis", scale=scale)
        assert_rel(full.M, M, 1e-10, "M of Algorithm 1")
        assert_rel(full.Mdot, full.C + np.swapaxes(full.C, 1, 2), 1e-10, "Ṁ = C + Cᵀ", scale=scale)
        for method in ("contracted", "full"):
            pc = dyn.path_coefficients(robot, q, v, a, method=method)
            assert_rel(pc.c, np.einsum("nkj,nj->nk", M, a) + np.einsum("nkij,ni,nj->nk", C, v, v), 1e-10, method,
                       scale=scale)
            assert_rel(pc.d, dyn.gravity_torques(robot, q) + robot.coulomb * np.sign(v), 1e-12, "d", scale=9.81 * scale)
        J = dyn.frame_jacobian(robot, q)
        assert_rel(J, dyn.frame_jacobian(free, qb) @ G, 1e-12, "J")
        Linv = dyn.operational_space_inertia_inverse(robot, q)
        assert_rel(Linv, J @ np.linalg.solve(M, np.swapaxes(J, 1, 2)), 1e-8, "Λ⁻¹")
