"""Hostile library arguments (issue 11): every value either works or raises a ValueError subclass whose one-line
message names the argument — never TypeError, IndexError, AttributeError or silently accepted nonsense.
Hypothesis draws the values; the count of cases tried is reported in docs/safety.md."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dynamics
from dynamics.builders import from_mdh
from dynamics.model import RobotModel
from dynamics.payload import RigidBodyInertia
from dynamics.urdf import from_urdf
from toppra_app import JointPath, plan_time_optimal
from toppra_app.planner import TimeOptimalPlanner

HOSTILE = st.one_of(
    st.none(), st.booleans(), st.text(max_size=5), st.binary(max_size=4), st.complex_numbers(allow_nan=True),
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 10**30),
    st.lists(st.floats(allow_nan=True), max_size=9), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.builds(object), st.just(np.full((2, 2), 1.0)), st.just(np.eye(3) * 2), st.just(np.zeros((3, 3))),
    st.just([[1, 2], [3]]), st.just(np.array([1 + 1j, 2])),
)
# a complex value silently losing its imaginary part is "nonsense accepted": make numpy's warning an error
pytestmark = pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")
FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@functools.lru_cache(maxsize=None)
def robot():
    return dynamics.load_robot("iiwa7")


@functools.lru_cache(maxsize=None)
def path():
    return JointPath.from_waypoints([[0, 0.3, 0, -1.2, 0, 0.8, 0], [1.2, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5]])


def clean_or_named(fn, name):
    """fn() succeeds, or raises a ValueError subclass naming `name` on one line."""
    try:
        return fn()
    except ValueError as exc:
        msg = str(exc)
        assert name in msg, f"message does not name {name!r}: {msg}"
        assert "\n" not in msg.strip(), msg
        return None


@FAST
@given(value=HOSTILE, field=st.sampled_from(["tau_max", "qd_max", "qdd_max", "q_min", "q_max"]))
def test_with_limits(value, field):
    out = clean_or_named(lambda: robot().with_limits(**{field: value}), field)
    if out is not None:
        v = getattr(out, field)
        assert v.shape == (7,) and not np.isnan(v).any()


@FAST
@given(mass=HOSTILE, com=HOSTILE, inertia=HOSTILE)
def test_rigid_body_inertia(mass, com, inertia):
    out = clean_or_named(lambda: RigidBodyInertia(mass, com, inertia), "payload")
    if out is not None:
        assert np.isfinite(out.mass) and out.mass >= 0 and np.isfinite(out.inertia).all()
        assert np.linalg.eigvalsh(out.inertia).min() >= -1e-9 * max(1.0, np.abs(out.inertia).max())


@FAST
@given(rotation=HOSTILE)
def test_box_rotation_must_be_a_rotation(rotation):
    out = clean_or_named(lambda: RigidBodyInertia.box(2.0, (0.1, 0.2, 0.3), rotation=rotation), "rotation")
    if out is not None:                 # a proper rotation keeps the principal moments
        ref = RigidBodyInertia.box(2.0, (0.1, 0.2, 0.3))
        np.testing.assert_allclose(np.linalg.eigvalsh(out.inertia), np.linalg.eigvalsh(ref.inertia), atol=1e-12)


@pytest.mark.parametrize("rotation", [2 * np.eye(3), np.zeros((3, 3)), np.full((3, 3), np.nan), np.eye(2),
                                      np.diag([1.0, 1.0, -1.0])])
def test_a_non_rotation_never_scales_the_inertia(rotation):
    with pytest.raises(ValueError, match="rotation"):
        RigidBodyInertia.box(2.0, (0.1, 0.2, 0.3), rotation=rotation)


@pytest.mark.parametrize("other", [3.0, 1, "box", None, np.ones(3)])
def test_adding_something_else_to_a_payload(other):
    box = RigidBodyInertia.box(2.0, (0.1, 0.2, 0.3))
    for fn in (lambda: box + other, lambda: other + box):
        with pytest.raises(ValueError, match="RigidBodyInertia"):
            fn()
    assert sum([box, box]).mass == 4.0


@FAST
@given(option=st.sampled_from(["grid", "max_rounds", "substeps", "tol", "sd_start", "sd_end", "max_splits",
                               "max_viscous_iterations", "scheme", "solver", "payload"]),
       value=HOSTILE)
def test_planner_options(option, value):
    if option == "payload" and isinstance(value, (int, float)) and not isinstance(value, bool) and \
            0 <= value <= 20:
        return                                           # a plain mass in kg: a valid payload
    kwargs = {option: value}
    out = clean_or_named(lambda: plan_time_optimal(robot(), path(), **kwargs), option)
    if out is not None:
        assert np.isfinite(out.duration) and out.duration > 0


@pytest.mark.parametrize("robot_arg", [None, "iiwa7", 3, object()])
def test_planner_wants_a_robot_model(robot_arg):
    with pytest.raises(ValueError, match="robot"):
        TimeOptimalPlanner(robot_arg, path())


@FAST
@given(value=HOSTILE)
def test_from_urdf_path(value):
    clean_or_named(lambda: from_urdf(value), "")           # any message, but a ValueError


def test_from_urdf_none_names_the_argument():
    with pytest.raises(ValueError, match="path"):
        from_urdf(None)


@FAST
@given(gravity=HOSTILE)
def test_from_mdh_gravity(gravity):
    clean_or_named(lambda: from_mdh("x", [0], [0], [0.3], [0], [1.0], [[0, 0, 0]], [np.eye(3) * 0.01],
                                    gravity=gravity), "gravity")


BASE = dict(name="x", parents=[-1, 0], joint_types=["revolute", "revolute"],
            placement_rotations=[np.eye(3)] * 2, placement_translations=[[0, 0, 0], [0, 0, 0.3]],
            axes=[[0, 0, 1], [0, 1, 0]], masses=[1.0, 1.0], coms=[[0, 0, 0.1]] * 2, inertias=[np.eye(3) * 0.01] * 2)


@FAST
@given(field=st.sampled_from(["parents", "placement_rotations", "placement_translations", "axes", "masses", "coms",
                              "inertias", "gravity"]), value=HOSTILE)
def test_robot_model_create(field, value):
    named = {"parents": "", "masses": "mass"}.get(field, field)
    out = clean_or_named(lambda: RobotModel.create(**{**BASE, field: value}), named)
    if out is not None:
        assert out.n == 2


@FAST
@given(waypoints=HOSTILE, s=st.one_of(st.none(), HOSTILE))
def test_joint_path(waypoints, s):
    clean_or_named(lambda: JointPath.from_waypoints(waypoints, s=s), "")
