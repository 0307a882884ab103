"""Structural properties of the dynamics on random robots (hypothesis: serial chains and trees with
revolute and prismatic joints), checked with finite differences and identities that do not use the
code under test twice."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dynamics as dyn
from dynamics.robots import load_robot
from fixtures import assert_rel, random_robots, random_states

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
H = 1e-6          # central-difference step


def _dM_dq(robot, q):
    """∂M/∂q_i (n, n, n) at one q by central differences: D[i] = ∂M/∂q_i."""
    n = robot.n
    steps = np.eye(n) * H
    Mp = dyn.mass_matrix(robot, q + steps)
    Mm = dyn.mass_matrix(robot, q - steps)
    return (Mp - Mm) / (2 * H)


@SETTINGS
@given(random_robots(), st.integers(0, 1000))
def test_mass_matrix_symmetric_positive_definite(robot, seed):
    q = random_states(robot, 5, seed)[0]
    M = dyn.mass_matrix(robot, q)
    assert np.allclose(M, np.swapaxes(M, -1, -2), rtol=0, atol=1e-14 * np.abs(M).max())
    assert (np.linalg.eigvalsh(M) > 0).all()


@SETTINGS
@given(random_robots(), st.integers(0, 1000))
def test_inverse_dynamics_decomposition(robot, seed):
    """τ = M q̈ + Σ_ij c^k_ij q̇_i q̇_j + g (eq. 3), batched and single."""
    q, qd, qdd = random_states(robot, 4, seed)
    M = dyn.mass_matrix(robot, q)
    C = dyn.christoffel(robot, q)
    g = dyn.gravity_torques(robot, q)
    tau = np.einsum("nkj,nj->nk", M, qdd) + np.einsum("nkij,ni,nj->nk", C, qd, qd) + g
    scale = np.abs(M).max() * 10
    assert_rel(dyn.inverse_dynamics(robot, q, qd, qdd), tau, 1e-11, "decomposition", scale=scale)
    assert_rel(dyn.inverse_dynamics(robot, q[1], qd[1], qdd[1]), tau[1], 1e-11, "single", scale=scale)
    # gravity alone, Coriolis matrix consistent with the symbols
    assert_rel(dyn.inverse_dynamics(robot, q, 0 * qd, 0 * qdd), g, 1e-11, "g", scale=scale)
    Cm = dyn.coriolis_matrix(robot, q, qd)
    assert_rel(np.einsum("nkj,nj->nk", Cm, qd), np.einsum("nkij,ni,nj->nk", C, qd, qd), 1e-11, "C(q,qd) qd",
               scale=scale)


@SETTINGS
@given(random_robots(), st.integers(0, 1000))
def test_mdot_minus_2c_is_skew(robot, seed):
    q, qd, _ = random_states(robot, 1, seed)
    q, qd = q[0], qd[0]
    Mdot = (dyn.mass_matrix(robot, q + H * qd) - dyn.mass_matrix(robot, q - H * qd)) / (2 * H)
    S = Mdot - 2 * dyn.coriolis_matrix(robot, q, qd)
    # the central difference's error scales with |M| |q̇| (not with |Ṁ|, which can be tiny)
    scale = max(np.abs(Mdot).max(), np.abs(S).max(), np.abs(dyn.mass_matrix(robot, q)).max() * np.abs(qd).max())
    assert np.abs(S + S.T).max() <= 1e-6 * scale


@SETTINGS
@given(random_robots(), st.integers(0, 1000))
def test_christoffel_against_finite_differences(robot, seed):
    """c^k_ij = ½(∂M_kj/∂q_i + ∂M_ki/∂q_j − ∂M_ij/∂q_k)   (Safeea eq. 4)."""
    q = random_states(robot, 1, seed)[0][0]
    D = _dM_dq(robot, q)                                    # D[i, k, j] = ∂M_kj/∂q_i
    C_fd = 0.5 * (np.einsum("ikj->kij", D) + np.einsum("jki->kij", D) - np.einsum("kij->kij", D))
    C = dyn.christoffel(robot, q)
    # central differences round off by ~ε|M|/H (2e-10 |M| at H = 1e-6), which scales with M, not with ∂M: a
    # random robot whose ∂M is small (6.7e-4) next to its M showed 1.6e-9 here
    scale = max(np.abs(D).max(), np.abs(dyn.mass_matrix(robot, q)).max(), 1e-3)
    assert np.abs(C - C_fd).max() <= 1e-6 * scale
    assert np.allclose(C, np.swapaxes(C, -1, -2), rtol=0, atol=1e-15 * max(np.abs(C).max(), 1.0))


@SETTINGS
@given(random_robots(), st.integers(0, 1000))
def test_path_coefficients_consistent_with_inverse_dynamics(robot, seed):
    """With q̇ = q′θ̇ and q̈ = q′θ̈ + q″θ̇²: τ + F_c sign(q̇) = m̃ θ̈ + c̃ θ̇² + d̃ (θ̇ > 0)."""
    rng = np.random.default_rng(seed)
    N = 5
    q, dq, ddq = random_states(robot, N, seed)
    sd = rng.uniform(0.1, 2.0, N)[:, None]
    sdd = rng.uniform(-3.0, 3.0, N)[:, None]
    pc = dyn.path_coefficients(robot, q, dq, ddq)
    tau = dyn.inverse_dynamics(robot, q, dq * sd, dq * sdd + ddq * sd**2) + robot.coulomb * np.sign(dq)
    scale = np.abs(dyn.mass_matrix(robot, q)).max() * 10
    assert_rel(pc.m * sdd + pc.c * sd**2 + pc.d, tau, 1e-11, "path coefficients", scale=scale)
    one = dyn.path_coefficients(robot, q[2], dq[2], ddq[2])
    for a, b in zip(one, pc):
        assert_rel(a, b[2], 1e-14, "single sample", scale=scale)
    assert_rel(pc.m, np.einsum("nkj,nj->nk", dyn.mass_matrix(robot, q), dq), 1e-13, "m = M q'", scale=scale)


@SETTINGS
@given(random_robots(), st.integers(0, 1000))
def test_gravity_is_gradient_of_potential_energy(robot, seed):
    """g = ∂V/∂q with V = −Σ m_b g0 · c_b (COMs from forward kinematics)."""
    q = random_states(robot, 1, seed)[0][0]

    def V(qq):
        T = dyn.forward_kinematics(robot, qq)
        c = np.einsum("...bij,bj->...bi", T[..., :3, :3], robot.coms) + T[..., :3, 3]
        return -np.einsum("b,...bi,i->...", robot.masses, c, robot.gravity)

    steps = np.eye(robot.n) * H
    g_fd = (V(q + steps) - V(q - steps)) / (2 * H)
    g = dyn.gravity_torques(robot, q)
    assert np.abs(g - g_fd).max() <= 1e-6 * max(np.abs(g).max(), 1.0)


# ------------------------------------------------------------------------------ Safeea's error metric
def safeea_error(C, C_ref, zero=1e-6):
    """Safeea eq. 31: e = 2/n³ Σ |(c − ĉ)/(c + ĉ)| over the non-zero symbols. In floating point a
    structurally zero symbol comes out as ±1e-20 or so, and both ours and the reference carry an
    absolute rounding error of a few 1e-15 × max|ĉ| (asserted below), so a symbol below ``zero`` ·
    max|ĉ| is only known to ~1e-9 relative; such symbols count as zero."""
    n = C.shape[-1]
    mask = np.abs(C_ref) > zero * np.abs(C_ref).max()
    return 2.0 / n**3 * np.sum(np.abs((C - C_ref)[mask] / (C + C_ref)[mask]))


@pytest.mark.parametrize("name", ["panda", "iiwa7"])
def test_safeea_error_metric_against_pinocchio(name):
    pytest.importorskip("pinocchio")
    from fixtures import PinReference, to_pinocchio
    robot = load_robot(name)
    ref = PinReference(to_pinocchio(robot), robot)
    q = random_states(robot, 40, 11)[0]
    C, C_ref = dyn.christoffel(robot, q), ref.christoffel(q)
    scale = np.abs(C_ref).max(axis=(1, 2, 3), keepdims=True)
    assert (np.abs(C - C_ref) <= 1e-13 * scale).all()          # every symbol, absolute, per configuration
    e = np.array([safeea_error(c, cr) for c, cr in zip(C, C_ref)])
    # Safeea report 2.2e-14 worst case for their 5-DOF arm against symbolic expressions
    assert np.median(e) <= 1e-13
    assert e.max() <= 1e-12
