"""The planner on paths we did not choose (issue 10): the duration does not depend on how the path parameter
is scaled, rest-to-rest never fails where every point can be held, plans are deterministic whatever was
planned before and from how many threads, a URDF robot with viscous friction re-plans without compiling,
and durations agree with toppra on a fine grid (an independent solver) on random paths of every family."""

from __future__ import annotations

import functools
import threading
import warnings

import numpy as np
import pytest

import dynamics
from dynamics.urdf import from_urdf
from dynamics.payload import RigidBodyInertia
from toppra_app import JointPath, plan_time_optimal
from toppra_app.planner import TimeOptimalPlanner, problem_stats

from conftest import erd_path


@functools.lru_cache(maxsize=None)
def iiwa():
    return dynamics.load_robot("iiwa7")


@functools.lru_cache(maxsize=None)
def panda_urdf_robot():
    p = erd_path("robots/panda_description/urdf/panda.urdf")
    if p is None:
        pytest.skip("example-robot-data panda.urdf not installed")
    r = from_urdf(p, locked_joints={"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0})
    assert (r.viscous > 0).all()                      # <dynamics damping="0.003"> → viscous friction
    return r.with_limits(tau_max=0.6 * r.tau_max)


def random_waypoints(robot, rng, m, lo=0.2, hi=0.8):
    q0, q1 = robot.q_min + lo * (robot.q_max - robot.q_min), robot.q_min + hi * (robot.q_max - robot.q_min)
    return rng.uniform(q0, q1, size=(m, robot.n))


# ------------------------------------------------------------------------------ scale invariance
@pytest.mark.parametrize("span", [1e-3, 1e-1, 10.0, 1e3])
@pytest.mark.parametrize("kind", ["random", "tiny"])
def test_duration_does_not_depend_on_the_path_parameter_scale(span, kind):
    """The same geometric path on s ∈ [0, span]: the same duration to 1e-4 (was +42 % on [0, 3])."""
    rng = np.random.default_rng(7)
    W = random_waypoints(iiwa(), rng, 4)
    if kind == "tiny":
        W = W[0] + rng.uniform(-1e-3, 1e-3, size=W.shape)
    s = np.linspace(0.0, 1.0, len(W))
    ref = plan_time_optimal(iiwa(), JointPath.from_waypoints(W, s=s)).duration
    plan = plan_time_optimal(iiwa(), JointPath.from_waypoints(W, s=span * s))
    assert plan.status == "optimal"
    assert plan.duration == pytest.approx(ref, rel=1e-4)
    assert plan.worst_ratio <= 1.0 + 1e-3


# ------------------------------------------------------------------------------ never a false "infeasible"
def test_out_and_back_with_acceleration_limits_plans_rest_to_rest():
    """A full stop in the middle of the path and acceleration limits: every point can be held, so
    rest-to-rest plans (was "no speed profile satisfies the limits")."""
    r = panda_urdf_robot().with_limits(qdd_max=np.full(7, 8.0))
    rng = np.random.default_rng(3)
    a, b = random_waypoints(r, rng, 2)
    W = np.array([a, 0.5 * (a + b), b, 0.5 * (a + b), a])
    plan = plan_time_optimal(r, JointPath.from_waypoints(W))
    assert np.isfinite(plan.duration) and plan.duration > 0
    assert plan.worst_ratio <= 1.0 + 1e-3
    smp = plan.sample(1e-3)                                      # it stops where the path turns back
    assert np.linalg.norm(smp.qd, axis=1)[np.argmin(np.abs(smp.q - b).sum(axis=1))] < 1e-2


@pytest.mark.parametrize("name, seed", [("panda", 1), ("iiwa7", 3)])
def test_a_tiny_motion_out_and_back_plans_within_the_limits(name, seed):
    """Three waypoints a, a + d, a with |d| ≤ 1e-3 rad: the path turns back where every q′ = 0. The
    reachability sweeps that place and scale the grid held the path acceleration a of an interval by the rows of
    its first point only, which at the turn bound θ̇² alone: the coarse profile leapt from θ̇² ≈ 1.3e3 at the turn
    to 2e8 one point on and stopped at the next. The built-in Panda then failed ("MotionStops") on five of six
    such paths, and three of eight iiwa plans came out 10⁵ × over their limits in 0.4 ms (a warning). Now such a
    point's interval takes the next point's rows too (`reachability._both_ends`): one solve, within the limits on
    1 ms samples (Pinocchio) and within 0.1 % of the converged plan."""
    from benchmarks.bench_planner import converged
    from test_planner import pinocchio_worst, robot
    r = robot(name)
    lo, hi = r.q_min + 0.2 * (r.q_max - r.q_min), r.q_min + 0.8 * (r.q_max - r.q_min)
    rng = np.random.default_rng(seed)
    a = rng.uniform(lo, hi)
    d = rng.uniform(-1e-3, 1e-3, r.n)
    W = np.array([a, a + d, a])
    plan = plan_time_optimal(r, JointPath.from_waypoints(W))
    assert max(pinocchio_worst(plan).values()) <= 1.001
    assert plan.duration >= np.max(2.0 * np.abs(d) / r.qd_max)         # out and back at most at top speed
    assert plan.duration / converged(r, W, 0.0)[0].duration - 1.0 < 1e-3


@functools.lru_cache(maxsize=None)
def so101_robot():
    p = erd_path("robots/so_arm_description/urdf/so101.urdf")
    if p is None:
        pytest.skip("example-robot-data so101.urdf not installed")
    r = from_urdf(p, locked_joints={"gripper": 0.0})
    return r.with_limits(tau_max=0.6 * r.tau_max)


# one joint of the SO-101 goes out and comes back past its start; the others stand still, so every q′ is 0 where
# it turns (found by a hunt on robots the benchmark does not use)
SO101_TURN = np.array([[0.02628496003298686, 0.561155898898837, -0.758531325513526, 0.6505990389099969, 1.21843308466258],
                       [0.23614256919163767, 0.561155898898837, -0.758531325513526, 0.6505990389099969, 1.21843308466258],
                       [-0.37129498033392827, 0.561155898898837, -0.758531325513526, 0.6505990389099969, 1.21843308466258]])


def test_the_coarse_profile_does_not_leap_where_the_path_turns_back():
    """The sweeps that place and scale the grid held an interval's θ̈ by its first point's rows only; next to the
    turn those hold θ̈ weakly, and the coarse profile rose 5× an interval to 870× the optimum's θ̇² there. That
    profile's top is the problem's scale B̄: β then sat at ~1e-6 near the rest ends, below the solver's
    resolution — the time cones' plan came out 25× over a torque limit on the default grid. Now where a point's
    rows hold θ̈ that weakly its interval takes the next point's rows too (`reachability.NEAR_TURN`)."""
    from test_planner import pinocchio_worst
    r = so101_robot()
    planner = TimeOptimalPlanner(r, JointPath.from_waypoints(SO101_TURN), time_objective="cone")
    plan = planner.plan()
    assert planner.law0.b.max() <= 1.05 * plan.law.b.max()
    assert max(pinocchio_worst(plan).values()) <= 1.001
    assert plan.iterations == 1


def test_a_fine_grid_plans_where_the_path_turns_back():
    """The same path on 3200 intervals with θ̈ linear (a user's fine grid; the converged reference of the
    benchmarks): it took 23 s, ended 86× over a torque limit with only a warning, and on other robots ran the
    fallback solver for minutes. Now one solve, within the limits on 1 ms samples (Pinocchio), and the default
    plan's duration."""
    from test_planner import pinocchio_worst
    r = so101_robot()
    default = plan_time_optimal(r, JointPath.from_waypoints(SO101_TURN))
    fine = plan_time_optimal(r, JointPath.from_waypoints(SO101_TURN), grid=3200, time_law="linear")
    assert fine.iterations == 1
    assert max(pinocchio_worst(fine).values()) <= 1.001
    assert fine.duration == pytest.approx(default.duration, rel=1e-4)


# a puma560 path out and back, a → c → b → c → a: it turns back exactly at its middle knot, where every q′ is 0 and
# every joint's Coulomb friction flips (found by a hunt on robots the benchmark does not use; Corke's model with
# viscous and Coulomb friction, his rated torques, 3 rad/s)
PUMA_A = [0.38792538492284856, 1.7806662333588121, -1.5155381584677596, -0.9237426818738981, 0.10533214069628283,
          2.609156012275383]
PUMA_C = [-1.2829193762072741, 0.37990321613999123, -0.20574672171340858, -0.7534830884010737, -0.02202622931637288,
          -0.5069317567205163]
PUMA_B = [-0.3416052361495785, 0.20185883810856073, -2.2953193105136473, 1.832659415936897, 0.8294041453515353,
          -0.14603563832608657]
PUMA_OUT_AND_BACK = np.array([PUMA_A, PUMA_C, PUMA_B, PUMA_C, PUMA_A])


@functools.lru_cache(maxsize=None)
def puma_robot():
    return dynamics.load_robot("puma560").with_limits(tau_max=np.array([97.6, 186.4, 89.4, 24.2, 20.1, 21.3]),
                                                      qd_max=3.0)


@functools.lru_cache(maxsize=None)
def puma_default_duration():
    return plan_time_optimal(puma_robot(), JointPath.from_waypoints(PUMA_OUT_AND_BACK)).duration


@pytest.mark.parametrize("law, objective", [("constant", "tangent"), ("linear", "tangent"), ("constant", "cone")])
def test_a_fine_grid_plans_where_the_path_turns_back_with_friction(law, objective):
    """The puma560's out-and-back path on 3200 intervals. The first reference halved θ̇² after the turn (a row of
    the turn with rounding on the next point, `stations.ROUNDING`), so the first solve left out every row
    of the next interval and was unbounded; the problem with every row has speed bounds up to 4.9e10 next to the
    turn (q′ → 0), on which Clarabel ended "almost solved" and called the time cones unbounded at its second
    iteration (`problem.ROW_BOUND_MAX`; the cone objective solves with every row at once). The fallback SCS then
    ran for minutes (317 s) and the plan came out 7.45× over a limit with only a warning. Now 1–4 solves in
    1–5 s, no warning, within the limits on 1 ms samples (Pinocchio), and within 0.1 % of the default plan."""
    from test_planner import pinocchio_worst
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)              # "solved only inaccurately", "still exceeds"
        fine = plan_time_optimal(puma_robot(), JointPath.from_waypoints(PUMA_OUT_AND_BACK), grid=3200,
                                 time_law=law, time_objective=objective)
    assert fine.iterations <= 5 and fine.worst_ratio <= 1.001
    assert max(pinocchio_worst(fine).values()) <= 1.001
    assert fine.duration <= 1.001 * puma_default_duration()


def test_ten_thousand_noisy_waypoints_plan_rest_to_rest():
    """10 000 waypoints with 1e-4 rad noise: every point can be held, so it plans (was a false "infeasible").
    One solve on a 2000-interval grid here (the default grid, 16 384 intervals with a point on every knot,
    takes about a minute on such a path; see docs/planner.md)."""
    rng = np.random.default_rng(11)
    a, b = random_waypoints(iiwa(), rng, 2)
    W = np.linspace(a, b, 10_000) + rng.normal(scale=1e-4, size=(10_000, 7))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)        # "still exceeds": one solve, no refinement
        plan = plan_time_optimal(iiwa(), JointPath.from_waypoints(W), grid=2000, max_rounds=0, max_splits=0)
    assert plan.status == "optimal" and np.isfinite(plan.duration) and plan.duration > 0


