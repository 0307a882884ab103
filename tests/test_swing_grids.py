"""Grid placement and refinement of θ̈-linear plans on paths whose θ̇² swings: one joint carrying the motion
while the others barely move (`grid.PROFILE_SHARE`, `verify.swing_room`, `refine.for_the_swing`), and the
θ̈-constant fallback where θ̇² of θ̈ linear stops between stations (`finer.plan_constant`). Durations against
the shorter of 3200-interval plans under both laws."""

from __future__ import annotations

import numpy as np
import pytest

from toppra_app import JointPath
from toppra_app.planner import TimeOptimalPlanner
from test_planner_accuracy import fine


def _mixed(name: str, seed_index: int):
    """(robot, path): one joint over 12 random waypoints, the others a hundredth of it
    (`benchmarks.study_families`, family "mixed-1e-2-12")."""
    from benchmarks.study_families import case
    _, (r, W, _, _, _) = case("mixed-1e-2-12", name, seed_index)
    return r, JointPath.from_waypoints(W)


def test_a_joint_turning_back_while_the_others_barely_move_plans_within_a_fifteenth_of_a_percent():
    """One joint carries the motion back and forth, the others move a thousandth of it: where that joint
    turns, θ̇² rises ~50× and falls again within 3 % of θ, crossed in ~20 ms — a stretch that uniform time
    and θ both give three intervals, on which the quadratic θ̇² of θ̈ linear cannot follow the swing
    (+0.101 % from converged on 320 intervals, 1.2 ms lost at each of the four turns). The grid's share of
    the profile's own variation (`grid.PROFILE_SHARE`) puts points there: +0.048 %."""
    from benchmarks.cases import _span, robot
    r = robot("iiwa7")
    lo, hi = _span(r)
    W = np.random.default_rng(71).uniform(lo, hi, size=(6, r.n))
    W[:, 1:] = W[0, 1:] + 1e-3 * (W[:, 1:] - W[0, 1:])
    path = JointPath.from_waypoints(W)
    plan = TimeOptimalPlanner(r, path).plan()
    ref = min(fine(r, path, 3200).duration,
              TimeOptimalPlanner(r, path, 3200, time_law="constant", max_splits=0).plan().duration)
    assert ref * (1 - 1e-4) <= plan.duration <= ref * 1.0007
    assert plan.worst_ratio <= 1.001


def test_a_linear_profile_that_stops_between_stations_plans_with_theta_ddot_constant(monkeypatch):
    """One UR5e joint moving over 12 random waypoints, the others a hundredth of it: on the grid placed by time
    and θ alone, θ̇² of θ̈ linear — a quadratic on each interval, held ≥ 0 at the stations only — reached 0
    inside an interval (b 0.817 → 0.034, δ 209 over 0.0057 in θ) with the tangent objective and the time cones
    alike, and the plan failed with `MotionStops`, a false "cannot plan". It now plans θ̈ constant on that grid
    (`finer.plan_constant`, split for its gap estimate), within the limits and 0.1 % of converged."""
    from toppra_app.planning import grid as grid_module
    from toppra_app.planning import prepare as prepare_module
    from toppra_app.planning import layers as layers_module
    monkeypatch.setattr(prepare_module, "PROFILE_SHARE", 0.0)
    monkeypatch.setattr(layers_module, "LAYER_SHARE", 0.0)        # (the same grid: no point where a run-up ends)
    monkeypatch.setattr(grid_module, "LINEAR_SIZES", (160,) + grid_module.LINEAR_SIZES[2:])
    r, path = _mixed("ur5e", 1)
    plan = TimeOptimalPlanner(r, path).plan()
    assert plan.refinements[0]["action"] == "constant law" and not plan.law.linear
    assert plan.worst_ratio <= 1.001
    ref = fine(r, path, 3200).duration
    assert ref * (1 - 1e-4) <= plan.duration <= ref * 1.001


