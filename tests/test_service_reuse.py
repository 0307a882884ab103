"""One planner reused by a long-running service: what a caller does with a plan's arrays does not reach the
planner's later plans, and `replan` keeps what it is not told to change. Each later plan is compared bit for
bit with the same plan from a fresh planner (the independent oracle: nothing shared with the mutated one)."""

from __future__ import annotations

import functools
import pickle
import re
import warnings

import numpy as np
import pytest

import dynamics
from toppra_app import JointPath, TimeOptimalPlanner

W = np.array([[0, 0.3, 0, -1.2, 0, 0.8, 0], [0.6, 0.5, 0.1, -1.0, 0.05, 0.9, 0.2], [1.2, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5]])


@functools.lru_cache(maxsize=None)
def iiwa():
    return dynamics.load_robot("iiwa7")


def path():
    return JointPath.from_waypoints(W)


def same(a, b) -> bool:
    """Bit for bit the same plan: grid, θ̇², θ̈'s change per interval, the check's worst ratio."""
    return (a.s.tobytes(), a.law.b.tobytes(), a.law.d.tobytes(), a.worst_ratio) == \
        (b.s.tobytes(), b.law.b.tobytes(), b.law.d.tobytes(), b.worst_ratio)


def mutated(array) -> bool:
    """Change `array` in place as a caller might (normalise, scale); False where it is read-only."""
    try:
        array *= 2.0
    except ValueError:                                  # "assignment destination is read-only"
        return False
    return True


def test_a_plans_grid_and_the_planners_grid_are_not_the_planners_to_change():
    """`plan.s` (and `plan.law.theta`, `planner.grid`) was the planner's own grid array: doubling it in place (the
    caller's copy, they thought) made every later plan on the planner fail with "grid: must start at 0 and end
    at 1" — or, changed less, plan on a wrong grid."""
    fresh = TimeOptimalPlanner(iiwa(), path()).plan(payload=2.0, sd_end=0.3)
    planner = TimeOptimalPlanner(iiwa(), path())
    first = planner.plan()
    grid = first.s.copy()
    mutated(first.s)
    mutated(first.law.b)
    mutated(first.sd)
    mutated(planner.grid)                               # (read-only: the planner's)
    assert np.array_equal(planner.grid, grid)
    assert same(planner.plan(payload=2.0, sd_end=0.3), fresh)