# ------------------------------------------------------------------------------ determinism
def test_plans_do_not_depend_on_what_was_planned_before_or_on_threads():
    r = iiwa()
    path = JointPath.from_waypoints(random_waypoints(r, np.random.default_rng(5), 5))
    payloads = [None, 3.0, RigidBodyInertia.box(2.0, (0.2, 0.1, 0.1), com_offset=(0.05, 0.0, 0.1)), 6.5]
    forward = TimeOptimalPlanner(r, path)
    first = [forward.plan(payload=p) for p in payloads]
    backward = TimeOptimalPlanner(r, path)
    second = [backward.plan(payload=p) for p in payloads[::-1]][::-1]
    for a, b in zip(first, second):
        assert abs(a.duration - b.duration) <= 1e-12 * a.duration
        np.testing.assert_allclose(a.sd, b.sd, rtol=0, atol=1e-12 * a.sd.max())
    shared = TimeOptimalPlanner(r, path)                         # fresh: four threads race to prepare it
    out, errors = {}, []

    def work(k):
        try:
            out[k] = [shared.plan(payload=payloads[(k + i) % 4]).duration for i in range(4)]
        except Exception as exc:                                # noqa: BLE001 — reported below
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in range(4):
        for i in range(4):
            d = first[(k + i) % 4].duration
            assert abs(out[k][i] - d) <= 1e-12 * d