def test_swing_room_weights_the_room_by_how_far_theta_dot_squared_swings():
    """`verify.swing_room`: an interval's room (1 − min ρ)·Δt counts in full where θ̇² changes across it by
    `SWING` or more of b_j + b_{j+1}, by (r / SWING)² below."""
    from toppra_app.trajectory import TimeLaw
    from toppra_app.verify import SWING, LimitCheck, interval_room, swing_room
    b = np.array([1.0, 1.0, 1.1, 4.0, 4.0])                 # r = 0, 0.1/2.1, 2.9/5.1, 0
    law = TimeLaw(np.linspace(0.0, 1.0, 5), b)
    rho = np.full((4, 9), 0.5)
    check = LimitCheck({}, {}, rho=rho)
    room = interval_room(check, law)
    r = np.abs(np.diff(b)) / (b[1:] + b[:-1])
    np.testing.assert_allclose(swing_room(check, law), room * np.minimum(1.0, (r / SWING) ** 2), rtol=1e-12)
    assert swing_room(check, law)[0] == 0.0 and swing_room(check, law)[2] == pytest.approx(room[2])


def test_a_plan_whose_theta_dot_squared_swings_on_few_intervals_is_refined_to_a_tenth_of_a_percent():
    """One Panda joint over 12 random waypoints, the others a hundredth of it: θ̇² swings by 100× within 10 %
    of θ where that joint turns back, across 2–3 intervals per 1 % of θ, and the plan on its 256-interval grid
    was +0.34 % from converged with no refinement (the gap estimate, 0.69 %, is not a refinement target for
    θ̈ linear: tiny motions sit at ~1 % with gaps of 0.01 %). The swing estimate (`verify.swing_room`: the room
    where θ̇² changes by a large factor across an interval) was 0.30 % and the grid goes to 400, then 640:
    within 0.1 %."""
    r, path = _mixed("panda-urdf", 4)
    plan = TimeOptimalPlanner(r, path).plan()
    assert [x["action"] for x in plan.refinements].count("refine") >= 1 and plan.s.size - 1 >= 400
    ref = min(fine(r, path, 3200).duration,
              TimeOptimalPlanner(r, path, 3200, time_law="constant", max_splits=0).plan().duration)
    assert ref * (1 - 1e-4) <= plan.duration <= ref * 1.001
    assert plan.worst_ratio <= 1.001


@pytest.mark.parametrize("name", ["iiwa7", "ur5e", "panda-urdf", "ur10-urdf"])
def test_tiny_motions_are_not_refined_for_their_swing(name):
    """The suite's tiny motions leave room at their switches (gap estimates 0.5–1.9 %) but θ̇² barely changes
    there: their swing estimates stay below target and they plan on the default grid (within 0.01 % of
    converged, docs/benchmarks.md)."""
    from benchmarks.cases import robot, suite
    case = next(c for c in suite() if c.name == f"{name}/tiny-0")
    plan = TimeOptimalPlanner(robot(name), JointPath.from_waypoints(case.waypoints)).plan()
    assert not any(x["action"] == "refine" for x in plan.refinements) and plan.gap_estimate > 0.003


def test_a_gap_target_below_the_swing_target_refines_linear_plans_further():
    """`gap_target` (by default 1 %, the constant law's) did nothing for θ̈-linear plans; below `SWING_TARGET`
    (0.1 %) it is their swing target: the suite's iiwa7/random-0 (swing estimate 0.044 %) stays on 160 intervals
    by default and goes to 256 with gap_target=3e-4, no longer."""
    from benchmarks.cases import robot, suite
    case = next(c for c in suite() if c.name == "iiwa7/random-0")
    r, path = robot(case.robot), JointPath.from_waypoints(case.waypoints)
    default = TimeOptimalPlanner(r, path).plan()
    tight = TimeOptimalPlanner(r, path, gap_target=3e-4).plan()
    assert not default.refinements and default.s.size - 1 == 160
    assert tight.refinements[0]["action"] == "refine" and tight.s.size - 1 == 256
    assert tight.duration < default.duration and tight.worst_ratio <= 1.001
