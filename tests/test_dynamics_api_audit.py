"""The dynamics API called as a Pinocchio user would (the dynamics audit): hostile arguments end in one
line naming the argument (a ValueError subclass), never TypeError, OverflowError, AttributeError or a text
parsed as numbers; valid inputs of any dtype or memory layout agree with Pinocchio."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import dynamics as dyn
from dynamics import IKError, ModelError, PayloadError
from dynamics.kinematics import world_quantities_t

HUGE_INT = 10**400                      # a Python int no double holds: float() raises OverflowError


@functools.lru_cache(maxsize=None)
def robot():
    return dyn.load_robot("iiwa7")


def q0():
    return np.linspace(0.1, 0.7, robot().n)


def one_line_naming(exc_info, name: str):
    msg = str(exc_info.value)
    assert name in msg, msg
    assert "\n" not in msg and len(msg) < 400, msg


# ------------------------------------------------------------------------------ configurations
@pytest.mark.parametrize("q", [np.array(["0.1"] * 7), ["0.1"] * 7, [HUGE_INT] * 7, [0.1] * 6 + [HUGE_INT]])
@pytest.mark.parametrize("function", [dyn.mass_matrix, dyn.gravity_torques, dyn.christoffel, dyn.forward_kinematics])
def test_text_and_huge_ints_are_not_configurations(function, q):
    """Text was parsed ("0.1" → 0.1, unlike Pinocchio), an int beyond a double raised OverflowError."""
    with pytest.raises(ModelError) as exc:
        function(robot(), q)
    one_line_naming(exc, "q")


def test_text_rates_are_refused_too():
    with pytest.raises(ModelError) as exc:
        dyn.inverse_dynamics(robot(), q0(), np.array(["1"] * 7), q0())
    one_line_naming(exc, "qd")


# ------------------------------------------------------------------------------ names in messages
@pytest.mark.parametrize("frame", ["a\nb", "x" * 1000])
@pytest.mark.parametrize("function", [dyn.frame_pose, dyn.frame_jacobian, dyn.operational_space_inertia])
def test_an_unknown_frame_is_one_short_line(function, frame):
    with pytest.raises(ModelError) as exc:
        function(robot(), q0(), frame if function is not dyn.operational_space_inertia else [frame])
    one_line_naming(exc, "frame")


@pytest.mark.parametrize("frame", [np.ones(3), np.eye(4), 3, ("flange",)])
def test_a_frame_that_is_not_a_name_is_named(frame):
    """An array reached `name in tuple`: numpy's "truth value … is ambiguous", naming nothing."""
    for call in (lambda: dyn.frame_pose(robot(), q0(), frame), lambda: dyn.with_payload(robot(), 1.0, frame)):
        with pytest.raises(ModelError) as exc:
            call()
        one_line_naming(exc, "frame")


@pytest.mark.parametrize("name", ["a\nb", np.eye(3), HUGE_INT])
def test_an_unknown_robot_is_one_short_line(name):
    with pytest.raises(ModelError) as exc:
        dyn.load_robot(name)
    one_line_naming(exc, "unknown built-in robot")


def test_an_unknown_joint_is_one_line():
    with pytest.raises(ModelError) as exc:
        robot().joint_index("j\n1")
    one_line_naming(exc, "no such joint")


# ------------------------------------------------------------------------------ inverse dynamics' world=
@pytest.mark.parametrize("world", [5, "abc", np.zeros((7, 3, 1)), (1, 2)])
def test_world_must_be_world_quantities(world):
    with pytest.raises(ModelError) as exc:
        dyn.inverse_dynamics(robot(), q0(), q0(), q0(), world=world)
    one_line_naming(exc, "world")


def test_world_quantities_give_the_same_torques():
    q = np.stack((q0(), -q0()))
    tau = dyn.inverse_dynamics(robot(), q, q, q, world=world_quantities_t(robot(), q))
    np.testing.assert_array_equal(tau, dyn.inverse_dynamics(robot(), q, q, q))


# ------------------------------------------------------------------------------ payloads and limits
@pytest.mark.parametrize("call, name", [
    (lambda: dyn.with_payload(robot(), HUGE_INT), "payload"),
    (lambda: dyn.RigidBodyInertia(HUGE_INT, (0, 0, 0), np.zeros((3, 3))), "payload"),
    (lambda: dyn.RigidBodyInertia(1.0, (0, 0, HUGE_INT), np.zeros((3, 3))), "payload"),
    (lambda: robot().with_limits(tau_max=HUGE_INT), "tau_max"),
    (lambda: robot().with_limits(q_min=[HUGE_INT] * 7), "q_min"),
    (lambda: dyn.operational_space_inertia(robot(), q0(), rcond=HUGE_INT), "rcond"),
])
def test_ints_beyond_a_double_are_named(call, name):
    with pytest.raises(ModelError) as exc:
        call()
    one_line_naming(exc, name)