# ------------------------------------------------------------------------------ compiled once
def test_urdf_robot_with_viscous_friction_replans_without_compiling():
    r = panda_urdf_robot()
    rng = np.random.default_rng(2)
    path = JointPath.from_waypoints(random_waypoints(r, rng, 4))
    planner = TimeOptimalPlanner(r, path)
    first = planner.plan()
    assert first.worst_ratio <= 1.0 + 1e-3
    before = problem_stats()
    again = planner.plan()
    other = TimeOptimalPlanner(r, JointPath.from_waypoints(random_waypoints(r, rng, 4)))
    other.plan()
    other.plan()
    assert again.reused_problem and problem_stats()["compiled"] - before["compiled"] <= 1
    c = problem_stats()["compiled"]
    for _ in range(2):
        assert other.plan().reused_problem and planner.plan().reused_problem
    assert problem_stats()["compiled"] == c


def _full_tangent_gap(robot, data, b_ref, law, lams, scheme, scales, on=None, convex=False):
    """The tangent's error at every station, bound or not (the test's reference criterion), θ̇² of the
    law itself there (θ̈ linear per interval: below the chord by the sag)."""
    from toppra_app.socp import stations as st
    from toppra_app.trajectory import TimeLaw
    th = st.station_thetas(law.theta, lams, scheme)
    b = law.b_at(th)
    assert isinstance(law, TimeLaw)
    lim = np.isfinite(robot.tau_max)
    v = np.abs(robot.viscous[lim] * data.dq[:, lim]) / robot.tau_max[lim]
    sr = np.sqrt(b_ref)[:, None]
    return float((v * (0.5 * sr + 0.5 * b[:, None] / sr - np.sqrt(b)[:, None])).max())


