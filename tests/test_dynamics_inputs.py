"""Inputs of the public dynamics functions that used to give silent nonsense or a numpy error (audit of
the dynamics layer): complex, boolean and masked arrays, rates so large that the torques overflow, an
empty batch of configurations for the operational-space inertia, and its `frames` and `rcond` arguments.
Each is refused with one `ModelError` line naming the argument, or (empty batch, large but finite rates)
computed and checked against Pinocchio."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import dynamics as dyn
from dynamics.christoffel_tree import christoffel_tree

pin = pytest.importorskip("pinocchio")


@functools.lru_cache(maxsize=None)
def panda():
    return dyn.load_robot("panda")


GOOD = np.full(7, 0.2)
FUNCTIONS = {
    "forward_kinematics": ("q", lambda x: dyn.forward_kinematics(panda(), x)),
    "frame_jacobian": ("q", lambda x: dyn.frame_jacobian(panda(), x)),
    "mass_matrix": ("q", lambda x: dyn.mass_matrix(panda(), x)),
    "gravity_torques": ("q", lambda x: dyn.gravity_torques(panda(), x)),
    "christoffel": ("q", lambda x: dyn.christoffel(panda(), x)),
    "christoffel_tree": ("q", lambda x: christoffel_tree(panda(), x)),
    "inverse_dynamics": ("qd", lambda x: dyn.inverse_dynamics(panda(), GOOD, x, GOOD)),
    "coriolis_matrix": ("qd", lambda x: dyn.coriolis_matrix(panda(), GOOD, x)),
    "path_coefficients": ("ddq", lambda x: dyn.path_coefficients(panda(), GOOD, GOOD, x)),
    "operational_space_inertia": ("q", lambda x: dyn.operational_space_inertia(panda(), x)),
    "friction_torques": ("qd", lambda x: dyn.friction_torques(panda(), x)),
}
NOT_REAL = {
    "complex": (np.full(7, 0.2 + 0.5j), "complex"),           # np.asarray(float) dropped the imaginary part
    "complex list": ([0.2 + 0.5j] * 7, "complex"),
    "boolean": (np.ones(7, dtype=bool), "boolean"),           # read as 1.0 rad
    "masked": (np.ma.masked_array(GOOD, mask=[True] + [False] * 6), "masked"),   # the mask was ignored
}


@pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("value", list(NOT_REAL), ids=str)
@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_values_that_are_not_real_numbers_are_refused(function, value):
    argument, fn = FUNCTIONS[function]
    x, kind = NOT_REAL[value]
    with pytest.raises(dyn.ModelError) as err:
        fn(x)
    msg = str(err.value)
    assert msg.startswith(f"{argument}: ") and kind in msg and "\n" not in msg


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("function", ["inverse_dynamics", "path_coefficients", "motor_torques"])
def test_rates_that_overflow_are_refused_in_one_line(function):
    """Rates of 1e160 rad/s square to inf: the torques were NaN, with only numpy RuntimeWarnings."""
    robot, huge = panda(), np.full(7, 1e160)
    call = {"inverse_dynamics": lambda: dyn.inverse_dynamics(robot, GOOD, huge, GOOD),
            "motor_torques": lambda: dyn.motor_torques(robot, GOOD, huge, GOOD),
            "path_coefficients": lambda: dyn.path_coefficients(robot, GOOD, huge, GOOD)}[function]
    with pytest.raises(dyn.ModelError) as err:
        call()
    msg = str(err.value)
    assert "values too large" in msg and "1e+160" in msg and "\n" not in msg
    assert msg.startswith("dq, ddq: " if function == "path_coefficients" else "qd, qdd: ")


def test_large_finite_rates_still_agree_with_pinocchio():
    """The overflow check refuses only non-finite results: q̇ = 1e100 still gives Pinocchio's torques."""
    from fixtures import PinReference, to_pinocchio
    robot = panda()
    ref = PinReference(to_pinocchio(robot), robot)
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-2, 2, (3, 7)), 1e100 * rng.uniform(-1, 1, (3, 7)), rng.uniform(-1, 1, (3, 7))
    tau = dyn.inverse_dynamics(robot, q, qd, qdd)
    expected = ref.rnea(q, qd, qdd)
    assert np.abs(tau - expected).max() <= 1e-12 * np.abs(expected).max()
    pc = dyn.path_coefficients(robot, q, qd, qdd)
    assert np.abs(pc.c - (expected - ref.gravity(q))).max() <= 1e-12 * np.abs(expected).max()


