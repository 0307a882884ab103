"""Chang & Khatib's operational-space inertia on a tree robot with mimic joints (audit): a massless coordinate is
named as it is without mimic joints."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dynamics
from dynamics.model import ModelError
from dynamics.operational_space_inertia import operational_space_inertia, operational_space_inertia_inverse
from test_trees import erd_path


@pytest.mark.parametrize("mimic", ["coupled", "independent"])
def test_romeo_hand_that_moves_no_mass_is_named(mimic):
    """Romeo's 'LHand' moves only massless finger links (M[LHand, LHand] = 0 from `mass_matrix`, the oracle).
    Without mimic joints Table 1 names the joint whose D_i = 0; coupled (J M⁻¹ Jᵀ from M, whose Cholesky fails)
    the message said only "a joint moves no mass"."""
    path = erd_path("romeo_description/urdf/romeo.urdf")
    if path is None:
        pytest.skip("example-robot-data is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = dynamics.RobotModel.from_urdf(path, mimic=mimic)
    q = np.zeros(robot.n)
    M = dynamics.mass_matrix(robot, q)
    idle = [robot.joint_names[k] for k in range(robot.n) if M[k, k] == 0.0]
    assert "LHand" in idle
    for f in (operational_space_inertia, operational_space_inertia_inverse):
        with pytest.raises(ModelError) as err:
            f(robot, q, ["l_wrist"])
        text = str(err.value)
        assert text.startswith("joint '") and text.split("'")[1] in idle and "moves no mass" in text
        assert "\n" not in text
