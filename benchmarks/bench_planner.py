"""`toppra-app bench planner`: the planner against toppra on a suite of robots and path families we did not
tune on (`cases.suite`), in one run, with the issue-10 targets printed as PASS/FAIL.

Per case (`toppra_app.plan_time_optimal`, default options; toppra 0.6 TOPP-RA, interpolation scheme, seidel
solver, N = 1000 uniform grid points, torque limits through Pinocchio's RNEA + our friction model):

* first plan: a fresh path object each time in a warm process (the problem structure compiled once per
  process, as in any real use), median of `repeats`; toppra's whole call (constraints + solve) the same way;
* re-plan: the same planner with a 0.2 kg payload (median), as a share of the first plan, and its duration
  against the converged plan with that payload (the same reference, below);
* durations against our plan on 3200 intervals — the shorter of θ̈ constant and θ̈ linear per interval,
  both verified between grid points, so a limit-respecting converged reference (before the linear law
  became the default the reference was the constant law's alone); toppra's grid-point-only profiles can be
  shorter than the optimum because they
  exceed limits between grid points), as relative gaps — ours, toppra N = 1000 and toppra N = 5000 beside;
  `plan.gap_estimate` of our plan and of the reference (how converged the reference itself is);
* limits: the 1 ms resampling of our plan judged by Pinocchio's RNEA (+ friction) and the joint limits —
  an engine independent of ours — as the worst over-limit in per cent; toppra's beside it.

A cold process (import + first plan, compiling) is measured in a subprocess per robot and reported apart.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import warnings

import numpy as np

from .cases import robot, suite
from .peers import pinocchio_inverse_dynamics, to_pinocchio, toppra_plan
from .timing import median_time

REPLAN_PAYLOAD = 0.2              # kg at the tool: "another payload" (0.6 × rated torque leaves little room)
TARGETS = dict(first_median=1.0, first_worst=2.0, replan=0.3, gap=1e-3, limit=1e-3)


def sampled_friction(r, qd, tau) -> np.ndarray:
    """Friction F_v q̇ + F_c sign(q̇) at samples in time order ((M, n)), given the rigid-body torques `tau`.
    Where a joint is at rest (q̇ = 0: the first and last samples) its Coulomb friction is that of the motion
    next to it, F_c sign(q̇) of a neighbouring sample (the one giving the larger |τ|): the sample carries that
    motion's acceleration, and kinetic friction acts for as long as the joint moves."""
    coulomb = np.asarray(r.coulomb) * np.sign(qd)
    if len(qd) > 1:
        before = np.vstack([qd[1:2], qd[:-1]])                  # (the first sample: the next one's)
        after = np.vstack([qd[1:], qd[-2:-1]])                  # (the last sample: the previous one's)
        c1, c2 = (np.asarray(r.coulomb) * np.sign(x) for x in (before, after))
        coulomb = np.where(qd == 0.0, np.where(np.abs(tau + c1) >= np.abs(tau + c2), c1, c2), coulomb)
    return np.asarray(r.viscous) * qd + coulomb


def _over_limit(r, q, qd, qdd) -> float:
    """Worst |value|/limit − 1 over torque (Pinocchio RNEA + friction, `sampled_friction`), velocity and
    acceleration, at samples in time order."""
    import pinocchio as pin
    model = to_pinocchio(r)
    data = model.createData()
    tau = np.array([pin.rnea(model, data, a, b, c) for a, b, c in zip(q, qd, qdd)])
    tau = tau + sampled_friction(r, qd, tau)
    worst = 0.0
    for v, lim in ((tau, r.tau_max), (qd, r.qd_max), (qdd, r.qdd_max)):
        if np.isfinite(lim).any():
            worst = max(worst, float(np.max(np.abs(v) / lim)))
    return worst - 1.0


