"""Shared test data and helpers (the tests import them from here, not from the benchmark modules):
comparisons, random robots (`dynamics.random_model`) and hypothesis strategies, random states, a
Pinocchio reference, the example-robot-data files and the fixed benchmark paths.

The benchmark suite and the Pinocchio/toppra adapters stay in `benchmarks/` (they are the peers the
benchmarks compare with); this module is the one place the tests take them from."""

from __future__ import annotations

import numpy as np

from benchmarks.cases import BENCH_PATHS, erd_path  # noqa: F401  (one finder of example-robot-data files)
from benchmarks.peers import pinocchio_inverse_dynamics, to_pinocchio  # noqa: F401
from benchmarks import docs_check, docs_commands  # noqa: F401  (the docs' examples, tests/test_docs_examples.py)
from dynamics import RobotModel
from dynamics.random_model import (binary_tree_robot, random_inertia, random_robot, random_rotation,  # noqa: F401
                                   random_tree_robot, serial_chain_robot)

try:
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    st = None

# both fingers locked where <mimic> puts finger 2 (0.02 and 0.03 contradict it: refused)
PANDA_FINGERS = {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02}


# ------------------------------------------------------------------------------ comparison
def rel_err(actual, expected, scale=None) -> float:
    """max |actual − expected| / max |expected| over the whole array (or / ``scale`` when that is
    larger: the size of a related quantity, for arrays that may be all zero)."""
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    s = max(float(np.abs(expected).max(initial=0.0)), float(scale or 0.0), 1e-300)
    return float(np.abs(actual - expected).max(initial=0.0)) / s


def assert_rel(actual, expected, tol, what="", scale=None):
    e = rel_err(actual, expected, scale)
    assert e <= tol, f"{what}: relative error {e:.3e} > {tol:.1e}"


# ------------------------------------------------------------------------------ random robots
def make_random_robot(n: int, parents, prismatic, seed: int, gravity=None) -> RobotModel:
    """Random tree (or chain) with revolute/prismatic joints (one boolean per joint), random placements,
    axes and inertial data, Coulomb/viscous friction, gravity in a random direction (unless given) and a
    named frame ``tip`` on the last body (the tool frame): `dynamics.random_model.random_robot`."""
    robot = random_robot(n, seed, parents=parents, prismatic=list(prismatic), friction=True,
                         random_gravity=gravity is None, tool_frame="tip", name=f"random{n}_{seed}")
    return robot if gravity is None else robot.replace(gravity=np.asarray(gravity, dtype=float))


if st is not None:
    @st.composite
    def random_robots(draw, max_n: int = 6, trees: bool = True, prismatic: bool = True):
        """Hypothesis strategy: random serial chains and trees with revolute and prismatic joints."""
        n = draw(st.integers(1, max_n))
        if trees and draw(st.booleans()):
            parents = [-1] + [draw(st.integers(-1, i - 1)) for i in range(1, n)]
        else:
            parents = list(range(-1, n - 1))
        kinds = [draw(st.booleans()) if prismatic else False for _ in range(n)]
        seed = draw(st.integers(0, 2**31 - 1))
        return make_random_robot(n, parents, kinds, seed)


def random_states(robot: RobotModel, N: int, seed: int = 0):
    """(q, qd, qdd) of shape (N, n): positions within ±π (±0.5 m), moderate speeds/accelerations."""
    rng = np.random.default_rng(seed)
    return (rng.uniform(-np.pi, np.pi, (N, robot.n)), rng.uniform(-2, 2, (N, robot.n)),
            rng.uniform(-3, 3, (N, robot.n)))


# ------------------------------------------------------------------------------ pinocchio
class PinReference:
    """Reference dynamics from a pinocchio model whose joints carry our joint names (each nq = nv = 1)."""

    def __init__(self, pin_model, robot: RobotModel):
        import pinocchio as pin
        self.pin = pin
        self.model = pin_model
        self.data = pin_model.createData()
        self.robot = robot
        idx = []
        for name in robot.joint_names:
            jid = pin_model.getJointId(name)
            j = pin_model.joints[jid]
            assert j.nq == 1 and j.nv == 1, f"joint {name}: nq={j.nq}"
            idx.append(j.idx_q)
        self.idx = np.array(idx)
        assert pin_model.nq == robot.n
        self.free = pin_model.copy()
        self.free.gravity = pin.Motion.Zero()
        self.free_data = self.free.createData()

    def _pin(self, x):
        out = np.zeros(self.model.nq)
        out[self.idx] = x
        return out

    def _ours(self, x):
        return np.asarray(x)[self.idx]

    def _map(self, fn, *arrays):
        arrays = [np.asarray(a, float) for a in arrays]
        single = arrays[0].ndim == 1
        batch = [a[None] if single else a for a in arrays]
        out = np.array([fn(*rows) for rows in zip(*batch)])
        return out[0] if single else out

    def mass_matrix(self, q):
        def one(qi):
            M = self.pin.crba(self.model, self.data, self._pin(qi))
            M = np.triu(M) + np.triu(M, 1).T
            return M[np.ix_(self.idx, self.idx)]
        return self._map(one, q)

    def gravity(self, q):
        def one(qi):
            return self._ours(self.pin.computeGeneralizedGravity(self.model, self.data, self._pin(qi)))
        return self._map(one, q)

    def rnea(self, q, qd, qdd):
        return self._map(lambda a, b, c: self._ours(self.pin.rnea(self.model, self.data, self._pin(a), self._pin(b),
                                                                  self._pin(c))), q, qd, qdd)

    def christoffel(self, q):
        """C[k, i, j] = ½ ∂τ_k/∂v_i at v = e_j, a = 0, no gravity: τ_k(v) = Σ_ij C[k,i,j] v_i v_j is a
        quadratic form, so ∂τ_k/∂v_i = 2 Σ_j C[k,i,j] v_j."""
        n = self.robot.n

        def one(qi):
            C = np.zeros((n, n, n))
            qp = self._pin(qi)
            for j in range(n):
                e = np.zeros(n)
                e[j] = 1.0
                _, dtau_dv, _ = self.pin.computeRNEADerivatives(self.free, self.free_data, qp, self._pin(e),
                                                                np.zeros(n))
                C[:, :, j] = 0.5 * np.asarray(dtau_dv)[np.ix_(self.idx, self.idx)]
            return C
        return self._map(one, q)

    def frame_poses(self, q, names):
        """{name: (4, 4)} for one configuration."""
        pin = self.pin
        pin.framesForwardKinematics(self.model, self.data, self._pin(q))
        out = {}
        for name in names:
            assert self.model.existFrame(name), f"pinocchio model has no frame '{name}'"
            out[name] = self.data.oMf[self.model.getFrameId(name)].homogeneous.copy()
        return out


def default_sigint():
    """`preexec_fn` of a subprocess that must see Ctrl-C: a test run started in the background (`cmd &` in a
    script) has SIGINT ignored, and children inherit that, so Python would never raise KeyboardInterrupt."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)