def test_a_huge_payload_is_a_payload_error():
    with pytest.raises(PayloadError):
        dyn.with_payload(robot(), HUGE_INT)


@pytest.mark.parametrize("field, value", [("gravity", [0.0, -9.81]), ("gravity", [0.0, 0.0, -9.81 + 1j]),
                                          ("gravity", "abc"), ("coms", np.zeros((7, 2))),
                                          ("inertias", np.full((7, 3, 3), np.nan))])
def test_replace_checks_arrays_as_create_does(field, value):
    """replace() stored a gravity of 2 values (or dropped an imaginary part) as given."""
    with pytest.raises(ModelError) as exc:
        robot().replace(**{field: value})
    one_line_naming(exc, field)


def test_replace_gravity_scales_the_gravity_torques():
    q = np.stack((q0(), -q0()))
    g3 = dyn.gravity_torques(robot().replace(gravity=(0, 0, -3)), q)
    np.testing.assert_allclose(g3, dyn.gravity_torques(robot(), q) * (3 / 9.81), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------ inverse kinematics
def target():
    return dyn.frame_pose(robot(), q0() + 0.05)


BAD = [{"a": 1}, object(), 1j, HUGE_INT, np.full(7, 0.5) + 1j, np.array(["1"] * 7)]


@pytest.mark.parametrize("value", BAD)
@pytest.mark.parametrize("solver", [dyn.solve_ik, dyn.solve_ik_dls])
def test_ik_target_and_start_are_named(solver, value):
    """TypeError, OverflowError, or an imaginary part dropped with a ComplexWarning."""
    for name, args in (("q0", (target(), value)), ("target", (value, q0()))):
        with pytest.raises(IKError) as exc:
            solver(robot(), *args)
        one_line_naming(exc, name)


@pytest.mark.parametrize("value", BAD)
def test_pose_error_and_track_path_inputs_are_named(value):
    for name, call in (("q", lambda: dyn.pose_error(robot(), value, target())),
                       ("target", lambda: dyn.pose_error(robot(), q0(), value)),
                       ("targets", lambda: dyn.track_path(robot(), value, q0())),
                       ("q0", lambda: dyn.track_path(robot(), target()[None], value))):
        with pytest.raises(IKError) as exc:
            call()
        one_line_naming(exc, name)


OPTIONS = [("tol_pos", None), ("tol_pos", "1e-6"), ("tol_rot", np.ones(3)), ("max_sweeps", None),
           ("max_sweeps", 2.5), ("max_sweeps", True), ("rot_weight", [0.2]), ("rot_weight", HUGE_INT),
           ("newton_steps", "30"), ("damping", None), ("damping", float("nan")), ("penalty", np.ones(2)),
           ("step", np.ones(2)), ("q_min", np.zeros(3)), ("q_max", "abc"), ("newton_switch", -1.0)]


@pytest.mark.parametrize("option, value", OPTIONS)
def test_solve_ik_options_are_named(option, value):
    with pytest.raises(IKError) as exc:
        dyn.solve_ik(robot(), target(), q0(), **{option: value})
    one_line_naming(exc, option)


@pytest.mark.parametrize("option, value", [("tol_pos", None), ("gain", "x"), ("predict", np.ones(2)),
                                           ("stop_at_failure", np.ones(3)), ("dt", "0.01"), ("q_min", np.zeros(2)),
                                           ("polish_after", None), ("rot_weight", None)])
def test_track_path_options_are_named(option, value):
    with pytest.raises(IKError) as exc:
        dyn.track_path(robot(), target()[None], q0(), **{option: value})
    one_line_naming(exc, option)


@pytest.mark.parametrize("qd_max", [np.ones(3), "fast", [1.0 + 1j] * 7])
def test_ik_velocity_limit_is_named(qd_max):
    """np.broadcast_to's "could not be broadcast" named nothing."""
    with pytest.raises(IKError) as exc:
        dyn.solve_ik(robot(), target(), q0(), dt=0.01, qd_max=qd_max)
    one_line_naming(exc, "qd_max")


def test_ik_options_of_numpy_types_still_solve():
    res = dyn.solve_ik(robot(), target(), list(q0()), max_sweeps=np.int64(200), tol_pos=np.float32(1e-6),
                       q_min=robot().q_min.tolist(), q_max=robot().q_max, dt=1.0, qd_max="robot")
    assert res.success
    T = dyn.frame_pose(robot(), res.q)
    assert np.abs(T[:3, 3] - target()[:3, 3]).max() < 1e-6
    assert dyn.pose_error(robot(), res.q, target())[0] < 1e-6


# ------------------------------------------------------------------------------ against Pinocchio
def test_batched_single_and_any_layout_against_pinocchio(ur5_urdf):
    """M, C (Christoffel-consistent, as pin.computeCoriolisMatrix), the frame Jacobian and Λ⁻¹ of a URDF for
    (n,) and (N, n) inputs as float32, ints, lists, Fortran order and strided views, with the docs' shapes."""
    pin = pytest.importorskip("pinocchio")
    robot_, model = dyn.from_urdf(ur5_urdf), pin.buildModelFromUrdf(ur5_urdf)
    data, n, frame = model.createData(), robot_.n, robot_.link_names[-1]
    idx = np.array([model.joints[model.getJointId(j)].idx_q for j in robot_.joint_names])
    rng = np.random.default_rng(1)
    q = rng.integers(-2, 3, (4, n)).astype(np.float32) / 2          # exact in float32, ints and float64
    qd = rng.uniform(-2, 2, (4, n))
    M, C, J = [], [], []
    for s in range(4):
        qp, vp = np.zeros(model.nq), np.zeros(model.nv)
        qp[idx], vp[idx] = q[s], qd[s]
        Ms = pin.crba(model, data, qp)
        M.append((np.triu(Ms) + np.triu(Ms, 1).T)[np.ix_(idx, idx)])
        C.append(pin.computeCoriolisMatrix(model, data, qp, vp)[np.ix_(idx, idx)])
        pin.computeJointJacobians(model, data, qp)
        pin.updateFramePlacements(model, data)
        J.append(pin.getFrameJacobian(model, data, model.getFrameId(frame), pin.LOCAL_WORLD_ALIGNED)[:, idx])
    M, C, J = np.array(M), np.array(C), np.array(J)
    Li = J @ np.linalg.solve(M, np.swapaxes(J, 1, 2))
    wide = np.zeros((4, 2 * n))
    wide[:, 1::2] = q
    for qq in (q, q.astype(np.float64), np.asfortranarray(q), wide[:, 1::2], q.tolist()):
        assert dyn.mass_matrix(robot_, qq).shape == (4, n, n)
        np.testing.assert_allclose(dyn.mass_matrix(robot_, qq), M, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dyn.coriolis_matrix(robot_, qq, qd), C, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dyn.frame_jacobian(robot_, qq, frame), J, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dyn.operational_space_inertia_inverse(robot_, qq, [frame]), Li, rtol=1e-9,
                                   atol=1e-12)
    qi = (2 * q[0]).astype(int)                                     # ints: the same as their float values
    np.testing.assert_array_equal(dyn.mass_matrix(robot_, qi), dyn.mass_matrix(robot_, qi.astype(float)))
    for s in range(2):
        assert dyn.mass_matrix(robot_, q[s]).shape == (n, n)
        np.testing.assert_allclose(dyn.mass_matrix(robot_, q[s]), M[s], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dyn.coriolis_matrix(robot_, q[s], qd[s]), C[s], rtol=1e-10, atol=1e-12)
        assert dyn.christoffel(robot_, q[s]).shape == (n, n, n)
    frozen = q.astype(float)
    frozen.setflags(write=False)
    before = frozen.copy()
    dyn.path_coefficients(robot_, frozen, frozen, frozen)            # read-only inputs, left unchanged
    np.testing.assert_array_equal(frozen, before)


@pytest.mark.parametrize("kw", [dict(tau_max=["5"] * 7), dict(qd_max=["1", 2, 3, 4, 5, 6, 7]),
                                dict(q_min=np.array(["-1"] * 7))])
def test_model_fields_refuse_text_as_configurations_do(kw):
    """`checks.floats` (limits, gravity, inertias of every loader) parsed a list of numeric text, which its own
    docstring refused ("strings … are a ModelError"): with_limits(tau_max=['5'] * 7) planned with 5 N·m."""
    with pytest.raises(ModelError) as info:
        dyn.load_robot("iiwa7").with_limits(**kw)
    assert str(info.value).startswith(next(iter(kw))) and "\n" not in str(info.value)


def test_a_transposed_model_array_is_refused():
    """RobotModel.create / replace reshaped any array of the right size: coms given as (3, n) became (n, 3) with every
    body's centre of mass scrambled, without a word. The same rank in another shape is refused; flat values (in
    order) still are taken."""
    r = dyn.load_robot("iiwa7")
    with pytest.raises(ModelError, match=r"coms: expected shape \(7, 3\), got shape \(3, 7\)"):
        r.replace(coms=r.coms.T)
    assert np.array_equal(r.replace(coms=r.coms.reshape(-1)).coms, r.coms)