def converged(r, W, sd_end: float, payload=None, sd_start: float = 0.0):
    """(the reference, [θ̈ constant, θ̈ linear]): our plans on 3200 intervals under both laws, the reference the
    shorter of those within the limits (checked between grid points)."""
    from toppra_app import JointPath, plan_time_optimal
    fines = [plan_time_optimal(r, JointPath.from_waypoints(W), grid=3200, sd_start=sd_start, sd_end=sd_end,
                               time_law=law, payload=payload) for law in ("constant", "linear")]
    return min((f for f in fines if f.worst_ratio <= 1.001), key=lambda f: f.duration, default=fines[0]), fines


def run_case(case, repeats: int = 3) -> dict:
    from toppra_app import JointPath, plan_time_optimal
    from toppra_app.errors import InfeasiblePathError
    from toppra_app.planner import TimeOptimalPlanner
    r = robot(case.robot)
    W, sd_end = case.waypoints, case.sd_end
    inv_dyn = pinocchio_inverse_dynamics(r)
    row = dict(case=case.name, family=case.family, robot=case.robot, waypoints=len(W))
    warnings.simplefilter("ignore", RuntimeWarning)
    try:
        plan = plan_time_optimal(r, JointPath.from_waypoints(W), sd_end=sd_end)          # warm-up (compiles)
    except InfeasiblePathError as exc:
        ref = toppra_plan(r, W, 1000, sd_end=sd_end, dt=None, inv_dyn=inv_dyn)
        row.update(status="infeasible", message=str(exc)[:200], toppra_feasible=bool(ref["feasible"]))
        return row
    t_ours, plan = median_time(lambda: plan_time_optimal(r, JointPath.from_waypoints(W), sd_end=sd_end), repeats)
    t_toppra, tp = median_time(lambda: toppra_plan(r, W, 1000, sd_end=sd_end, dt=None, inv_dyn=inv_dyn), repeats)
    planner = TimeOptimalPlanner(r, JointPath.from_waypoints(W))
    planner.plan(sd_end=sd_end)
    try:
        t_replan, replan = median_time(lambda: planner.plan(payload=REPLAN_PAYLOAD, sd_end=sd_end), repeats)
        replan_gap = replan.duration / converged(r, W, sd_end, REPLAN_PAYLOAD)[0].duration - 1.0
    except InfeasiblePathError:                       # the payload is too heavy for this path: time the error
        t_replan = replan_gap = np.nan
    t5 = toppra_plan(r, W, 5000, sd_end=sd_end, dt=None, inv_dyn=inv_dyn)
    fine, fines = converged(r, W, sd_end)
    ref = fine.duration
    smp = plan.sample(1e-3)
    tp_sample = toppra_plan(r, W, 1000, sd_end=sd_end, dt=1e-3, inv_dyn=inv_dyn)["sample"]
    row.update(
        status="ok", intervals=int(plan.s.size - 1), iterations=int(plan.iterations),
        ours_s=t_ours, toppra_s=t_toppra, ratio=t_ours / t_toppra, replan_s=t_replan, replan_share=t_replan / t_ours,
        replan_gap=replan_gap,
        duration=plan.duration, toppra1000=tp["duration"], toppra5000=t5["duration"], ours3200=fine.duration,
        ours3200_constant=fines[0].duration, ours3200_linear=fines[1].duration, reference_law=
        "linear" if fine is fines[1] else "constant", law="linear" if plan.law.linear else "constant",
        reference=ref, gap=plan.duration / ref - 1.0, toppra_gap=tp["duration"] / ref - 1.0,
        estimate=plan.gap_estimate if plan.gap_estimate is not None else np.nan,
        reference_estimate=fine.gap_estimate if fine.gap_estimate is not None else np.nan,
        toppra5000_gap=t5["duration"] / ref - 1.0 if t5["feasible"] else np.nan,
        over=_over_limit(r, smp.q, smp.qd, smp.qdd),
        toppra_over=_over_limit(r, tp_sample.q, tp_sample.qd, tp_sample.qdd) if tp_sample is not None else np.nan)
    return row