def test_a_plans_energy_weights_are_not_the_planners_to_change():
    """`plan.energy_R` was the planner's R of ∫ τᵀRτ dt: zeroing it (to see a plan's cost without the energy)
    made the planner's later time–energy plans time-optimal (0.7269 s where a fresh planner gives 0.7333 s)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fresh = TimeOptimalPlanner(iiwa(), path(), energy_weight=0.5).plan(payload=2.0)
        planner = TimeOptimalPlanner(iiwa(), path(), energy_weight=0.5)
        first = planner.plan()
        R = first.energy_R.copy()
        mutated(first.energy_R)
        assert np.array_equal(planner.energy_R, R)
        assert same(planner.plan(payload=2.0), fresh)


def test_replan_keeps_the_payload_unless_told():
    """`replan(sd_end=...)` kept the plan's end speeds where not given, but dropped its payload: the 5 kg plan
    re-planned as an empty arm (faster than the load allows). Now the payload too is the plan's unless given;
    `payload=None` still plans without one."""
    planner = TimeOptimalPlanner(iiwa(), path())
    loaded = planner.plan(payload=5.0)
    again = loaded.replan(sd_end=0.3)
    assert again.payload is not None and again.payload.mass == 5.0
    assert same(again, TimeOptimalPlanner(iiwa(), path()).plan(payload=5.0, sd_end=0.3))
    empty = loaded.replan(payload=None)
    assert empty.payload is None and same(empty, TimeOptimalPlanner(iiwa(), path()).plan())
    with pytest.raises(ValueError, match="unpickled"):
        pickle.loads(pickle.dumps(loaded)).replan()
    back = loaded.reversed(JointPath.from_waypoints(W[::-1]))
    with pytest.raises(ValueError, match="made by reversed"):     # (it said "unpickled")
        back.replan()


def test_the_callers_limit_list_changed_later_does_not_reach_a_split_grid():
    """The planner copied `limits` for its own plans but kept the caller's list for the planners of its split grids
    (`planning.finer`): a service that reused its list after making the planner (here: only a velocity limit left)
    got a plan on the split grid without the torque limit, 183× over it (the coarse grid's plan kept it)."""
    from benchmarks.cases import BENCH_PATHS
    from toppra_app.limits import default_limits
    from toppra_app.limits.joint import JointVelocityLimit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        W = BENCH_PATHS["iiwa7"]["pick-place"]
        fresh = TimeOptimalPlanner(iiwa(), JointPath.from_waypoints(W), limits=default_limits()).plan(payload=6.0)
        assert fresh.s.size > 129                       # (the default 128 intervals split: a finer planner)
        mine = default_limits()
        planner = TimeOptimalPlanner(iiwa(), JointPath.from_waypoints(W), limits=mine)
        mine[:] = [JointVelocityLimit()]
        assert same(planner.plan(payload=6.0), fresh)


def test_compiled_structures_are_kept_to_a_bound_and_compiled_again_the_same(monkeypatch):
    """Every structure (intervals × row slots) compiled was kept for the life of the process: a service planning
    user grids of many sizes grew ~1.6 MB a size at N ≈ 128, without bound. Now the `MAX_STRUCTURES` last used
    are kept; a dropped one is compiled again, and plans on it are the same bit for bit."""
    from toppra_app.planning import cache
    monkeypatch.setattr(cache, "_POOL", type(cache._POOL)())       # (the other tests' structures stay)
    monkeypatch.setattr(cache, "MAX_STRUCTURES", 2, raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)             # (the gap estimate of these coarse grids)
        first = TimeOptimalPlanner(iiwa(), path(), grid=31, max_splits=0).plan(payload=1.0)
        for N in (32, 33, 34):
            TimeOptimalPlanner(iiwa(), path(), grid=N, max_splits=0).plan()
            assert len(cache._POOL) <= 2
        again = TimeOptimalPlanner(iiwa(), path(), grid=31, max_splits=0).plan(payload=1.0)
    assert not again.reused_problem and same(again, first)



SHARED = {}                                             # the parent's planner, inherited by a forked worker


def _plan_in_child(payload):
    """`same`'s fields of a fresh planner's plan and of the parent's planner's plan, in a worker process."""
    plans = (TimeOptimalPlanner(iiwa(), path()).plan(payload=payload), SHARED["planner"].plan(payload=payload))
    return [(p.s.tobytes(), p.law.b.tobytes(), p.law.d.tobytes(), p.worst_ratio) for p in plans]


def test_a_forked_worker_plans_after_its_parent_did(monkeypatch):
    """A multiprocessing "fork" worker (Linux's default start method) of a process that had planned waited for ever
    in its first plan: the between-grid check's kinematics go to a helper thread (`samples.SubSamples.prefetch`)
    that a forked child does not have. (The 300 s only make the old code fail instead of hang: a plan takes 0.1 s.)"""
    import multiprocessing
    monkeypatch.setitem(SHARED, "planner", TimeOptimalPlanner(iiwa(), path()))
    mine = SHARED["planner"].plan(payload=1.0)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        fresh, shared = pool.apply_async(_plan_in_child, (1.0,)).get(timeout=300)
        pool.terminate()
    key = (mine.s.tobytes(), mine.law.b.tobytes(), mine.law.d.tobytes(), mine.worst_ratio)
    assert fresh == key and shared == key


def test_limits_given_as_any_iterable_are_all_kept_and_none_at_all_is_named():
    """A generator of limits was used up by the check that each is a limit, and the planner kept none: the plan then
    failed with "ValueError: no limit rows", as did `limits=[]`, naming no option."""
    from toppra_app.errors import InputError
    from toppra_app.limits import default_limits
    listed = TimeOptimalPlanner(iiwa(), path(), limits=default_limits()).plan()
    assert same(TimeOptimalPlanner(iiwa(), path(), limits=(lim for lim in default_limits())).plan(), listed)
    with pytest.raises(InputError, match=r"^limits: .*nothing bounds the path speed"):
        TimeOptimalPlanner(iiwa(), path(), limits=[])
    from toppra_app.limits import JointAccelerationLimit      # (the iiwa 7 has no acceleration limit: the same)
    with pytest.raises(InputError, match=r"^limits: robot 'iiwa7' has no qdd_max \(all inf\), so these limits bound"):
        TimeOptimalPlanner(iiwa(), path(), limits=[JointAccelerationLimit()])


def test_a_payload_the_robot_cannot_hold_is_reported_on_the_planners_grid():
    """A plan's payload too heavy to hold was reported at "grid index 0 of 512 … (513 grid points)" of the planner's
    129-point grid: the list checked is the grid points and then the stations between them. The line now gives the
    grid index on the 129-point grid and counts the points checked as such. The planner is unchanged by the
    refusal (next plan as fresh)."""
    from toppra_app.errors import InfeasiblePathError
    planner = TimeOptimalPlanner(iiwa(), path(), allow_overload=True)
    with pytest.raises(InfeasiblePathError) as err:
        planner.plan(payload=60.0)
    msg = str(err.value)
    index, last = map(int, re.search(r"\(grid index (\d+) of (\d+)\)", msg).groups())
    count, total = map(int, re.search(r"\((\d+) of (\d+) points checked, grid points and stations", msg).groups())
    assert planner.grid.size == 129 and last == 128 and index <= last and total > 129 and count <= total
    assert same(planner.plan(payload=1.0), TimeOptimalPlanner(iiwa(), path(), allow_overload=True).plan(payload=1.0))


def test_plan_time_optimal_does_not_reuse_a_planner_for_arrays_that_differ_beyond_their_repr():
    """plan_time_optimal keeps the planners it made, keyed on the options' repr, which rounds an array to 8 digits:
    energy_R of 1e-4 and 1e-4 (1 + 1e-9) were planned by one planner, with the first one's weights."""
    from toppra_app import plan_time_optimal
    R, p = np.full(7, 1e-4), path()
    a = plan_time_optimal(iiwa(), p, energy_weight=1.0, energy_R=R)
    b = plan_time_optimal(iiwa(), p, energy_weight=1.0, energy_R=R * (1 + 1e-9))
    assert a.planner is not b.planner and np.array_equal(b.energy_R, R * (1 + 1e-9))
    assert plan_time_optimal(iiwa(), p, energy_weight=1.0, energy_R=R.copy()).planner is a.planner
