"""Echeandia & Wensing (2021): Coriolis matrix (Algorithm 1) and Christoffel symbols (Algorithm 2) on
kinematic trees, checked as in the paper's Section 5 and against Pinocchio, Safeea's recursion and
finite differences."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dynamics
import dynamics.random_model
from dynamics.christoffel_tree import christoffel_tree
from dynamics.coriolis_tree import coriolis_matrix_tree
from fixtures import binary_tree_robot, serial_chain_robot

pin = pytest.importorskip("pinocchio")


def erd_path(relative: str) -> str:
    """A file of example-robot-data (installed by its cmeel wheel, which has no Python module)."""
    import sys
    for base in sys.path + [os.path.join(sys.prefix, "lib")]:
        cand = os.path.join(base, "cmeel.prefix", "share", "example-robot-data", "robots", relative)
        if os.path.exists(cand):
            return cand
    pytest.skip(f"example-robot-data not installed ({relative})")


def robot_from_pinocchio(model, name: str) -> dynamics.RobotModel:
    """Our RobotModel with the same joints, placements, inertias and frames as a fixed-base
    Pinocchio model of single-DoF joints (joint i + 1 of Pinocchio is our joint i)."""
    unit = {"X": (1.0, 0, 0), "Y": (0, 1.0, 0), "Z": (0, 0, 1.0)}
    types, axes, rots, trans, masses, coms, inertias = [], [], [], [], [], [], []
    for jid in range(1, model.njoints):
        jm = model.joints[jid]
        short = jm.shortname()
        prismatic = "Prismatic" in short or short.startswith("JointModelP")
        if short[-1] in unit and ("Unaligned" not in short):
            axis = unit[short[-1]]
        else:
            axis = np.array(jm.extract().axis)
        types.append("prismatic" if prismatic else "revolute")
        axes.append(axis)
        M = model.jointPlacements[jid]
        rots.append(np.array(M.rotation))
        trans.append(np.array(M.translation))
        Y = model.inertias[jid]
        masses.append(Y.mass)
        coms.append(np.array(Y.lever))
        inertias.append(np.array(Y.inertia))
    frames = {f.name: (int(f.parentJoint) - 1, np.array(f.placement.homogeneous))
              for f in model.frames if f.parentJoint > 0 and f.name not in model.names}
    return dynamics.RobotModel.create(
        name=name, parents=[p - 1 for p in list(model.parents)[1:]], joint_types=types,
        placement_rotations=rots, placement_translations=trans, axes=axes, masses=masses,
        coms=coms, inertias=inertias, joint_names=list(model.names)[1:],
        link_names=[f"body_{nm}" for nm in list(model.names)[1:]], frames=frames,
        gravity=np.array(model.gravity.linear))


URDF_TREES = {"solo12": "solo_description/robots/solo12.urdf",                    # 4 legs × 3 joints
              "anymal-kinova": "anymal_b_simple_description/robots/anymal-kinova.urdf"}  # + 6-DoF arm


def load_urdf_tree(key: str):
    """A fixed-base legged robot from example-robot-data: Pinocchio model (no root joint → fixed
    base) and our model, by `RobotModel.from_urdf` when available."""
    path = erd_path(URDF_TREES[key])
    pmodel = pin.buildModelFromUrdf(path)
    try:
        robot = dynamics.RobotModel.from_urdf(path)
        if list(robot.joint_names) != list(pmodel.names)[1:]:
            raise ValueError("joint order differs")
    except (ImportError, AttributeError, ValueError):
        robot = robot_from_pinocchio(pmodel, key)
    return robot, pmodel


@pytest.fixture(scope="module")
def solo12():
    return load_urdf_tree("solo12")


def random_trees():
    return [binary_tree_robot(15, seed=1, prismatic=0.3), binary_tree_robot(10, seed=2, prismatic=0.3),
            dynamics.random_model.random_robot(9, seed=5, tree=True, prismatic=0.3),
            serial_chain_robot(7, seed=3, prismatic=0.3)]


def paper_samples(n, N=8, seed=0):
    """Section 5: q uniform in [0, 2π], q̇ uniform in [0, 10]."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 2 * np.pi, (N, n)), rng.uniform(0, 10, (N, n))


