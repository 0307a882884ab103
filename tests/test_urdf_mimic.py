"""URDF <mimic> joints in the example-robot-data files: coupled (default) and independent loading against
Pinocchio (its own mimic models, and its models without mimic coupled by hand with G and q0 read here from
the XML), and which of the files load (hand-written files: test_urdf_mimic_rules.py)."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import dynamics as dyn
from dynamics import ModelError
from dynamics.urdf import from_urdf
from fixtures import assert_rel

pin = pytest.importorskip("pinocchio")
TOL = 1e-9

# example-robot-data files with movable <mimic> joints; the second item: does pinocchio's own mimic=True
# parser build them (it needs every leader before its mimic in its depth-first order)
MIMIC_FILES = [
    ("panda_description/urdf/panda.urdf", True),
    ("panda_description/urdf/panda_collision.urdf", True),
    ("baxter_description/urdf/baxter.urdf", True),
    ("pr2_description/urdf/pr2.urdf", True),
    ("tiago_pro_description/robots/tiago_pro.urdf", True),
    ("romeo_description/urdf/romeo.urdf", False),
    ("talos_data/robots/talos_full_v2.urdf", False),
    ("talos_data/robots/talos_full_v2_box.urdf", False),
]
ALEX = "alex_description/urdf/alex_psyonic_hands.urdf"     # its mimics name joints that do not exist


def erd(rel):
    from fixtures import erd_path
    path = erd_path(f"robots/{rel}")
    if path is None:
        pytest.skip(f"example-robot-data {rel} not installed")
    return path


def load(path, **kw):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the as-found corrections of PR2, Romeo, ... (tested elsewhere)
        return from_urdf(path, **kw)


class PinCoupled:
    """Reference dynamics of our coordinates q from a pinocchio model whose joints `body_names` move by
    q_body = G q + q0 (G = 1, q0 = 0 for pinocchio's own mimic model, whose joints are our coordinates).
    Continuous joints are (cos, sin) in pinocchio's q."""

    def __init__(self, model, body_names, G, q0):
        self.model, self.data = model, model.createData()
        self.free = model.copy()
        self.free.gravity = pin.Motion.Zero()
        self.free_data = self.free.createData()
        joints = [model.joints[model.getJointId(name)] for name in body_names]
        assert all(model.existJointName(name) for name in body_names)
        self.iq = [j.idx_q for j in joints]
        self.iv = np.array([j.idx_v for j in joints])
        self.two = [j.nq == 2 for j in joints]
        self.G, self.q0 = np.asarray(G, float), np.asarray(q0, float)
        assert model.nv == len(body_names)

    def _q(self, q):
        qb = self.G @ q + self.q0
        out = np.zeros(self.model.nq)
        for k, x in enumerate(qb):
            if self.two[k]:
                out[self.iq[k]:self.iq[k] + 2] = np.cos(x), np.sin(x)
            else:
                out[self.iq[k]] = x
        return out

    def _v(self, v):
        out = np.zeros(self.model.nv)
        out[self.iv] = self.G @ v
        return out

    def mass_matrix(self, q):
        M = pin.crba(self.model, self.data, self._q(q))
        M = np.triu(M) + np.triu(M, 1).T
        return self.G.T @ M[np.ix_(self.iv, self.iv)] @ self.G

    def gravity(self, q):
        return self.G.T @ pin.computeGeneralizedGravity(self.model, self.data, self._q(q))[self.iv]

    def rnea(self, q, v, a, model=None):
        model, data = (self.model, self.data) if model is None else (self.free, self.free_data)
        return self.G.T @ pin.rnea(model, data, self._q(q), self._v(v), self._v(a))[self.iv]

    def christoffel(self, q):
        """By polarisation of the gravity-free RNEA at a = 0: τ(v) = Σ_ij C[:, i, j] v_i v_j."""
        n = self.G.shape[1]
        E, zero = np.eye(n), np.zeros(n)
        tau1 = [self.rnea(q, E[i], zero, "free") for i in range(n)]
        C = np.zeros((n, n, n))
        for i in range(n):
            C[:, i, i] = tau1[i]
            for j in range(i + 1, n):
                C[:, i, j] = C[:, j, i] = 0.5 * (self.rnea(q, E[i] + E[j], zero, "free") - tau1[i] - tau1[j])
        return C


def xml_coupling(path, coords):
    """G, q0 and the body joint names of pinocchio's mimic-free model, from the URDF's <mimic> elements
    (an oracle independent of dynamics.urdf_mimic; the example-robot-data files have no chains)."""
    root = ET.parse(path).getroot()
    model = pin.buildModelFromUrdf(path)
    names = [nm for nm in model.names[1:]]
    G, q0 = np.zeros((len(names), len(coords))), np.zeros(len(names))
    for b, name in enumerate(names):
        el = root.find(f"joint[@name='{name}']")
        m = el.find("mimic")
        if m is None:
            G[b, coords.index(name)] = 1.0
        else:
            G[b, coords.index(m.get("joint"))] = float(m.get("multiplier", 1.0))
            q0[b] = float(m.get("offset", 0.0))
    return model, names, G, q0


def compare(robot, ref, seed, christoffel=True):
    rng = np.random.default_rng(seed)
    for _ in range(2):
        q, v, a = (rng.uniform(-1.5, 1.5, robot.n) for _ in range(3))
        M = ref.mass_matrix(q)
        scale = np.abs(M).max()
        assert_rel(dyn.mass_matrix(robot, q), M, TOL, "M")
        assert_rel(dyn.gravity_torques(robot, q), ref.gravity(q), TOL, "g", scale=9.81 * scale)
        assert_rel(dyn.inverse_dynamics(robot, q, v, a), ref.rnea(q, v, a), TOL, "rnea", scale=scale)
        pc = dyn.path_coefficients(robot, q, v, a)
        quad = ref.rnea(q, v, np.zeros(robot.n), "free")
        assert_rel(pc.m, M @ v, TOL, "m~", scale=scale)
        assert_rel(pc.c, M @ a + quad, TOL, "c~", scale=scale)
        assert_rel(pc.d, ref.gravity(q) + robot.coulomb * np.sign(v), TOL, "d~", scale=9.81 * scale)
        if christoffel:
            C = ref.christoffel(q)
            assert_rel(dyn.christoffel(robot, q), C, TOL, "christoffel", scale=scale)
            assert_rel(dyn.christoffel_tree(robot, q), C, TOL, "christoffel_tree", scale=scale)
            assert_rel(dyn.coriolis_matrix(robot, q, v), np.einsum("kij,i->kj", C, v), TOL, "coriolis", scale=scale)


# ------------------------------------------------------------------------------ example-robot-data
@pytest.mark.parametrize("rel, pin_mimic", MIMIC_FILES, ids=[r.split("/")[-1] for r, _ in MIMIC_FILES])
def test_example_robot_data_mimic_joints_coupled_match_pinocchio(rel, pin_mimic):
    path = erd(rel)
    robot = load(path)
    assert robot.coupling is not None and robot.n < robot.n_bodies
    model, names, G, q0 = xml_coupling(path, list(robot.joint_names))
    assert robot.n_bodies == len(names) and np.linalg.matrix_rank(G) == robot.n
    compare(robot, PinCoupled(model, names, G, q0), seed=1)
    if pin_mimic:                                # pinocchio's own coupling (JointModelMimic)
        own = pin.buildModelFromUrdf(path, mimic=True)
        assert own.nv == robot.n
        compare(robot, PinCoupled(own, list(robot.joint_names), np.eye(robot.n), np.zeros(robot.n)), seed=2,
                christoffel=False)
        # the coordinates' position and velocity limits include the followers' (pinocchio keeps the leader's)
        js = [own.joints[own.getJointId(j)] for j in robot.joint_names]
        one = np.array([j.nq == 1 for j in js])                  # continuous joints are (cos, sin) there
        iq = np.array([j.idx_q for j in js])[one]
        assert np.all(robot.q_min[one] >= own.lowerPositionLimit[iq]) and np.all(robot.q_max[one] <= own.upperPositionLimit[iq])
        assert np.all(robot.qd_max <= own.velocityLimit[[j.idx_v for j in js]])


@pytest.mark.parametrize("rel", [r for r, _ in MIMIC_FILES] + [ALEX], ids=lambda r: r.split("/")[-1])
def test_example_robot_data_mimic_joints_independent_match_pinocchio(rel):
    path = erd(rel)
    robot = load(path, mimic="independent")
    assert robot.coupling is None
    model = pin.buildModelFromUrdf(path)
    names = list(model.names[1:])
    assert sorted(names) == sorted(robot.joint_names)
    G = np.eye(robot.n)[[robot.joint_names.index(nm) for nm in names]]
    compare(robot, PinCoupled(model, names, G, np.zeros(robot.n)), seed=3, christoffel=False)


def test_alex_mimics_of_missing_joints_are_refused_when_coupled():
    with pytest.raises(ModelError, match=r"alex_psyonic_hands.urdf: joint 'Left_index_q2' <mimic joint=\"index_q1\">: "
                                         r"no such joint \(load with mimic=\"independent\""):
        load(erd(ALEX))


def test_panda_hand_coupled_fingers(panda_urdf):
    robot = from_urdf(panda_urdf)
    assert robot.n == 8 and robot.n_bodies == 9 and robot.joint_names[-1] == "panda_finger_joint1"
    assert robot.body_joint_names[-1] == "panda_finger_joint2" and robot.tool_frame == "panda_hand_tcp"
    assert robot.q_min[-1] == 0.0 and robot.q_max[-1] == 0.04 and robot.qd_max[-1] == 0.2
    # both fingers open together: their bodies are ±q apart along the hand's y axis
    q = np.zeros(8)
    q[-1] = 0.03
    T = dyn.forward_kinematics(robot, q)
    assert T.shape == (9, 4, 4)
    assert np.isclose(np.linalg.norm(T[7, :3, 3] - T[8, :3, 3]), 0.06, atol=1e-12)


# ------------------------------------------------------------------------------ every example-robot-data URDF
NOT_LOADING = {   # file: why (the same for both modes unless noted)
    "alex_description/urdf/alex_psyonic_hands.urdf": "no such joint",          # coupled only: mimics of missing joints
    "hector_description/robots/quadrotor_base.urdf": "no movable joints",
    "iris_description/robots/iris_simple.urdf": "no movable joints",
    "romeo_description/urdf/romeo_laas_small.urdf": "positive semi-definite",
    "ur_description/urdf/ur3.urdf": "no <link> elements",
}


@pytest.mark.parametrize("mode", ["coupled", "independent"])
def test_which_example_robot_data_urdfs_load(mode):
    """docs/models.md: of the 69 URDFs of example-robot-data, 64 load (65 with mimic="independent")."""
    import glob
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(erd("panda_description/urdf/panda.urdf"))))
    files = sorted(glob.glob(os.path.join(root, "**", "*.urdf"), recursive=True))
    failed = {}
    for f in files:
        try:
            load(f, mimic=mode)
        except ModelError as exc:
            failed[os.path.relpath(f, root)] = str(exc)
    expected = {k: v for k, v in NOT_LOADING.items() if mode == "coupled" or not k.startswith("alex")}
    assert sorted(failed) == sorted(expected), failed
    for rel, why in expected.items():
        assert why in failed[rel]
    assert (len(files), len(files) - len(failed)) == (69, 64 if mode == "coupled" else 65)


def test_collision_shapes_of_coupled_fingers_sit_on_their_own_bodies(panda_urdf):
    from dynamics.urdf_collision import collision_shapes
    robot = from_urdf(panda_urdf)
    shapes = {s.link: s.body for s in collision_shapes(panda_urdf, robot)}
    assert shapes["panda_leftfinger"] == 7 and shapes["panda_rightfinger"] == 8 and shapes["panda_hand"] == 6
    # the poses of the finger shapes follow one coordinate: open by 3 cm, the fingers are 6 cm apart
    q = np.zeros(8)
    q[-1] = 0.03
    T = dyn.forward_kinematics(robot, q)
    assert np.isclose(np.linalg.norm(T[shapes["panda_leftfinger"], :3, 3] - T[shapes["panda_rightfinger"], :3, 3]), 0.06)
