"""Recorded / noisy waypoints: the interpolated path against the fit within a tolerance
(`JointPath.from_waypoints(..., tolerance=)`, docs/planner.md "Recorded or noisy waypoints").

Per robot, motion and number of waypoints m: samples of a smooth motion (a cubic spline through `base` random
points over 20–80 % of each joint range; 3 points as `cases.suite`'s dense family) with Gaussian noise σ;
planned (default options) on the spline through them and on the fit within 5σ; beside them the plan on the
noise-free motion (the truth the fit should recover). Prints a markdown table.

    python -m benchmarks.study_waypoint_fit [--sizes 1000,3000] [--bases 3,20] [--sigma 1e-4]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from .cases import _span, available_robots, robot


def row(name: str, base: int, m: int, sigma: float, seed: int) -> str:
    from toppra_app import JointPath, plan_time_optimal
    r = robot(name)
    lo, hi = _span(r)
    rng = np.random.default_rng(seed)
    smooth = JointPath.from_waypoints(rng.uniform(lo, hi, size=(base, r.n)))
    s = np.linspace(0.0, 1.0, m)
    W = smooth.q(s) + rng.normal(scale=sigma, size=(m, r.n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        t0 = time.perf_counter()
        exact = plan_time_optimal(r, JointPath.from_waypoints(W))
        t1 = time.perf_counter()
        path = JointPath.from_waypoints(W, tolerance=5 * sigma)
        t2 = time.perf_counter()
        fitted = plan_time_optimal(r, path)
        t3 = time.perf_counter()
    truth = plan_time_optimal(r, smooth)
    dev = np.abs(path.q(s) - W).max()
    return (f"| {name} | {base} | {m} | {1e3 * (t1 - t0):.0f} | {exact.s.size - 1} | {exact.duration:.4f} | "
            f"{100 * exact.gap_estimate:.1f} | {1e3 * (t2 - t1):.1f} | {len(path.knots) - 1} | {dev:.2e} | "
            f"{1e3 * (t3 - t2):.0f} | {fitted.duration:.4f} | {100 * fitted.gap_estimate:.2f} | "
            f"{truth.duration:.4f} | {100 * (fitted.duration / truth.duration - 1):+.3f} | "
            f"{exact.duration / fitted.duration:.2f} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,3000")
    ap.add_argument("--bases", default="3,20")
    ap.add_argument("--sigma", type=float, default=1e-4)
    args = ap.parse_args(argv)
    print("| robot | motion through | waypoints | interpolated: plan ms | N | duration s | est. % | fit ms | knot intervals | "
          "worst miss | fitted: plan ms | duration s | est. % | noise-free duration s | fitted vs noise-free % | "
          "interpolated / fitted |")
    print("|" + "---|" * 16)
    for k, name in enumerate(available_robots()):
        for base in (int(x) for x in args.bases.split(",")):
            for m in (int(x) for x in args.sizes.split(",")):
                print(row(name, base, m, args.sigma, 2000 + k), flush=True)


if __name__ == "__main__":
    main()
