"""The time–energy objective (`energy_weight`) checked on its own objective, measured independently.

Per robot (iiwa7, ur5e built in; the Panda (fingers locked), UR10 and Kinova URDFs of example-robot-data at
0.6 × rated torque, `cases.erd_arm`), random paths of 3–8 waypoints over 20–80 % of the joint ranges (seeds
`--seeds`) and a tiny motion (4 waypoints within ±1e-3 rad), and w in `--weights`:

* J = T + w ∫ τᵀRτ dt (R = diag(1/τ_max²), `objectives.energy`) of the energy plan (default options), of the
  plain time-optimal plan (w = 0) and of the energy plan on `--ref-grid` intervals (the converged reference),
  each measured on 0.1 ms samples of the executed trajectory with torques by Pinocchio's RNEA + the model's
  friction (`bench_planner.sampled_friction`), not by our dynamics;
* (J_energy − J_plain)/J_plain (≤ 0: the energy plan never loses to the time-optimal one on its own objective),
  J_energy / J_best − 1 with J_best the smallest of the three (the gap to the converged plan), and the worst
  over-limit of the energy plan's 1 ms samples (Pinocchio, `bench_planner._over_limit`).

    python -m benchmarks.study_energy [--robots iiwa7,kinova-urdf] [--seeds 0,1,2] [--ref-grid 800] [--json out]
"""

from __future__ import annotations

import argparse
import functools
import json
import time
import warnings

import numpy as np

from .bench_planner import _over_limit, sampled_friction
from .cases import _span, erd_arm, robot as suite_robot
from .peers import to_pinocchio
from .study_hunt import _draw

ROBOTS = ("iiwa7", "ur5e", "panda-urdf", "ur10-urdf", "kinova-urdf")
WEIGHTS = (0.01, 0.1, 1.0, 10.0, 100.0)


@functools.lru_cache(maxsize=None)
def arm(name: str):
    return erd_arm("kinova_description/robots/kinova.urdf") if name == "kinova-urdf" else suite_robot(name)


def paths(name: str, seeds) -> list[tuple[str, np.ndarray]]:
    """[(label, waypoints)]: a random path per seed ("randS") and one tiny motion, each holdable."""
    r = arm(name)
    lo, hi = _span(r)
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        m = int(rng.integers(3, 9))
        out.append((f"rand{seed}", _draw(r, lambda: rng.uniform(lo, hi, size=(m, r.n)))))
    rng = np.random.default_rng(99)
    out.append(("tiny", _draw(r, lambda: rng.uniform(lo, hi) + rng.uniform(-1e-3, 1e-3, size=(4, r.n)))))
    return out


def measured_energy(r, plan, dt: float = 1e-4) -> float:
    """∫ τᵀRτ dt (trapezoidal) on `dt` samples, τ by Pinocchio's RNEA + friction, R = 1/τ_max²."""
    import pinocchio as pin
    model = to_pinocchio(r)
    data = model.createData()
    s = plan.sample(dt)
    tau = np.array([pin.rnea(model, data, a, b, c) for a, b, c in zip(s.q, s.qd, s.qdd)])
    tau = tau + sampled_friction(r, s.qd, tau)
    p = np.einsum("ik,k,ik->i", tau, 1.0 / np.asarray(r.tau_max, float) ** 2, tau)
    return float(np.sum(0.5 * (p[1:] + p[:-1]) * np.diff(s.t)))


def run_path(name: str, label: str, W, weights, ref_grid: int) -> list[dict]:
    from toppra_app import JointPath
    from toppra_app.planner import TimeOptimalPlanner
    r = arm(name)
    path = JointPath.from_waypoints(W)
    plain = TimeOptimalPlanner(r, path).plan()
    T0, E0 = plain.duration, measured_energy(r, plain)
    rows = []
    for w in weights:
        t0 = time.perf_counter()
        try:
            plan = TimeOptimalPlanner(r, path, energy_weight=w).plan()
        except Exception as exc:                      # (a failure is a finding: counted in the table)
            rows.append(dict(robot=name, path=label, weight=w, error=f"{type(exc).__name__}: {str(exc)[:160]}"))
            print(f"  {name}/{label} w={w:g}: {rows[-1]['error']}", flush=True)
            continue
        seconds = time.perf_counter() - t0
        J = plan.duration + w * measured_energy(r, plan)
        J0 = T0 + w * E0
        try:
            if not ref_grid:
                raise RuntimeError("no reference (--ref-grid 0)")
            ref = TimeOptimalPlanner(r, path, energy_weight=w, grid=ref_grid).plan()
            J_ref = ref.duration + w * measured_energy(r, ref)
        except Exception as exc:                      # (reported; the reference then is the better of the two)
            J_ref = np.nan
            if ref_grid:
                print(f"  {name}/{label} w={w}: reference failed: {str(exc)[:120]}", flush=True)
        best = np.nanmin([J, J0, J_ref])
        smp = plan.sample(1e-3)
        rows.append(dict(robot=name, path=label, weight=w, T=plan.duration, T_plain=T0, J=J, J_plain=J0, J_ref=J_ref,
                         vs_plain=J / J0 - 1.0, gap=J / best - 1.0, over=_over_limit(r, smp.q, smp.qd, smp.qdd),
                         kept=any(x.get("action") == "time-optimal kept" for x in plan.refinements),
                         seconds=seconds))
        print(f"  {name}/{label} w={w:g}: J/J_plain-1 {rows[-1]['vs_plain']:+.4%}, gap {rows[-1]['gap']:+.4%}, "
              f"over {rows[-1]['over']:+.4%}, {seconds:.2f} s", flush=True)
    return rows


def table(rows, weights) -> str:
    out = ["| w | plans (errors) | (J − J_plain)/J_plain median | worst | gap to converged median | worst | "
           "time-optimal kept | worst over-limit (Pinocchio, 1 ms) | plan s median |", "|---|---|---|---|---|---|---|---|---|"]
    for w in weights:
        sel = [x for x in rows if x["weight"] == w and "error" not in x]
        errors = sum(x["weight"] == w and "error" in x for x in rows)
        if not sel:
            continue
        v, g = np.array([x["vs_plain"] for x in sel]), np.array([x["gap"] for x in sel])
        out.append(f"| {w:g} | {len(sel)} ({errors}) | {100 * np.median(v):+.3f} % | {100 * v.max():+.3f} % | "
                   f"{100 * np.median(g):.3f} % | {100 * g.max():.3f} % | {sum(x['kept'] for x in sel)} | "
                   f"{100 * max(x['over'] for x in sel):+.3f} % | {np.median([x['seconds'] for x in sel]):.2f} |")
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", default=",".join(ROBOTS))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--weights", default=",".join(f"{w:g}" for w in WEIGHTS))
    ap.add_argument("--ref-grid", type=int, default=800)
    ap.add_argument("--json", default=None, help="write the rows here")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)
    weights = [float(w) for w in a.weights.split(",")]
    rows = []
    for name in a.robots.split(","):
        for label, W in paths(name, [int(s) for s in a.seeds.split(",")]):
            rows += run_path(name, label, W, weights, a.ref_grid)
    print(table(rows, weights))
    worst = max((x for x in rows if "error" not in x), key=lambda x: x["vs_plain"])
    print(f"worst J/J_plain − 1: {100 * worst['vs_plain']:+.4f} % ({worst['robot']}/{worst['path']}, w = "
          f"{worst['weight']:g})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
