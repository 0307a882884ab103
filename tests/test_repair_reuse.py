"""What a repair round reuses from the round before it is what it would compute again.

A repair (`planning.refine`) moves a few stations and lowers a few limits; the next solve then evaluates the
path data only at the moved stations (`prepare.at_stations(old=...)`) and tests only the changed station
samples for rows that can bind (`socp.stations.binding(last=...)`). Both must equal the whole computation:
the path data against a fresh evaluation at every station, the kept rows against `binding` without the
record, on random changes of random rows (hypothesis) and on a planner's real rows."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

from benchmarks.cases import robot as suite_robot
from toppra_app import JointPath
from toppra_app.planning.prepare import at_stations, limit_blocks
from toppra_app.planner import TimeOptimalPlanner
from toppra_app.socp import stations as st


def _robot_and_path(seed: int = 3):
    robot = suite_robot("iiwa7")
    rng = np.random.default_rng(seed)
    lo, hi = robot.q_min * 0.6, robot.q_max * 0.6
    return robot, JointPath.from_waypoints(rng.uniform(lo, hi, size=(5, robot.n)))


def test_moved_stations_only_match_a_fresh_evaluation():
    robot, path = _robot_and_path()
    theta = np.linspace(0.0, 1.0, 41)
    lams = st.default_lams(40, "interpolation")
    old = at_stations(robot, path, theta, lams, "interpolation")
    old[1].coefficients                                       # computed, as in a plan
    moved = lams.copy()
    moved[[3, 17, 38], 1] = [0.91, 0.62, 0.55]                # free stations placed on worst points
    moved[[17, 22], 3] = [0.4, 0.13]
    ths, reused = at_stations(robot, path, theta, moved, "interpolation", old)
    ths_f, fresh = at_stations(robot, path, theta, moved, "interpolation")
    np.testing.assert_array_equal(ths, ths_f)
    assert (ths != old[0]).sum() == 5
    for x, y in zip((reused.q, reused.dq, reused.ddq), (fresh.q, fresh.dq, fresh.ddq)):
        np.testing.assert_array_equal(x, y)
    for x, y in zip(reused.coefficients, fresh.coefficients):
        np.testing.assert_allclose(x, y, rtol=1e-13, atol=1e-12 * np.abs(y).max())


def test_another_grid_is_evaluated_whole():
    robot, path = _robot_and_path()
    lams = st.default_lams(20, "interpolation")
    old = at_stations(robot, path, np.linspace(0.0, 1.0, 21), lams, "interpolation")
    ths, data = at_stations(robot, path, np.linspace(0.0, 1.0, 31), st.default_lams(30, "interpolation"),
                            "interpolation", old)
    assert data.q.shape[0] == ths.size == 31 + 30 * 3


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=hst.integers(0, 2 ** 32 - 1), changed=hst.integers(0, 12))
def test_binding_with_the_last_record_equals_binding_afresh(seed, changed):
    rng = np.random.default_rng(seed)
    Ps, R = 30, 9
    def rows_of(al, be, ga, h):
        return st.OneSided(al, be, ga, h, [])
    al, be = rng.normal(size=(Ps, R)), rng.normal(size=(Ps, R))
    ga = np.where(rng.random((Ps, R)) < 0.2, -np.abs(rng.normal(size=(Ps, R))), 0.0)
    h = np.where(rng.random((Ps, R)) < 0.1, np.inf, rng.uniform(0.1, 2.0, size=(Ps, R)))
    beta_ref = rng.uniform(0.01, 2.0, size=Ps)
    last = {}
    first = st.binding(rows_of(al, be, ga, h), beta_ref, last)
    np.testing.assert_array_equal(first, st.binding(rows_of(al, be, ga, h), beta_ref))
    al2, h2, beta2 = al.copy(), h.copy(), beta_ref.copy()
    pick = rng.choice(Ps, size=changed, replace=False)
    al2[pick] *= rng.uniform(0.5, 1.5, size=(changed, R))      # moved stations: other coefficients
    h2[pick[: changed // 2]] *= rng.uniform(0.3, 1.0, size=(changed // 2, R))   # limits tightened, row by row
    beta2[pick[changed // 2:]] *= 1.3                           # another tangent point of √β rows
    again = st.binding(rows_of(al2, be, ga, h2), beta2, last)
    np.testing.assert_array_equal(again, st.binding(rows_of(al2, be, ga, h2), beta2))


def test_a_planners_repair_rows_are_kept_as_afresh():
    robot, path = _robot_and_path(5)
    planner = TimeOptimalPlanner(robot, path)
    planner._prepare()
    data = at_stations(robot, path, planner.theta, planner.lams0, "interpolation")[1]
    blocks = [b.at(None) for b in limit_blocks(planner.limits, data, planner.b_ref0, None)]
    rows = st.one_sided(blocks, planner.L, planner.Bbar)
    beta_ref = planner.b_ref0 / (planner.L ** 2 * planner.Bbar)
    last = {}
    st.binding(rows, beta_ref, last)
    h = rows.h.copy()
    at = [5, 90, 200]                                           # a repair lowers some joints' limits at three stations
    h[at] = np.where(np.random.default_rng(0).random((3, h.shape[1])) < 0.5, 0.2 * h[at], h[at])
    tightened = st.OneSided(rows.al, rows.be, rows.ga, h, rows.origin)
    np.testing.assert_array_equal(st.binding(tightened, beta_ref, last), st.binding(tightened, beta_ref))
