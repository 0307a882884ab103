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
