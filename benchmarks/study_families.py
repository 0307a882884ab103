"""Path families the planner suite does not hold: the default plan against the converged one, per family.

Drawn in the thirteenth session to find paths where the planner is slow or far from the optimum
(docs/planner.md "How close to the optimum"): 15 families on the suite's four robots, three seeds each. A case's
seed is 1000 × family index + 10 × robot index + seed index; waypoints are drawn again until the robot (with
its payload) can hold every point of the path. Reference: the shorter of our plans on 3200 intervals with θ̈
constant and θ̈ linear that keep the limits between grid points (`bench_planner.converged`). Prints one line
per case and a markdown table per family (median and worst gap, plans above +0.1 %, planning time).

    python -m benchmarks.study_families [--families two-movers,slow-fast] [--seeds 0,1,2] [--robots iiwa7]

All 15 families, three seeds: about 10 minutes on the 2-core machine (the references take most of it). The
thirteenth session's hunt ran these and seeds 3,4,5 of two-movers, mixed-1e-2, mixed-1e-2-12 and slow-fast.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from .cases import _span, holdable, robot

FAMILIES = ("two-movers", "mixed-1e-2", "mixed-1e-2-12", "near-cusp-1", "near-cusp-5", "near-turn", "straight-long",
            "straight-short", "both-speeds", "accel-tiny", "accel-many", "heavy-payload", "heavy-payload-replan",
            "wide", "slow-fast")
ROBOTS = ("iiwa7", "ur5e", "panda-urdf", "ur10-urdf")     # (the order the seeds were drawn in)


def _unit(v):
    return v / np.linalg.norm(v)


def _speed_at(r, W, s: float) -> float:
    """θ̇ at which the first joint reaches its speed limit at path parameter s."""
    from toppra_app import JointPath
    dq = np.abs(JointPath.from_waypoints(W).dq(np.array([s]))[0])
    on = dq > 1e-9
    return float(np.min(r.qd_max[on] / dq[on]))


def draw(family: str, base, rng):
    """(robot, waypoints, plan keywords, payload, re-plan?) of one draw, or None (no rated payload)."""
    r, kw, payload, replan = base, {}, None, False
    lo, hi = _span(base)
    lo5, hi5 = _span(base, 0.05, 0.95)
    n = base.n
    if family == "two-movers":                      # two joints move, the others a thousandth of it
        W = rng.uniform(lo, hi, size=(6, n))
        movers = rng.choice(n, 2, replace=False)
        others = np.setdiff1d(np.arange(n), movers)
        W[:, others] = W[0, others] + 1e-3 * (W[:, others] - W[0, others])
    elif family in ("mixed-1e-2", "mixed-1e-2-12"):  # one joint moves, the others a hundredth of it
        W = rng.uniform(lo, hi, size=(6 if family == "mixed-1e-2" else 12, n))
        others = np.setdiff1d(np.arange(n), [rng.integers(n)])
        W[:, others] = W[0, others] + 1e-2 * (W[:, others] - W[0, others])
    elif family in ("near-cusp-1", "near-cusp-5"):   # a → b → a′, a′ 1 % / 5 % of |b − a| off a
        eps = 0.01 if family == "near-cusp-1" else 0.05
        a, b = rng.uniform(lo, hi, size=(2, n))
        W = np.array([a, b, a + eps * np.linalg.norm(b - a) * _unit(rng.normal(size=n))])
    elif family == "near-turn":                      # a → b → c turning by 150–175°
        while True:
            a, b = rng.uniform(lo, hi, size=(2, n))
            u = _unit(b - a)
            v = rng.normal(size=n)
            v = _unit(v - (v @ u) * u)
            turn = np.deg2rad(rng.uniform(150, 175))
            c = b + np.linalg.norm(b - a) * rng.uniform(0.5, 1.0) * (np.cos(turn) * u + np.sin(turn) * v)
            if (c >= lo5).all() and (c <= hi5).all():
                break
        W = np.array([a, b, c])
    elif family == "straight-long":                  # one straight line over 5–95 % of the ranges
        mid, sign = 0.5 * (lo5 + hi5), rng.choice([-1.0, 1.0], size=n)
        span = rng.uniform(0.7, 1.0, size=n) * (hi5 - lo5)
        W = np.array([mid - 0.5 * sign * span, mid + 0.5 * sign * span])
    elif family == "straight-short":                 # ... over 1 % of them
        a = rng.uniform(lo, hi)
        W = np.array([a, a + 0.01 * (hi5 - lo5) / 0.9 * rng.choice([-1.0, 1.0], size=n) * rng.uniform(0.5, 1.0, size=n)])
    elif family == "both-speeds":                    # start and end at 0.3 × the speed-limited θ̇
        W = rng.uniform(lo, hi, size=(5, n))
        kw = dict(sd_start=0.3 * _speed_at(r, W, 0.0), sd_end=0.3 * _speed_at(r, W, 1.0))
    elif family == "accel-tiny":                     # ±1e-3 rad with q̈ ≤ 10 rad/s²
        r = base.with_limits(qdd_max=10.0)
        W = rng.uniform(lo, hi) + rng.uniform(-1e-3, 1e-3, size=(4, n))
    elif family == "accel-many":                     # 20 random waypoints with q̈ ≤ 5 rad/s²
        r = base.with_limits(qdd_max=5.0)
        W = rng.uniform(lo, hi, size=(20, n))
    elif family in ("heavy-payload", "heavy-payload-replan"):   # the rated payload, planned or re-planned
        if not base.rated_payload:
            return None
        W = rng.uniform(lo, hi, size=(6, n))
        payload, replan = float(base.rated_payload), family.endswith("replan")
    elif family == "wide":                           # 4 waypoints over 5–95 % of the ranges
        W = rng.uniform(lo5, hi5, size=(4, n))
    elif family == "slow-fast":                      # pairs of waypoints 1e-2 rad apart
        C = rng.uniform(lo, hi, size=(4, n))
        W = np.concatenate([[c, c + 1e-2 * _unit(rng.normal(size=n))] for c in C])
    else:
        raise ValueError(f"unknown family {family!r}")
    return r, W, kw, payload, replan


def case(family: str, name: str, seed_index: int):
    """(seed, (robot, W, kw, payload, replan)) or (seed, None) where none of 50 draws is holdable."""
    seed = 1000 * FAMILIES.index(family) + 10 * ROBOTS.index(name) + seed_index
    rng, base = np.random.default_rng(seed), robot(name)
    for _ in range(50):
        got = draw(family, base, rng)
        if got is None:
            return seed, None
        r, W, _, payload, _ = got
        if holdable(r if payload is None else r.with_payload(payload), W):
            return seed, got
    return seed, None


def run_case(family: str, name: str, seed_index: int) -> dict:
    seed, got = case(family, name, seed_index)
    return plan_row(dict(family=family, robot=name, seed=seed), got)


def plan_row(row: dict, got, over: bool = False) -> dict:
    """`row` with the default plan of `got` = (robot, W, kw, payload, replan) timed and compared with the
    converged one (status "skipped" for None, the error for a refusal); `over`: also the worst over-limit of
    its 1 ms samples by Pinocchio's RNEA + friction (`bench_planner._over_limit`)."""
    from toppra_app import JointPath, plan_time_optimal
    from toppra_app.planner import TimeOptimalPlanner
    from .bench_planner import _over_limit, converged
    if got is None:
        return dict(row, status="skipped")
    r, W, kw, payload, replan = got
    path = JointPath.from_waypoints(W)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            if replan:
                planner = TimeOptimalPlanner(r, path)
                planner.plan(**kw)
                plan_of = lambda: planner.plan(payload=payload, **kw)          # noqa: E731
            else:
                plan_of = lambda: plan_time_optimal(r, path, payload=payload, **kw)   # noqa: E731
            plan_of()                                                         # warm-up (compiles)
            t0 = time.perf_counter()
            plan = plan_of()
            ms = 1e3 * (time.perf_counter() - t0)
        except Exception as exc:                  # an error is a finding: reported, not raised
            return dict(row, status=f"{type(exc).__name__}: {str(exc)[:120]}")
        ref = converged(r, W, kw.get("sd_end", 0.0), payload, kw.get("sd_start", 0.0))
    out = dict(row, status="ok", N=plan.s.size - 1, solves=plan.iterations, ms=ms,
               gap=plan.duration / ref[0].duration - 1.0, worst=plan.worst_ratio)
    if over:
        smp = plan.sample(1e-3)
        out["over"] = _over_limit(plan.robot, smp.q, smp.qd, smp.qdd)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--robots", default=",".join(ROBOTS))
    a = ap.parse_args(argv)
    rows = []
    for family in a.families.split(","):
        for name in a.robots.split(","):
            for k in (int(x) for x in a.seeds.split(",")):
                rows.append(printed(run_case(family, name, k)))
    report(rows, a.families.split(","))


