"""Joint-space polylines sampled densely — what a sampling-based planner (MoveIt's OMPL, interpolated) hands
over: 3–6 random vertices within the middle half of each joint range, 5, 10, 20 or 40 samples on each straight
segment. The cubic spline through them turns within a segment or so at each vertex (a `grid.corners`), and the
optimal θ̇² rises and falls there as the limiting joint changes. Per path: the default plan against the converged
one (`bench_planner.converged`), Pinocchio's RNEA on its 1 ms samples, and the time against toppra N = 1000 in
the same process (medians of 3).

    python -m benchmarks.study_polylines [--robots iiwa7,ur5e] [--seeds 12]
    python -m benchmarks.study_polylines --controller --seeds 3     # the controller profile against the plain plan

Both draws of the twenty-second session (seeds 100… with 5–40 samples a segment, 200… with 5–10): about
6 minutes on the 2-core machine.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from .bench_planner import _over_limit, converged
from .cases import robot
from .peers import pinocchio_inverse_dynamics, toppra_plan
from .timing import median_time

ROBOTS = ("iiwa7", "ur5e", "panda-urdf", "ur10-urdf")
DRAWS = ((100, (5, 10, 20, 40)), (200, (5, 10)))       # (seed base, samples a segment to choose from)


def polyline(r, seed: int, pers) -> tuple:
    """(vertices, samples a segment, waypoints) of draw `seed`: `np.random.default_rng(seed)`."""
    lo = np.where(np.isfinite(r.q_min), r.q_min, -np.pi)
    hi = np.where(np.isfinite(r.q_max), r.q_max, np.pi)
    rng = np.random.default_rng(seed)
    nv, per = int(rng.integers(3, 7)), int(rng.choice(list(pers)))
    V = rng.uniform(lo + 0.25 * (hi - lo), hi - 0.25 * (hi - lo), size=(nv, r.n))
    W = np.vstack([np.linspace(V[k], V[k + 1], per, endpoint=False) for k in range(nv - 1)] + [V[-1:]])
    return nv, per, W


def run_path(name: str, r, seed: int, pers, inv_dyn) -> dict:
    from toppra_app import JointPath, plan_time_optimal
    from toppra_app.errors import InfeasiblePathError
    from toppra_app.planning.grid import corners
    nv, per, W = polyline(r, seed, pers)
    row = dict(robot=name, seed=seed, vertices=nv, per=per, corners=len(corners(JointPath.from_waypoints(W))))
    try:
        plan_time_optimal(r, JointPath.from_waypoints(W))                       # warm-up (compiles)
    except InfeasiblePathError as exc:
        return {**row, "status": "infeasible", "message": str(exc)[:120]}
    t_ours, plan = median_time(lambda: plan_time_optimal(r, JointPath.from_waypoints(W)), 3)
    t_toppra, tp = median_time(lambda: toppra_plan(r, W, 1000, sd_end=0.0, dt=None, inv_dyn=inv_dyn), 3)
    ref = converged(r, W, 0.0)[0].duration
    s = plan.sample(1e-3)
    return {**row, "status": "ok", "N": int(plan.s.size - 1), "solves": int(plan.iterations), "ms": 1e3 * t_ours,
            "toppra_ms": 1e3 * t_toppra, "ratio": t_ours / t_toppra, "gap": plan.duration / ref - 1.0,
            "toppra_gap": tp["duration"] / ref - 1.0 if tp["feasible"] else np.nan,
            "over": _over_limit(r, s.q, s.qd, s.qdd)}


def run_controller(r, seed: int, pers, prof) -> dict | None:
    """The controller profile `prof` (`bench_controller.profile`) against the plain plan on draw `seed`, fresh
    planners, medians of 3: (ratio, solves, passes, worst sampled torque rate / limit, within its limits), or None
    where either plan is refused (the profile's torque headroom below a gravity load)."""
    from toppra_app import JointPath
    from toppra_app.errors import InfeasiblePathError
    from toppra_app.planner import TimeOptimalPlanner
    _, _, W = polyline(r, seed, pers)
    try:
        plain, _ = median_time(lambda: TimeOptimalPlanner(r, JointPath.from_waypoints(W)).plan(), 3)
        ms, plan = median_time(lambda: TimeOptimalPlanner(r, JointPath.from_waypoints(W), controller=prof).plan(), 3)
    except InfeasiblePathError as exc:
        print(f"| {r.name} | {seed} | refused: {str(exc)[:90]}… |||||||")
        return None
    rate = max(w.ratio for w in plan.rate_check.values()) if plan.rate_check else float("nan")
    row = dict(ratio=ms / plain, plain=plain, ms=ms, solves=plan.iterations, passes=plan.rate_info["passes"],
               rate=rate, within=plan.within_limits)
    print(f"| {r.name} | {seed} | {1e3 * plain:.0f} | {1e3 * ms:.0f} | {row['ratio']:.2f} | {row['solves']} | "
          f"{row['passes']} | {rate:.4f} | {row['within']} |", flush=True)
    return row


def main_controller(robots, seeds: int) -> int:
    from .bench_controller import profile
    prof = profile()
    print("| robot | seed | plain ms | controller ms | ratio | solves | passes | rate / limit | within its limits |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = [run_controller(robot(name), base + k, pers, prof) for name in robots for base, pers in DRAWS
            for k in range(seeds)]
    ok = [x for x in rows if x is not None]
    ratio = np.array([x["ratio"] for x in ok])
    print(f"\n{len(ok)} plans ({len(rows) - len(ok)} refused): controller / plain median {np.median(ratio):.2f}×, worst "
          f"{ratio.max():.2f}×; worst rate {max(x['rate'] for x in ok):.4f} × the limit; all within their limits: "
          f"{all(x['within'] for x in ok)}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.study_polylines", description=__doc__.splitlines()[0])
    ap.add_argument("--robots", default=",".join(ROBOTS))
    ap.add_argument("--seeds", type=int, default=6, help="draws per robot and seed base (default 6)")
    ap.add_argument("--controller", action="store_true",
                    help="the controller profile (bench controller's) against the plain plan instead of toppra")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)
    if args.controller:
        return main_controller(args.robots.split(","), args.seeds)
    rows = []
    print("| robot | seed | vertices | samples a segment | corners | N | solves | ours ms | toppra ms | ratio | "
          "gap % | toppra gap % | over % |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.robots.split(","):
        r = robot(name)
        inv_dyn = pinocchio_inverse_dynamics(r)
        for base, pers in DRAWS:
            for k in range(args.seeds):
                row = run_path(name, r, base + k, pers, inv_dyn)
                rows.append(row)
                if row["status"] != "ok":
                    print(f"| {name} | {row['seed']} | {row['vertices']} | {row['per']} | {row['corners']} | "
                          f"{row['status']}: {row['message']} |||||||||")
                    continue
                print(f"| {name} | {row['seed']} | {row['vertices']} | {row['per']} | {row['corners']} | {row['N']} | "
                      f"{row['solves']} | {row['ms']:.0f} | {row['toppra_ms']:.0f} | {row['ratio']:.2f} | "
                      f"{100 * row['gap']:+.3f} | {100 * row['toppra_gap']:+.3f} | {100 * row['over']:+.3f} |",
                      flush=True)
    ok = [x for x in rows if x["status"] == "ok"]
    if ok:
        pick = lambda k: np.array([x[k] for x in ok])       # noqa: E731
        print(f"\n{len(ok)} plans ({len(rows) - len(ok)} infeasible): gap median {100 * np.median(pick('gap')):+.3f} %, "
              f"worst {100 * pick('gap').max():+.3f} %; over worst {100 * pick('over').max():+.3f} %; time / toppra "
              f"median {np.median(pick('ratio')):.2f}×, worst {pick('ratio').max():.2f}×; toppra N = 1000 gap median "
              f"{100 * np.nanmedian(pick('toppra_gap')):+.3f} %, worst {100 * np.nanmax(pick('toppra_gap')):+.3f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