def test_operational_space_inertia_of_an_empty_batch():
    """N = 0 configurations give empty results, as every other function (it was numpy's 'zero-size array
    to reduction operation maximum')."""
    q = np.zeros((0, 7))
    assert dyn.operational_space_inertia_inverse(panda(), q).shape == (0, 6, 6)
    assert dyn.operational_space_inertia(panda(), q, ["flange", "panda_link4"]).shape == (0, 12, 12)
    assert dyn.operational_space_inertia_inverse(panda(), q, ["flange", "panda_link4"]).shape == (0, 12, 12)


@pytest.mark.parametrize("rcond", [np.nan, -1.0, 1.0, 1e300, "1e-12", None, True])
def test_operational_space_inertia_rcond_is_checked(rcond):
    """A NaN or negative rcond disabled the singularity test: Λ of the Panda at q = 0 (a singular
    configuration) came back with entries of 8e16."""
    with pytest.raises(dyn.ModelError) as err:
        dyn.operational_space_inertia(panda(), np.zeros(7), rcond=rcond)
    assert str(err.value).startswith("rcond: expected a number in [0, 1)")


def test_operational_space_inertia_rcond_zero_and_default_against_pinocchio():
    """rcond = 0 is allowed; Λ = (J M⁻¹ Jᵀ)⁻¹ from Pinocchio's CRBA and LOCAL_WORLD_ALIGNED Jacobian."""
    from fixtures import to_pinocchio
    robot = panda()
    model = to_pinocchio(robot)
    data = model.createData()
    q = np.array([0.3, -0.5, 0.2, -2.0, 0.1, 1.6, 0.7])
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    J = pin.getFrameJacobian(model, data, model.getFrameId("flange"), pin.LOCAL_WORLD_ALIGNED)
    expected = np.linalg.inv(J @ np.linalg.solve(M, J.T))
    for rcond in (0.0, 1e-12):
        L = dyn.operational_space_inertia(robot, q, "flange", rcond=rcond)
        assert np.abs(L - expected).max() <= 1e-9 * np.abs(expected).max()


@pytest.mark.parametrize("frames", [123, 4.5, object()])
def test_operational_space_inertia_frames_must_be_names(frames):
    with pytest.raises(dyn.ModelError) as err:
        dyn.operational_space_inertia_inverse(panda(), GOOD, frames)
    assert str(err.value).startswith("frames: expected a frame name or a list of frame names")


@pytest.mark.parametrize("direction, what", [
    ("x", "direction: expected real numbers"), (np.full(7, np.nan), "direction: non-finite value"),
    (np.full(7, 1 + 1j), "direction: expected real numbers"), (np.ones(6), "direction: expected shape"),
    (np.ones((3, 7)), "direction: shape (3, 7) does not match qd's shape (7,)"),      # was broadcast to (3, 7)
    (np.ones((2, 1)), "direction: expected shape")])
def test_motor_torques_direction_is_checked(direction, what):
    with pytest.raises(dyn.ModelError) as err:
        dyn.motor_torques(panda(), GOOD, GOOD, GOOD, direction)
    assert str(err.value).startswith(what)


def test_motor_torques_with_direction_against_pinocchio():
    """RNEA (Pinocchio) + F_c sign(direction) + F_v q̇, batched and single."""
    from fixtures import PinReference, to_pinocchio
    robot = panda()
    ref = PinReference(to_pinocchio(robot), robot)
    rng = np.random.default_rng(9)
    q, qd, qdd, d = rng.uniform(-1, 1, (4, 5, 7))
    expected = ref.rnea(q, qd, qdd) + robot.coulomb * np.sign(d) + robot.viscous * qd
    assert np.abs(dyn.motor_torques(robot, q, qd, qdd, d) - expected).max() <= 1e-12 * np.abs(expected).max()
    assert np.abs(dyn.motor_torques(robot, q[1], qd[1], qdd[1], list(d[1])) - expected[1]).max() <= 1e-12 * np.abs(expected).max()