def printed(row: dict) -> dict:
    """`row`, printed as one line."""
    if row["status"] == "ok":
        over = f" over {100 * row['over']:+.3f} %" if "over" in row else ""
        print(f"{row['family']:21s} {row['robot']:11s} {row['seed']:6d} N={row['N']:5d} solves={row['solves']:2d} "
              f"{row['ms']:7.1f} ms gap {100 * row['gap']:+.4f} % worst {row['worst']:.5f}{over}", flush=True)
    else:
        print(f"{row['family']:21s} {row['robot']:11s} {row['seed']:6d} {row['status']}", flush=True)
    return row


def report(rows: list, families) -> None:
    """The markdown table per family and the summary line."""
    over = any("over" in x for x in rows)
    print("\n| family | plans | gap % median / worst | above +0.1 % | ms median / worst | " +
          ("1 ms over-limit % worst | " if over else "") + "not planned |")
    print("|---|---|---|---|---|---|" + ("---|" if over else ""))
    for family in families:
        ok = [x for x in rows if x["family"] == family and x["status"] == "ok"]
        bad = [x for x in rows if x["family"] == family and x["status"] not in ("ok", "skipped")]
        if not ok:
            print(f"| {family} | 0 | | | | " + ("| " if over else "") + f"{len(bad)} |")
            continue
        g, t = np.array([x["gap"] for x in ok]), np.array([x["ms"] for x in ok])
        print(f"| {family} | {len(ok)} | {100 * np.median(g):+.3f} / {100 * g.max():+.3f} | {(g > 1e-3).sum()} | "
              f"{np.median(t):.0f} / {t.max():.0f} | " +
              (f"{100 * max(x['over'] for x in ok):+.3f} | " if over else "") + f"{len(bad)} |")
    g = np.array([x["gap"] for x in rows if x["status"] == "ok"])
    print(f"\nall: {g.size} plans, gap median {100 * np.median(g):+.3f} %, worst {100 * g.max():+.3f} %, "
          f"{(g > 1e-3).sum()} above +0.1 %; not planned: "
          f"{sum(x['status'] not in ('ok', 'skipped') for x in rows)}")


if __name__ == "__main__":
    main()
