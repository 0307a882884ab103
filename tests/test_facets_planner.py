"""Row pruning on the planner's real rows (`toppra_app.socp.facets` through `socp.stations`): pruning
removes most rows on the benchmark paths, the kept rows match the LP oracle of test_facets.py, pruned and
unpruned planners give the same durations, and re-planning compiles nothing once a structure exists."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import dynamics
from dynamics.payload import RigidBodyInertia
from toppra_app import JointPath
from fixtures import BENCH_PATHS
from toppra_app.planning import refine
from toppra_app.planning.prepare import limit_blocks
from toppra_app.socp import stations
from toppra_app.socp.facets import binding_rows
from toppra_app.planner import TimeOptimalPlanner, problem_stats
from test_facets import check_point, directions

# ====================================================================== real rows from the planner
@functools.lru_cache(maxsize=None)
def robot(name):
    return dynamics.load_robot(name)


@functools.lru_cache(maxsize=None)
def bench_path(name, path_name):
    return JointPath.from_waypoints(BENCH_PATHS[name][path_name])


BOX_PAYLOAD = RigidBodyInertia.box(2.5, (0.1, 0.1, 0.1), com_offset=(0.03, 0.0, 0.08))


def station_rows(planner, payload=None):
    """The planner's one-sided scaled rows at its stations, the kept (can-bind) mask and the reference β,
    as `TimeOptimalPlanner.plan` builds them on its first solve."""
    planner.grid                                              # prepares grid, stations, scales
    r = planner.payload_robot(payload)
    data = planner.data0.with_robot(r)
    scales = refine.base_scales(planner.limits, planner.theta.size, planner.ths.size, r.n, planner.tol)
    blocks = [blk.at(None) for blk in limit_blocks(planner.limits, data, planner.b_ref0, scales)]
    rows = stations.one_sided(blocks, planner.L, planner.Bbar)
    beta_ref = planner.b_ref0 / (planner.L ** 2 * planner.Bbar)
    return rows, stations.binding(rows, beta_ref), beta_ref


@pytest.mark.parametrize("name", ["panda", "iiwa7"])
def test_pruning_prunes_on_the_benchmark_paths(name):
    for path_name in BENCH_PATHS[name]:
        planner = TimeOptimalPlanner(robot(name), bench_path(name, path_name))
        for payload in (None, BOX_PAYLOAD):
            rows, keep, _ = station_rows(planner, payload)
            total = np.isfinite(rows.h).sum(axis=1)
            assert (total >= 2 * robot(name).n + 1).all()
            kept = keep.sum(axis=1)
            share = float(np.mean(kept / total))
            assert share < 0.4, f"{name} {path_name}: {share:.0%} of the rows kept per station"
            assert np.all(kept >= 1)              # every station keeps at least one row (the velocity cap)


@pytest.mark.parametrize("name,path_name", [("panda", "long-swing"), ("iiwa7", "pick-place")])
def test_kept_rows_of_the_planner_match_the_lp_oracle(name, path_name):
    """The planner's own rows at a sample of stations: same polygon with the kept rows (LP oracle)."""
    planner = TimeOptimalPlanner(robot(name), bench_path(name, path_name))
    rng = np.random.default_rng(0)
    for payload in (None, 2.0):
        rows, keep, beta_ref = station_rows(planner, payload)
        sq = np.sqrt(np.maximum(beta_ref, 1e-12))[:, None]       # √β on its tangent, as `binding` takes it
        alpha, beta = rows.al, rows.be + 0.5 * rows.ga / sq
        h = np.where(np.isfinite(rows.h), rows.h - 0.5 * rows.ga * sq, 1e300)
        assert (keep == (binding_rows(alpha, beta, h) & np.isfinite(rows.h))).all()
        for p in np.unique(np.r_[0, rng.choice(alpha.shape[0], 12, replace=False), alpha.shape[0] - 1]):
            fin = np.isfinite(rows.h[p])
            check_point(alpha[p][fin], beta[p][fin], h[p][fin], keep[p][fin],
                        directions(rng.uniform(0, 2 * np.pi, 2)), rng,
                        where=f"{name} {path_name} payload={payload} station {p}")


