"""The one scalar check (`toppra_app.checks`) and every argument that uses it: hostile values (bools, np.bool_,
text such as "0.001", bytes, complex, None, NaN, ±inf, arrays) and values just outside the range each raise a
one-line `InputError` (a `ValueError`) naming the argument; values inside, numpy scalars among them, are taken.
(`sample_times(1, "0.001")` sampled every 1 ms and `sample_times(1, True)` every second before.)"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import dynamics
from toppra_app import JointPath
from toppra_app.checks import real, whole
from toppra_app.errors import InputError
from toppra_app.planning.options import number, whole as option_whole

NOT_A_NUMBER = st.one_of(
    st.none(), st.booleans(), st.sampled_from([np.True_, np.False_]), st.text(max_size=6),
    st.sampled_from(["0.001", "1", "nan", " 2 "]), st.binary(max_size=4), st.complex_numbers(),
    st.sampled_from([math.nan, math.inf, -math.inf, np.float64("nan"), np.float32("inf"), 10**400, -10**400]),
    st.lists(st.floats(0.1, 1.0), min_size=1, max_size=3),
    st.sampled_from([np.array(0.5), np.array([0.5]), {}, object()]),
)
FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@functools.lru_cache(maxsize=None)
def robot():
    return dynamics.load_robot("iiwa7")


@functools.lru_cache(maxsize=None)
def path():
    return JointPath.from_waypoints(np.array([[0.0] * 7, [0.3, -0.2, 0.1, -1.0, 0.2, 0.4, 0.1]]))


def _refused(call, value, name: str) -> None:
    with pytest.raises(InputError) as exc:
        call(value)
    msg = str(exc.value)
    assert isinstance(exc.value, ValueError) and msg.startswith(f"{name}: ") and "\n" not in msg, msg


# ------------------------------------------------------------------------------------------- the checks
@pytest.mark.parametrize("bounds", ["[]", "(]", "[)", "()"])
def test_real_bounds_open_and_closed(bounds):
    assert real(0.5, "x", 0, 1, bounds=bounds) == 0.5
    for end, v in ((0, 0.0), (1, 1.0)):
        if bounds[end] in "[]":
            assert real(v, "x", 0, 1, bounds=bounds) == v
        else:
            _refused(lambda v: real(v, "x", 0, 1, bounds=bounds), v, "x")
    _refused(lambda v: real(v, "x", 0, 1, bounds=bounds), -1e-12, "x")
    _refused(lambda v: real(v, "x", 0, 1, bounds=bounds), 1 + 1e-12, "x")


def test_real_messages_say_the_range():
    with pytest.raises(InputError, match=r"^rms_tol: must be a finite number in \(0, 1\), got 1$"):
        real(1, "rms_tol", 0, 1, bounds="()")
    with pytest.raises(InputError, match=r"^dt: expected a number of seconds > 0, got '0\.001'$"):
        real("0.001", "dt", 0, None, bounds="(]", unit=" of seconds")
    with pytest.raises(InputError, match=r"^n: expected a whole number >= 0, got 1\.5$"):
        whole(1.5, "n", 0, None)
    assert real(math.inf, "tau", 0, None, bounds="(]", allow_inf=True) == math.inf
    with pytest.raises(InputError, match=r"^tau: must be a number > 0, got nan$"):
        real(math.nan, "tau", 0, None, bounds="(]", allow_inf=True)


@FAST
@given(value=NOT_A_NUMBER)
def test_real_and_whole_refuse_what_is_not_a_finite_number(value):
    _refused(lambda v: real(v, "x"), value, "x")
    _refused(lambda v: whole(v, "n"), value, "n")


@FAST
@given(value=st.one_of(st.floats(-1e6, 1e6), st.integers(-10**6, 10**6)),
       kind=st.sampled_from([float, np.float64, np.float32, np.int64, int]))
def test_numpy_scalars_are_numbers(value, kind):
    v = kind(value)
    assert real(v, "x") == float(v)
    if float(v).is_integer():
        assert whole(v, "n") == int(float(v)) and type(whole(v, "n")) is int
    else:
        _refused(lambda x: whole(x, "n"), v, "n")


# ------------------------------------------------------------------------------------------- the arguments
def _thermal(option):
    def call(v):
        from toppra_app.objectives.thermal import plan_cycle_with_rms_limit
        return plan_cycle_with_rms_limit(robot(), [path()], 1e3, grid=20, **{option: v})
    return call


def _planner(option, **other):
    def call(v):
        from toppra_app.planner import TimeOptimalPlanner
        return TimeOptimalPlanner(robot(), path(), 20, **other, **{option: v})
    return call


def _sample_times(v):
    from toppra_app.trajectory import sample_times
    return sample_times(1.0, v)


def _cycle_rms(v):
    from toppra_app.objectives.thermal import cycle_rms
    return cycle_rms([], 0.0, v)


def _cartesian(v):
    from toppra_app.limits.cartesian import CartesianSpeedLimit
    return CartesianSpeedLimit(v)


# name: (call with the value, values just outside the range)
ARGUMENTS = {
    "dt": (_sample_times, [0, -1e-3, -0.0]),
    "dt ": (_cycle_rms, [0, -1.0]),
    "round_tol": (_thermal("round_tol"), [0, 1, 1.5, -0.1]),
    "rms_tol": (_thermal("rms_tol"), [0, 1.0, -1]),
    "max_retighten": (_thermal("max_retighten"), [-1, 1.5]),
    "dt  ": (_thermal("dt"), [0, -1e-3]),
    "substeps": (_planner("substeps"), [0, 1001, 2.5]),
    "max_rounds": (_planner("max_rounds"), [-1, 1001]),
    "max_splits": (_planner("max_splits"), [-1, 11]),
    "tol": (_planner("tol"), [-1e-9, 1.0000001]),
    "gap_target": (_planner("gap_target"), [-0.1, 2]),
    "max_viscous_iterations": (_planner("max_viscous_iterations"), [-1, 101]),
    "max_rate_iterations": (_planner("max_rate_iterations"), [0, 1001]),
    "energy_weight": (_planner("energy_weight"), [-1e-3]),
    "rate_dt": (_planner("rate_dt", torque_rate_max=500.0), [0, -1e-3]),
    "tool_speed_max": (_planner("tool_speed_max"), [0, -1.0]),
    "collision_energy_max": (_planner("collision_energy_max"), [0, -1.0]),
    "v_max": (_cartesian, [0, -2.0]),
}
NONE_IS_DEFAULT = {"gap_target", "tool_speed_max", "collision_energy_max"}     # None: not given


@pytest.fixture
def no_planning(monkeypatch):
    from toppra_app import planner

    def refuse(*a, **k):
        raise AssertionError("planned before checking the options")
    monkeypatch.setattr(planner.TimeOptimalPlanner, "plan", refuse)


@pytest.mark.parametrize("key", list(ARGUMENTS))
@FAST
@given(value=NOT_A_NUMBER)
def test_hostile_values_name_the_argument(key, value, no_planning):
    assume(not (value is None and key in NONE_IS_DEFAULT))
    call, _ = ARGUMENTS[key]
    _refused(call, value, key.strip())


@pytest.mark.parametrize("key", list(ARGUMENTS))
def test_values_outside_the_range_name_the_argument(key, no_planning):
    call, outside = ARGUMENTS[key]
    for v in outside:
        _refused(call, v, key.strip())


def test_inside_the_range_is_taken():
    from toppra_app.trajectory import sample_times
    np.testing.assert_allclose(sample_times(1.0, np.float32(0.25)), [0, 0.25, 0.5, 0.75, 1.0])
    assert sample_times(2, 1).tolist() == [0.0, 1.0, 2.0]
    assert _planner("substeps")(np.int64(3)).substeps == 3
    assert _planner("max_rounds")(4.0).max_rounds == 4
    assert _planner("tol")(np.float32(0.5)).tol == 0.5
    with pytest.raises(InputError, match=r"^--sd-start: must be a finite number from 0 to 1e\+150, got -1\.0$"):
        number(-1.0, "--sd-start")
    assert option_whole(np.int8(7), "k", 0, 10) == 7


@pytest.mark.parametrize("value", [[True, True, True], np.True_, True, ["1", "2", "3"], "7", [1 + 0j] * 3,
                                   np.array([True, False, True]), [None, 1.0, 1.0]])
def test_per_joint_values_refuse_what_is_not_numbers(value):
    """Per-joint limits (torque_rate_max, jerk_max, the controller's, a waypoint tolerance): booleans were read
    as 1 ([True] * 7 a torque rate of 1 N·m/s) and text as its number; one line naming the field now."""
    from toppra_app.errors import InputError
    from toppra_app.limits.rows import per_joint_positive
    with pytest.raises(InputError, match=r"^torque_rate_max: expected a number or 3 numbers"):
        per_joint_positive(value, 3, "torque_rate_max")


def test_per_joint_values_take_ints_floats_and_numpy():
    from toppra_app.limits.rows import per_joint_positive
    np.testing.assert_array_equal(per_joint_positive([1, 2.5, np.inf], 3, "x"), [1.0, 2.5, np.inf])
    np.testing.assert_array_equal(per_joint_positive(np.int64(2), 3, "x"), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(per_joint_positive(np.array([1, 2, 3], np.float32), 3, "x"), [1.0, 2.0, 3.0])


def test_numpy_scalars_read_as_numbers_in_messages():
    """numpy 2 writes np.int64(0) / np.True_ for repr; a message shows what the user would type."""
    with pytest.raises(InputError, match=r"^substeps: expected a whole number from 1 to 1000, got 0$"):
        _planner("substeps")(np.int64(0))
    with pytest.raises(InputError, match=r", got True$"):
        _planner("substeps")(np.True_)
    with pytest.raises(InputError, match=r"got \[1\.5, nan\]$"):
        number([np.float64(1.5), np.float64("nan")], "gap")