def pin_rnea_no_gravity(pmodel, q, qd):
    model = pmodel.copy()
    model.gravity = pin.Motion.Zero()
    data = model.createData()
    return np.array([pin.rnea(model, data, q[s], qd[s], np.zeros(model.nv)) for s in range(len(q))])


def pin_christoffel_fd(pmodel, q):
    """C[k, i, j] = ½ ∂τ_k/∂v_i at v = e_j from central differences of pin.rnea (gravity off, a = 0).
    τ is exactly quadratic in v, so a unit step is exact up to rounding."""
    model = pmodel.copy()
    model.gravity = pin.Motion.Zero()
    data = model.createData()
    n = model.nv
    E, a = np.eye(n), np.zeros(n)
    C = np.empty((n, n, n))
    for j in range(n):
        for i in range(n):
            tp = pin.rnea(model, data, q, E[j] + E[i], a)
            tm = pin.rnea(model, data, q, E[j] - E[i], a)
            C[:, i, j] = 0.25 * (tp - tm)
    return C


# ----------------------------------------------------------------------------- Algorithm 1
@pytest.mark.parametrize("key", list(URDF_TREES))
def test_urdf_tree_coriolis_equals_rnea(key):
    """The paper's verification: with g = 0 and q̈ = 0, RNEA returns C(q, q̇) q̇."""
    robot, pmodel = load_urdf_tree(key)
    assert not robot.is_serial
    q, qd = paper_samples(robot.n)
    C = coriolis_matrix_tree(robot, q, qd)
    tau = pin_rnea_no_gravity(pmodel, q, qd)
    assert np.abs(np.einsum("nij,nj->ni", C, qd) - tau).max() <= 1e-9 * max(1.0, np.abs(tau).max())


@pytest.mark.parametrize("robot", random_trees(), ids=lambda r: r.name)
def test_random_tree_coriolis_equals_rnea(robot):
    from fixtures import to_pinocchio
    q, qd = paper_samples(robot.n, seed=robot.n)
    C = coriolis_matrix_tree(robot, q, qd)
    Cqd = np.einsum("nij,nj->ni", C, qd)
    tau = pin_rnea_no_gravity(to_pinocchio(robot), q, qd)
    scale = max(1.0, np.abs(tau).max())
    assert np.abs(Cqd - tau).max() <= 1e-11 * scale
    assert np.abs(Cqd - dynamics.inverse_dynamics(robot, q, qd, np.zeros_like(q), gravity=False)).max() <= 1e-11 * scale


@pytest.mark.parametrize("which", ["solo12", "binary15", "random9"])
def test_mdot_is_c_plus_ct(which, solo12):
    """Proposition 1: Ṁ = C + Cᵀ, with Ṁ from central differences of M along q̇; the algorithm's own
    M and Ṁ outputs agree with CRBA and the finite differences."""
    robot = {"solo12": solo12[0], "binary15": binary_tree_robot(15, seed=1, prismatic=0.3),
             "random9": dynamics.random_model.random_robot(9, seed=5, tree=True, prismatic=0.3)}[which]
    rng = np.random.default_rng(3)
    q, qd = rng.uniform(-np.pi, np.pi, (4, robot.n)), rng.uniform(-2, 2, (4, robot.n))
    C, M, Mdot = coriolis_matrix_tree(robot, q, qd, full=True)
    h = 1e-5
    Mdot_fd = (dynamics.mass_matrix(robot, q + h * qd) - dynamics.mass_matrix(robot, q - h * qd)) / (2 * h)
    scale = max(1.0, np.abs(Mdot_fd).max())
    assert np.abs(C + np.swapaxes(C, -1, -2) - Mdot_fd).max() <= 1e-7 * scale
    assert np.abs(Mdot - C - np.swapaxes(C, -1, -2)).max() <= 1e-12 * scale
    assert np.abs(M - dynamics.mass_matrix(robot, q)).max() <= 1e-12 * max(1.0, np.abs(M).max())