# ====================================================================== pruned vs unpruned planner
def _sd_end(name, path_name):
    """Half the largest boundary speed the velocity limits allow at the end of the path."""
    r, path = robot(name), bench_path(name, path_name)
    dq = np.abs(path.dq(np.array([path.s_end]))[0])
    return 0.5 * float(np.min(r.qd_max[dq > 0] / dq[dq > 0]))


@pytest.mark.parametrize("name,path_name", [("panda", "pick-place"), ("panda", "long-swing"),
                                            ("iiwa7", "pick-place"), ("iiwa7", "long-swing")])
def test_pruned_and_unpruned_planners_agree(name, path_name):
    r, path = robot(name), bench_path(name, path_name)
    pruned = TimeOptimalPlanner(r, path, prune=True)
    full = TimeOptimalPlanner(r, path, prune=False)
    sd_end = _sd_end(name, path_name)
    cases = [(None, 0.0), (2.0, 0.0), (BOX_PAYLOAD, 0.0), (None, sd_end), (BOX_PAYLOAD, sd_end)]
    durations = []
    for payload, sd in cases:
        a = pruned.plan(payload=payload, sd_end=sd)
        b = full.plan(payload=payload, sd_end=sd)
        assert np.array_equal(a.grid, b.grid)
        # the same optimum; Clarabel stops at 1e-7 (no iterative refinement): measured up to 1.1e-6 apart
        assert a.duration == pytest.approx(b.duration, rel=5e-6), (payload, sd)
        assert a.sd[-1] == pytest.approx(sd) and b.sd[-1] == pytest.approx(sd)
        assert a.worst_ratio <= 1.0 + pruned.tol
        durations.append(a.duration)
    # the boundary speed matters: arriving faster is quicker
    assert durations[3] < durations[0]


# ====================================================================== re-planning without compiling
@pytest.mark.parametrize("name,path_name", [("panda", "pick-place"), ("iiwa7", "pick-place")])
def test_replanning_compiles_nothing_once_the_structure_exists(name, path_name):
    """A compiled problem is keyed by its structure (intervals, row slots) only: re-plans with other
    payloads, another planner on another path of the same grid size, compile nothing once the structures
    exist; each re-plan equals a fresh unpruned planner's answer."""
    r, path = robot(name), bench_path(name, path_name)
    p1, p2, p3 = 2.0, BOX_PAYLOAD, RigidBodyInertia.box(1.2, (0.2, 0.1, 0.05), com_offset=(0.0, 0.05, 0.12))
    planner = TimeOptimalPlanner(r, path)
    for p in (None, p1, p2, p3):                                # every structure these need, once
        planner.plan(payload=p)
    c0 = problem_stats()["compiled"]
    plans = {}
    for label, p in (("p3", p3), ("p1", p1), ("p2", p2), ("none", None), ("p1 again", p1)):
        plans[label] = plan = planner.plan(payload=p)
        assert plan.reused_problem and plan.timings["compile"] == 0.0, label
    assert problem_stats()["compiled"] == c0
    other = TimeOptimalPlanner(r, JointPath.from_waypoints(BENCH_PATHS[name]["long-swing"]))
    other.plan(payload=p1)
    assert other.plan(payload=p1).reused_problem
    assert plans["p1 again"].duration == plans["p1"].duration          # bit-identical: deterministic
    for label, p in (("p1", p1), ("p2", p2), ("p3", p3)):
        ref = TimeOptimalPlanner(r, path, grid=planner.grid, prune=False).plan(payload=p)
        assert plans[label].duration == pytest.approx(ref.duration, rel=5e-6), label