@pytest.mark.parametrize("law", ["constant", "linear"])
@pytest.mark.parametrize("family", ["random", "out-and-back", "end-speed"])
def test_viscous_tangent_is_relinearised_only_where_it_binds(family, law, monkeypatch):
    """The tangent of √b on the concave side of viscous friction is re-linearised only where its row binds;
    the duration then equals that of a plan re-linearised until the tangent is exact at every station, to
    tol/10 with θ̈ constant per interval and 3 tol/10 with θ̈ linear (out-and-back: 2.4e-4; the two plans
    also take different repairs between grid points). (Without re-linearisation this path is 16 % slower:
    the first tangent is taken on the coarse profile.)"""
    import toppra_app.planning.planner as planner_module
    import toppra_app.planning.refine as refine_module
    r = panda_urdf_robot()
    r = r.replace(viscous=1000.0 * r.viscous)         # 3 N·m·s/rad: ~10 % of τ_max at top speed
    rng = np.random.default_rng(11)
    W = random_waypoints(r, rng, 5)
    if family == "out-and-back":
        W = np.array([W[0], W[1], W[0]])
    sd_end = 0.0
    if family == "end-speed":
        dq = np.abs(JointPath.from_waypoints(W).dq(np.array([1.0]))[0])
        sd_end = 0.02 * float(np.min(r.qd_max[dq > 1e-9] / dq[dq > 1e-9]))
    fast = plan_time_optimal(r, JointPath.from_waypoints(W), sd_end=sd_end, time_law=law)
    monkeypatch.setattr(planner_module, "VISCOUS_TOL", 1e-9)
    monkeypatch.setattr(refine_module, "tangent_gap", _full_tangent_gap)
    with warnings.catch_warnings():                  # 1e-9 asks more than Clarabel's tolerance in late rounds
        warnings.simplefilter("ignore", RuntimeWarning)
        exact = plan_time_optimal(r, JointPath.from_waypoints(W), sd_end=sd_end, max_viscous_iterations=30,
                                  time_law=law)
    assert exact.iterations >= fast.iterations
    assert abs(fast.duration / exact.duration - 1.0) < planner_module.DEFAULT_TOL * (0.1 if law == "constant" else 0.3)
    assert fast.worst_ratio <= 1.0 + planner_module.DEFAULT_TOL