@pytest.mark.parametrize("name", ["puma560", "binary7"])
def test_full_mass_matrix_includes_armature(name):
    """Algorithm 1's M output (``full=True``) is the joint-space inertia with the rotors' armature on its
    diagonal, as `mass_matrix` and Pinocchio's ``crba`` with ``model.armature`` (the PUMA's rotor inertia
    is 0.19-2.3 kg·m², so leaving it out was off by up to 55 %); Ṁ and C do not change (it is constant)."""
    from fixtures import to_pinocchio
    robot = dynamics.load_robot("puma560") if name == "puma560" else \
        binary_tree_robot(7, seed=2, prismatic=0.3).replace(armature=np.linspace(0.1, 0.7, 7))
    assert np.all(robot.armature > 0)
    pmodel = to_pinocchio(robot)
    pdata = pmodel.createData()
    rng = np.random.default_rng(11)
    q, qd = rng.uniform(-np.pi, np.pi, (3, robot.n)), rng.uniform(-2, 2, (3, robot.n))
    C, M, Mdot = coriolis_matrix_tree(robot, q, qd, full=True)
    bare = robot.replace(armature=None)
    C0, M0, Mdot0 = coriolis_matrix_tree(bare, q, qd, full=True)
    for s in range(3):
        Mp = pin.crba(pmodel, pdata, q[s])
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert np.abs(M[s] - Mp).max() <= 1e-12 * np.abs(Mp).max()
    assert np.abs(M - dynamics.mass_matrix(robot, q)).max() <= 1e-12 * np.abs(M).max()
    assert np.array_equal(C, C0) and np.array_equal(Mdot, Mdot0)


def test_coriolis_tree_matches_safeea_contraction_and_shapes():
    robot = binary_tree_robot(12, seed=4, prismatic=0.3)
    q, qd = paper_samples(robot.n, N=5)
    C = coriolis_matrix_tree(robot, q, qd)
    assert C.shape == (5, robot.n, robot.n)
    assert np.abs(C - dynamics.coriolis_matrix(robot, q, qd)).max() <= 1e-10
    single = coriolis_matrix_tree(robot, q[2], qd[2])
    assert single.shape == (robot.n, robot.n) and np.allclose(single, C[2], atol=1e-13)
    sparse = coriolis_matrix_tree(robot, q, qd, dense=False)
    assert sparse.values.shape[1] < robot.n ** 2 and np.array_equal(sparse.dense(), C)
    # joints on different branches do not couple
    anc = robot.subtree_mask()
    unrelated = ~(anc | anc.T)
    assert unrelated.any() and np.all(C[:, unrelated] == 0.0)


# ----------------------------------------------------------------------------- Algorithm 2
@pytest.mark.parametrize("robot", random_trees(), ids=lambda r: r.name)
def test_christoffel_consistent_coriolis(robot):
    """Section 5: C_ij − Σ_k Γ_ijk q̇_k ≈ 0 (≤ 1e-11 here), and Γ equals Safeea's recursion."""
    q, qd = paper_samples(robot.n, seed=7)
    G = christoffel_tree(robot, q)
    C = coriolis_matrix_tree(robot, q, qd)
    assert np.abs(C - np.einsum("nijk,nk->nij", G, qd)).max() <= 1e-11
    assert np.abs(G - dynamics.christoffel(robot, q)).max() <= 1e-11
    assert np.array_equal(G, np.swapaxes(G, -1, -2))             # Γ_ijk = Γ_ikj