COLD = """
import time, sys
t0 = time.perf_counter()
from toppra_app import JointPath, plan_time_optimal
from benchmarks.cases import robot, suite
t1 = time.perf_counter()
case = [c for c in suite([sys.argv[1]], quick=True) if c.family == "random"][0]
r = robot(case.robot)
t2 = time.perf_counter()
plan_time_optimal(r, JointPath.from_waypoints(case.waypoints))
t3 = time.perf_counter()
print(t1 - t0, t3 - t2)
"""


def cold_process(name: str) -> tuple[float, float]:
    """(import seconds, first plan seconds incl. compiling) in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", COLD, name], capture_output=True, text=True, timeout=600)
    a, b = out.stdout.split()[-2:]
    return float(a), float(b)


def summarise(rows) -> dict:
    ok = [r for r in rows if r["status"] == "ok"]
    out = {}
    for fam in sorted({r["family"] for r in ok}) + ["all"]:
        sel = [r for r in ok if fam in ("all", r["family"])]
        out[fam] = {k: (float(np.nanmedian([r[k] for r in sel])), float(np.nanmax([r[k] for r in sel])))
                    for k in ("ratio", "replan_share", "gap", "replan_gap", "toppra_gap", "toppra5000_gap", "over",
                              "toppra_over")}
        out[fam]["n"] = len(sel)
    return out


def verdicts(summary) -> list[tuple[str, bool, str]]:
    a = summary["all"]
    return [
        ("first plan median ≤ 1.0× toppra", a["ratio"][0] <= TARGETS["first_median"], f"{a['ratio'][0]:.2f}×"),
        ("first plan worst ≤ 2× toppra", a["ratio"][1] <= TARGETS["first_worst"], f"{a['ratio'][1]:.2f}×"),
        ("re-plan ≤ 0.3× first plan (median)", a["replan_share"][0] <= TARGETS["replan"], f"{a['replan_share'][0]:.2f}×"),
        ("every duration within 0.1 % of converged (re-plans too)",
         max(a["gap"][1], a["replan_gap"][1]) <= TARGETS["gap"], f"worst +{100 * a['gap'][1]:.3f} %, re-plans +{100 * a['replan_gap'][1]:.3f} %"),
        ("≤ 0.1 % over any limit (1 ms, Pinocchio)", a["over"][1] <= TARGETS["limit"], f"worst {100 * a['over'][1]:+.3f} %"),
    ]


def markdown(rows, summary, cold, command: str) -> str:
    import importlib.metadata

    import cvxpy
    lines = [f"Command: `{command}`  ", f"Machine: {platform.processor() or platform.machine()}, "
             f"{platform.system()}, Python {platform.python_version()}, numpy {np.__version__}, cvxpy "
             f"{cvxpy.__version__}, toppra {importlib.metadata.version('toppra')}, "
             f"pin {importlib.metadata.version('pin')}", "",
             "| case | N | θ̈ | ours ms | toppra ms | ratio | re-plan | re-plan gap % | gap % | est. % | ref. θ̈ "
             "| ref. est. % | toppra N=1000 gap % | toppra N=5000 gap % | over % | toppra over % |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['case']} | infeasible (toppra: {'feasible' if r['toppra_feasible'] else 'infeasible'}) "
                         f"| | | | | | | | | | | | | | |")
            continue
        lines.append(f"| {r['case']} | {r['intervals']} | {r['law']} | {1e3 * r['ours_s']:.0f} | {1e3 * r['toppra_s']:.0f} | "
                     f"{r['ratio']:.2f} | {r['replan_share']:.2f} | {100 * r['replan_gap']:+.3f} | "
                     f"{100 * r['gap']:+.3f} | {100 * r['estimate']:.2f} | "
                     f"{r['reference_law']} | {100 * r['reference_estimate']:.2f} | {100 * r['toppra_gap']:+.3f} | "
                     f"{100 * r['toppra5000_gap']:+.3f} | {100 * r['over']:+.3f} | {100 * r['toppra_over']:+.2f} |")
    lines += ["", "| family | n | ratio median / worst | gap % median / worst | re-plan gap % worst | toppra gap % median "
                  "/ worst | over % worst | toppra over % worst |", "|---|---|---|---|---|---|---|---|"]
    for fam, s in summary.items():
        lines.append(f"| {fam} | {s['n']} | {s['ratio'][0]:.2f} / {s['ratio'][1]:.2f} | {100 * s['gap'][0]:+.3f} / "
                     f"{100 * s['gap'][1]:+.3f} | {100 * s['replan_gap'][1]:+.3f} | {100 * s['toppra_gap'][0]:+.3f} / "
                     f"{100 * s['toppra_gap'][1]:+.3f} | "
                     f"{100 * s['over'][1]:+.3f} | {100 * s['toppra_over'][1]:+.2f} |")
    lines += ["", "Cold process (fresh interpreter): " + "; ".join(
        f"{n}: import {a:.2f} s, first plan {b:.2f} s" for n, (a, b) in cold.items()), "", "Targets (issue 10):", ""]
    lines += [f"- {'PASS' if ok else 'FAIL'}: {what} — {val}" for what, ok, val in verdicts(summary)]
    return "\n".join(lines) + "\n"


def run_planner_benchmark(out=print, quick: bool = False, repeats: int = 3, json_path=None, markdown_path=None,
                          robots=None) -> dict:
    cases = suite(robots, quick=quick)
    out(f"## Planner vs toppra (N = 1000, Pinocchio RNEA) on {len(cases)} cases"
        f"{' (quick)' if quick else ''}; times are medians of {repeats}")
    out(f"{'case':34s} {'N':>5s} {'ours ms':>8s} {'toppra':>7s} {'ratio':>6s} {'replan':>6s} {'gap %':>8s} "
        f"{'tp gap %':>8s} {'over %':>7s} {'tp over %':>9s}")
    rows = []
    for case in cases:
        r = run_case(case, repeats)
        rows.append(r)
        if r["status"] != "ok":
            out(f"{r['case']:34s} infeasible: {r['message'][:60]} (toppra: "
                f"{'feasible' if r['toppra_feasible'] else 'infeasible too'})")
            continue
        out(f"{r['case']:34s} {r['intervals']:5d} {1e3 * r['ours_s']:8.1f} {1e3 * r['toppra_s']:7.1f} {r['ratio']:6.2f} "
            f"{r['replan_share']:6.2f} {100 * r['gap']:+8.3f} {100 * r['toppra_gap']:+8.3f} {100 * r['over']:+7.3f} "
            f"{100 * r['toppra_over']:+9.2f}")
    summary = summarise(rows)
    out("\nper family: ratio (median/worst), gap % vs converged (median/worst), worst over-limit %")
    for fam, s in summary.items():
        out(f"  {fam:14s} n={s['n']:2d} ratio {s['ratio'][0]:.2f}/{s['ratio'][1]:.2f}  gap {100 * s['gap'][0]:+.3f}/"
            f"{100 * s['gap'][1]:+.3f} re-plans {100 * s['replan_gap'][1]:+.3f}  "
            f"(toppra N=1000 {100 * s['toppra_gap'][0]:+.3f}/{100 * s['toppra_gap'][1]:+.3f})  "
            f"over {100 * s['over'][1]:+.3f} (toppra {100 * s['toppra_over'][1]:+.2f})")
    cold = {}
    for name in sorted({c.robot.partition("+")[0] for c in cases}):
        try:
            cold[name] = cold_process(name)
        except (subprocess.SubprocessError, ValueError):
            continue
    out("cold process: " + "; ".join(f"{n}: import {a:.2f} s, first plan {b:.2f} s" for n, (a, b) in cold.items()))
    for what, ok, val in verdicts(summary):
        out(f"  {'PASS' if ok else 'FAIL'}  {what}: {val}")
    result = dict(rows=rows, summary=summary, cold=cold)
    if json_path:
        with open(json_path, "w") as fh:
            json.dump(result, fh, indent=1, default=float)
    if markdown_path:
        command = "toppra-app bench planner" + (" --quick" if quick else "")
        with open(markdown_path, "w") as fh:
            fh.write(markdown(rows, summary, cold, command))
    return result