@pytest.mark.parametrize("law", ["constant", "linear"])
def test_a_plan_started_at_a_solution_relinearises_viscous_friction_less(law):
    """`plan(start=law)` (how a finer grid's plan starts from the coarser one's, `finer.plan_finer`) takes the
    first tangent of viscous friction at that law: on the 1000×-damped Panda, started at its own plan, a
    third of the solves or fewer (12 → 2) for the same duration to within the re-linearisation's tolerance
    (as in the test above: tol/10 with θ̈ constant, 3 tol/10 with θ̈ linear; measured 2e-6 and 1.1e-4)."""
    r = panda_urdf_robot()
    r = r.replace(viscous=1000.0 * r.viscous)
    W = random_waypoints(r, np.random.default_rng(11), 5)
    planner = TimeOptimalPlanner(r, JointPath.from_waypoints(W), 128, time_law=law)
    first = planner.plan()
    again = planner.plan(start=first.law)
    assert first.iterations >= 6 and 3 * again.iterations <= first.iterations
    assert abs(again.duration / first.duration - 1.0) < 1e-3 * (0.1 if law == "constant" else 0.3)
    assert again.worst_ratio <= 1.001


# ------------------------------------------------------------------------------ against toppra
def _toppra_duration(robot, W, N, sd_end=0.0):
    """toppra 0.6 on the same cubic spline (not-a-knot through W at uniform s), torque limits by
    Pinocchio's RNEA (+ our friction model), velocity limits; interpolation scheme, N intervals."""
    toppra = pytest.importorskip("toppra")
    import toppra.algorithm as algo
    import toppra.constraint as constraint
    pin = pytest.importorskip("pinocchio")
    from benchmarks.peers import to_pinocchio
    model = to_pinocchio(robot)
    data = model.createData()

    def inv_dyn(q, qd, qdd):
        tau = np.array(pin.rnea(model, data, np.asarray(q, float), np.asarray(qd, float), np.asarray(qdd, float)))
        return tau + robot.viscous * qd + robot.coulomb * np.sign(qd)
    toppra.setup_logging("WARNING")
    spline = toppra.SplineInterpolator(np.linspace(0.0, 1.0, len(W)), W)
    cons = [constraint.JointTorqueConstraint(inv_dyn, np.column_stack([-robot.tau_max, robot.tau_max]),
                                             np.zeros(robot.n),
                                             discretization_scheme=constraint.DiscretizationType.Interpolation),
            constraint.JointVelocityConstraint(np.column_stack([-robot.qd_max, robot.qd_max]))]
    inst = algo.TOPPRA(cons, spline, gridpoints=np.linspace(0.0, 1.0, N + 1), solver_wrapper="seidel")
    inst.compute_parameterization(0.0, sd_end)
    sd = inst.problem_data.sd_vec
    assert sd is not None and np.isfinite(sd).all()
    b = sd ** 2
    return float(np.sum(2.0 * np.diff(np.linspace(0.0, 1.0, N + 1)) / (np.sqrt(b[1:]) + np.sqrt(b[:-1]))))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("family", ["random", "dense", "out-and-back"])
def test_durations_against_toppra_on_a_fine_grid(family, seed):
    """toppra (seidel, interpolation) at N = 5000 on the same spline is within ~0.1 % of the converged
    optimum; our default grid agrees with it to 0.5 % on smooth paths, 1 % on dense noisy ones (measured
    +0.76 % on dense-1: a noise spike the 400-interval grid cannot follow; see docs/planner.md)."""
    r = iiwa()
    rng = np.random.default_rng(100 + seed)
    if family == "random":
        W = random_waypoints(r, rng, 3 + seed)
    elif family == "dense":                               # 200 samples of a smooth motion, 1e-4 rad noise
        smooth = JointPath.from_waypoints(random_waypoints(r, rng, 3))
        W = smooth.q(np.linspace(0.0, 1.0, 200)) + rng.normal(scale=1e-4, size=(200, r.n))
    else:
        a, b = random_waypoints(r, rng, 2)
        W = np.array([a, b, a])
    path = JointPath.from_waypoints(W)
    ours = plan_time_optimal(r, path)
    ref = _toppra_duration(r, W, 5000)
    assert ours.duration >= ref * (1 - 2e-3)                  # never (much) faster than the optimum
    assert ours.duration <= ref * (1 + (1e-2 if family == "dense" else 5e-3))