def test_solo12_christoffel_vs_pinocchio_rnea_fd(solo12):
    robot, pmodel = solo12
    q, qd = paper_samples(robot.n, N=3, seed=11)
    G = christoffel_tree(robot, q)
    for s in range(len(q)):
        assert np.abs(G[s] - pin_christoffel_fd(pmodel, q[s])).max() <= 1e-9
    assert np.abs(G - dynamics.christoffel(robot, q)).max() <= 1e-11
    C = coriolis_matrix_tree(robot, q, qd)
    assert np.abs(C - np.einsum("nijk,nk->nij", G, qd)).max() <= 1e-11


@pytest.mark.parametrize("robot", random_trees()[:2], ids=lambda r: r.name)
def test_random_tree_christoffel_vs_pinocchio_rnea_fd(robot):
    from fixtures import to_pinocchio
    q, _ = paper_samples(robot.n, N=2, seed=13)
    G = christoffel_tree(robot, q)
    pmodel = to_pinocchio(robot)
    for s in range(len(q)):
        assert np.abs(G[s] - pin_christoffel_fd(pmodel, q[s])).max() <= 1e-9


def test_christoffel_tree_sparse_and_single():
    robot = binary_tree_robot(11, seed=8, prismatic=0.3)
    q, _ = paper_samples(robot.n, N=3)
    G = christoffel_tree(robot, q)
    sp = christoffel_tree(robot, q, dense=False)
    assert np.array_equal(sp.dense(), G)
    anc = robot.subtree_mask()
    assert anc[sp.i, sp.j].all() and anc[sp.j, sp.k].all()
    assert np.allclose(christoffel_tree(robot, q[1]), G[1], atol=1e-14)
    with pytest.raises(ValueError):
        christoffel_tree(robot, np.zeros(robot.n + 1))


# ----------------------------------------------------------------------------- property test
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 10).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.integers(0, 10 ** 6), min_size=n, max_size=n), st.integers(0, 10 ** 6),
    st.floats(0.0, 1.0))))
def test_property_random_trees(case):
    """Any tree (parents drawn at random), any mix of revolute and prismatic joints: C q̇ = RNEA,
    Ṁ = C + Cᵀ (Algorithm 1's own Ṁ), Γ from Algorithm 2 equals Safeea's and contracts to C."""
    from fixtures import random_tree_robot
    n, draws, seed, prismatic = case
    parents = [-1] + [int(draws[i] % (i + 1)) - 1 for i in range(1, n)]
    robot = random_tree_robot(parents, seed, prismatic=prismatic)
    rng = np.random.default_rng(seed)
    q, qd = rng.uniform(-np.pi, np.pi, (2, 3, n))
    C, M, Mdot = coriolis_matrix_tree(robot, q, qd, full=True)
    tau = dynamics.inverse_dynamics(robot, q, qd, np.zeros_like(q), gravity=False)
    assert np.abs(np.einsum("nij,nj->ni", C, qd) - tau).max() <= 1e-11 * max(1.0, np.abs(tau).max())
    assert np.abs(Mdot - C - np.swapaxes(C, -1, -2)).max() <= 1e-12 * max(1.0, np.abs(Mdot).max())
    G = christoffel_tree(robot, q)
    assert np.abs(G - dynamics.christoffel(robot, q)).max() <= 1e-11
    assert np.abs(C - np.einsum("nijk,nk->nij", G, qd)).max() <= 1e-11


@pytest.mark.parametrize("flag, value", [("full", "no"), ("dense", "no"), ("dense", 0), ("full", None)])
def test_tree_functions_take_only_booleans_as_flags(flag, value):
    """Before: full="no" returned the (C, M, Ṁ) tuple and dense="no" the dense array ("no" is truthy)."""
    robot, q = dynamics.load_robot("panda"), np.full(7, 0.3)
    with pytest.raises(dynamics.ModelError, match=rf"^coriolis_matrix_tree: {flag}: expected True or False"):
        coriolis_matrix_tree(robot, q, q, **{flag: value})
    if flag == "dense":
        with pytest.raises(dynamics.ModelError, match=r"^christoffel_tree: dense: expected True or False"):
            christoffel_tree(robot, q, dense=value)
