"""Payload merging (dynamics.payload) against pinocchio with the object appended to the same joint."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynamics.christoffel import christoffel
from dynamics.gravity_torques import gravity_torques
from dynamics.inverse_dynamics import inverse_dynamics
from dynamics.mass_matrix import mass_matrix
from dynamics.model import ModelError, RobotModel
from dynamics.payload import PayloadError, RigidBodyInertia, with_payload
from dynamics.random_model import random_robot as shared_random_robot, random_rotation

pin = pytest.importorskip("pinocchio")


# ---------------------------------------------------------------------------------- helpers
def random_inertia(rng, mass: float) -> np.ndarray:
    """Physically consistent inertia about the COM: a random solid box, randomly rotated."""
    a, b, c = rng.uniform(0.02, 0.4, size=3)
    I = mass / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    R = random_rotation(rng)
    return R @ I @ R.T


def random_body(rng, mass_range=(0.1, 5.0)) -> RigidBodyInertia:
    m = rng.uniform(*mass_range)
    return RigidBodyInertia(m, rng.uniform(-0.3, 0.3, size=3), random_inertia(rng, m))


def random_transform(rng) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = random_rotation(rng)
    T[:3, 3] = rng.uniform(-0.2, 0.2, size=3)
    return T


def random_robot(rng, parents=(-1, 0, 1, 2, 3, 4), prismatic=(), rated=10.0) -> RobotModel:
    """The shared generator (`dynamics.random_model`) with a random tool frame ``flange`` and a rating."""
    n = len(parents)
    return shared_random_robot(n, rng, parents=parents, prismatic=[i in prismatic for i in range(n)],
                               tool_frame="flange", rated_payload=rated, name="random")


def to_pin(robot: RobotModel):
    """A pinocchio model with exactly our numbers (our joint i is pinocchio joint i + 1): the project's
    bridge `benchmarks.peers.to_pinocchio` (via `fixtures`) when present, else a local copy of the same construction
    (joint placement (R_i, p_i), a joint about/along axis_i, body inertia in the joint frame)."""
    try:
        from fixtures import to_pinocchio
    except ImportError:
        to_pinocchio = None
    if to_pinocchio is not None:
        return to_pinocchio(robot), list(range(1, robot.n + 1))
    model = pin.Model()
    model.gravity = pin.Motion(np.r_[robot.gravity, 0.0, 0.0, 0.0])
    ids = []
    for i in range(robot.n):
        parent = 0 if robot.parents[i] < 0 else ids[robot.parents[i]]
        axis = np.array(robot.axes[i])
        joint = (pin.JointModelPrismaticUnaligned(axis) if robot.joint_types[i] == "prismatic"
                 else pin.JointModelRevoluteUnaligned(axis))
        placement = pin.SE3(np.array(robot.placement_rotations[i]), np.array(robot.placement_translations[i]))
        jid = model.addJoint(parent, joint, placement, robot.joint_names[i])
        model.appendBodyToJoint(jid, pin.Inertia(float(robot.masses[i]), np.array(robot.coms[i]),
                                                 np.array(robot.inertias[i])), pin.SE3.Identity())
        ids.append(jid)
    return model, ids


def pin_christoffel(model, data, q) -> np.ndarray:
    """C[k, i, j] from pinocchio's RNEA without gravity by polarisation of the quadratic form
    h(v) = Σ_ij C[:, i, j] v_i v_j:  C[:, i, j] = (h(e_i + e_j) − h(e_i) − h(e_j)) / 2."""
    n = model.nv
    g0 = model.gravity.copy()
    model.gravity = pin.Motion.Zero()
    z = np.zeros(n)
    E = np.eye(n)
    h = [pin.rnea(model, data, q, E[i], z).copy() for i in range(n)]
    C = np.zeros((n, n, n))
    for i in range(n):
        C[:, i, i] = h[i]
        for j in range(i + 1, n):
            hij = pin.rnea(model, data, q, E[i] + E[j], z)
            C[:, i, j] = C[:, j, i] = 0.5 * (hij - h[i] - h[j])
    model.gravity = g0
    return C


def assert_rel(a, b, rtol=1e-9, what=""):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(np.abs(b).max(), 1e-12)
    err = np.abs(a - b).max() / scale
    assert err <= rtol, f"{what}: relative error {err:.3e} > {rtol:g}"


def compare_with_pinocchio(robot, payload, frame, rng, samples=4):
    merged = with_payload(robot, payload, frame=frame)
    model, ids = to_pin(robot)
    body, T_body_frame = robot.frame(frame)
    model.appendBodyToJoint(ids[body], pin.Inertia(payload.mass, np.array(payload.com), np.array(payload.inertia)),
                            pin.SE3(T_body_frame[:3, :3].copy(), T_body_frame[:3, 3].copy()))
    data = model.createData()
    Q = rng.uniform(-np.pi, np.pi, size=(samples, robot.n))
    M = mass_matrix(merged, Q)
    C = christoffel(merged, Q)
    g = gravity_torques(merged, Q)
    for k, q in enumerate(Q):
        Mp = pin.crba(model, data, q)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert_rel(M[k], Mp, what="mass matrix")
        assert_rel(C[k], pin_christoffel(model, data, q), what="christoffel")
        assert_rel(g[k], pin.computeGeneralizedGravity(model, data, q), what="gravity")
        qd, qdd = rng.normal(size=robot.n), rng.normal(size=robot.n)
        assert_rel(inverse_dynamics(merged, q, qd, qdd), pin.rnea(model, data, q, qd, qdd), what="rnea")
    return merged


# ---------------------------------------------------------------------------------- RigidBodyInertia
def test_box_inertia_closed_form():
    b = RigidBodyInertia.box(6.0, (0.2, 0.3, 0.4), com_offset=(0, 0, 0.2))
    assert b.mass == 6.0
    np.testing.assert_allclose(b.com, [0, 0, 0.2])
    np.testing.assert_allclose(np.diag(b.inertia), [0.5 * (0.09 + 0.16), 0.5 * (0.04 + 0.16), 0.5 * (0.04 + 0.09)])
    # two half boxes side by side make the whole box (parallel-axis theorem)
    h1 = RigidBodyInertia.box(3.0, (0.1, 0.3, 0.4), com_offset=(-0.05, 0, 0.2))
    h2 = RigidBodyInertia.box(3.0, (0.1, 0.3, 0.4), com_offset=(0.05, 0, 0.2))
    assert (h1 + h2).isclose(b)
    # a box turned by 90° about z swaps its x and y moments
    R = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
    r = RigidBodyInertia.box(6.0, (0.2, 0.3, 0.4), rotation=R)
    np.testing.assert_allclose(np.diag(r.inertia), [0.5 * (0.04 + 0.16), 0.5 * (0.09 + 0.16), 0.5 * (0.04 + 0.09)])


def test_read_only_and_frozen():
    b = RigidBodyInertia.box(1.0, (0.1, 0.1, 0.1))
    with pytest.raises(ValueError):
        b.com[0] = 1.0
    with pytest.raises(AttributeError):
        b.mass = 2.0


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_merge_associative_commutative_and_spatial(seed):
    rng = np.random.default_rng(seed)
    a, b, c = (random_body(rng) for _ in range(3))
    ab_c = (a + b) + c
    a_bc = a + (b + c)
    assert ab_c.isclose(a_bc, rtol=1e-12, atol=1e-13)
    assert (a + b).isclose(b + a, rtol=1e-12, atol=1e-13)
    assert sum([c, a, b]).isclose(ab_c, rtol=1e-12, atol=1e-13)
    # spatial inertias about a common point add up (the defining property of the composite body)
    np.testing.assert_allclose(ab_c.spatial_matrix(), a.spatial_matrix() + b.spatial_matrix() + c.spatial_matrix(),
                               rtol=1e-12, atol=1e-13)
    # merging commutes with a change of frame
    T = random_transform(rng)
    assert (a + b).transformed(T).isclose(a.transformed(T) + b.transformed(T), rtol=1e-12, atol=1e-13)
    # zero is neutral
    assert (a + RigidBodyInertia.zero()).isclose(a)


def test_transformed_round_trip_and_spatial_transform():
    rng = np.random.default_rng(3)
    a = random_body(rng)
    T = random_transform(rng)
    assert a.transformed(T).transformed(np.linalg.inv(T)).isclose(a, rtol=1e-12, atol=1e-13)
    # spatial inertia transforms as X*ᵀ-congruence: I_B = Xᵀ I_A X with X the motion transform B→A
    R, p = T[:3, :3], T[:3, 3]
    Rt = R.T
    px = np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
    X = np.zeros((6, 6))          # motion vector (ω; v at origin) from B coordinates into A coordinates
    X[:3, :3] = Rt
    X[3:, 3:] = Rt
    X[3:, :3] = -Rt @ px
    np.testing.assert_allclose(a.transformed(T).spatial_matrix(), X.T @ a.spatial_matrix() @ X, atol=1e-13)


# ---------------------------------------------------------------------------------- with_payload vs pinocchio
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_with_payload_matches_pinocchio_serial(seed):
    rng = np.random.default_rng(seed)
    robot = random_robot(rng)
    payload = random_body(rng, (1.0, 8.0))
    merged = compare_with_pinocchio(robot, payload, None, rng)
    # the original model is unchanged and only the carrying body changed
    assert merged is not robot
    body = robot.frame(None)[0]
    assert np.all(np.delete(merged.masses, body) == np.delete(robot.masses, body))
    assert merged.masses[body] == pytest.approx(robot.masses[body] + payload.mass)


def test_with_payload_matches_pinocchio_tree_prismatic_and_link_frame():
    rng = np.random.default_rng(7)
    # depth-first numbering (pinocchio's CRBA assumes each subtree is a contiguous index range)
    robot = random_robot(rng, parents=(-1, 0, 1, 2, 1, 4), prismatic=(2,))
    payload = random_body(rng, (0.5, 3.0))
    compare_with_pinocchio(robot, payload, "link3", rng)       # a body in the middle of a branch
    compare_with_pinocchio(robot, payload, None, rng)          # the tool flange on the other branch


def test_with_payload_builtin_iiwa7_if_available():
    robots = pytest.importorskip("dynamics.robots")
    robot = robots.load_robot("iiwa7")
    rng = np.random.default_rng(11)
    payload = RigidBodyInertia.box(5.0, (0.2, 0.15, 0.1), com_offset=(0.01, -0.02, 0.08))
    merged = compare_with_pinocchio(robot, payload, None, rng)
    assert robot.with_payload(payload).masses.sum() == pytest.approx(merged.masses.sum())


def test_sequential_payloads_equal_merged_payload():
    rng = np.random.default_rng(5)
    robot = random_robot(rng, rated=20.0)
    a, b = random_body(rng), random_body(rng)
    one = with_payload(with_payload(robot, a), b)
    two = with_payload(robot, a + b)
    np.testing.assert_allclose(one.masses, two.masses, rtol=1e-13)
    np.testing.assert_allclose(one.coms, two.coms, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(one.inertias, two.inertias, rtol=1e-12, atol=1e-14)
    # and via the model method (delegates to dynamics.payload.with_payload)
    three = robot.with_payload(a + b)
    np.testing.assert_allclose(three.inertias, two.inertias)


def test_zero_payload_and_point_mass():
    rng = np.random.default_rng(9)
    robot = random_robot(rng)
    same = with_payload(robot, RigidBodyInertia.zero())
    np.testing.assert_allclose(same.inertias, robot.inertias, atol=1e-15)
    np.testing.assert_allclose(same.coms, robot.coms, atol=1e-15)
    # a plain number is a point mass at the frame origin; a dict is accepted too
    pm = with_payload(robot, 2.0)
    pd = with_payload(robot, {"mass": 2.0})
    np.testing.assert_allclose(pm.inertias, pd.inertias)
    body, T = robot.frame(None)
    expected = RigidBodyInertia(robot.masses[body], robot.coms[body], robot.inertias[body]) + \
        RigidBodyInertia.point_mass(2.0, T[:3, 3])
    np.testing.assert_allclose(pm.inertias[body], expected.inertia, atol=1e-14)


# ---------------------------------------------------------------------------------- bad payloads
def test_overload_rejected_unless_allowed():
    rng = np.random.default_rng(1)
    robot = random_robot(rng, rated=7.0)
    heavy = RigidBodyInertia.box(7.5, (0.2, 0.2, 0.2))
    with pytest.raises(PayloadError, match="exceeds the rated payload 7 kg"):
        with_payload(robot, heavy)
    with pytest.raises(ModelError):                          # PayloadError is a ModelError, a ValueError
        robot.with_payload(heavy)
    assert issubclass(PayloadError, ValueError)
    m = with_payload(robot, heavy, allow_overload=True)
    assert m.masses.sum() == pytest.approx(robot.masses.sum() + 7.5)
    with_payload(robot, RigidBodyInertia.box(7.0, (0.2, 0.2, 0.2)))     # exactly rated is fine


@pytest.mark.parametrize("args, match", [
    ((-1.0, (0, 0, 0), np.zeros((3, 3))), "mass must be positive"),
    ((np.nan, (0, 0, 0), np.zeros((3, 3))), "finite"),
    ((1.0, (0, np.inf, 0), np.eye(3) * 0.01), "finite"),
    ((1.0, (0, 0, 0), np.diag([-0.01, 0.01, 0.01])), "positive semi-definite"),
    ((1.0, (0, 0, 0), np.diag([0.01, 0.01, 0.05])), "triangle"),
    ((1.0, (0, 0, 0), [[0.01, 0.002, 0], [0, 0.01, 0], [0, 0, 0.01]]), "symmetric"),
    ((0.0, (0, 0, 0), np.eye(3) * 0.01), "massless"),
    ((1.0, (0, 0), np.eye(3)), "expected mass"),
])
def test_bad_payloads(args, match):
    with pytest.raises(PayloadError, match=match):
        RigidBodyInertia(*args)


def test_bad_box_frame_and_type():
    with pytest.raises(PayloadError, match="size"):
        RigidBodyInertia.box(1.0, (0.1, -0.1, 0.1))
    rng = np.random.default_rng(2)
    robot = random_robot(rng)
    with pytest.raises(ModelError, match="unknown frame"):
        with_payload(robot, 1.0, frame="gripper")
    with pytest.raises(PayloadError, match="expected a RigidBodyInertia"):
        with_payload(robot, "heavy")
    with pytest.raises(PayloadError, match="unknown keys"):
        with_payload(robot, {"mass": 1.0, "colour": "red"})
    with pytest.raises(PayloadError, match="rigid transform"):
        RigidBodyInertia.zero().transformed(np.diag([2.0, 1, 1, 1]))


def test_a_payload_on_a_link_the_model_holds_as_not_realisable_matches_pinocchio():
    """Corke's PUMA 560 (`realisable_inertias=False`, as a URDF read as found): link 3's principal moments break
    the triangle inequality and link 1 has inertia without mass. Any payload there was refused as if it were the
    payload's fault ("payload: principal moments [0.0125, 0.066, 0.086] violate ..."); Pinocchio, given the object
    as a separate body on the same joint, is the oracle."""
    robot = pytest.importorskip("dynamics.robots").load_robot("puma560")
    assert not robot.realisable_inertias
    rng = np.random.default_rng(3)
    for frame in ("link3", "dh_frame_3", "link1"):
        compare_with_pinocchio(robot, random_body(rng, (0.5, 3.0)), frame, rng)
    empty = with_payload(robot, RigidBodyInertia.zero(), frame="link1")      # massless link: its inertia kept
    np.testing.assert_array_equal(empty.inertias, robot.inertias)
