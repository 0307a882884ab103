"""`toppra-app bench controller`: the controller profile (docs/controller.md) against the plain plan on the
planner benchmark suite (`cases.suite`), in one warm process.

Per case, with `PROFILE` (torque headroom 0.9, velocity headroom 0.95, torque rate ≤ 1000 N·m/s, smooth
starts and stops) — a fresh planner and path each time, both plans warmed up first (compiling their
structures once per process, as in any real use), median of `repeats`:

* planning time of the plain plan and of the controller-profile plan, and their ratio (target ≤ 2×
  median; the worst is reported);
* solves of the controller plan, and whether any solve was only "inaccurate" (a solver warning or status);
* the torque rate a controller sampling every 1 ms sees (finite differences of τ, including the steps
  from and to rest), worst over joints, against the limit — for the plain plan too (the problem);
* the worst |τ|/τ_max against the drive's rated τ_max, and the duration increase.
"""

from __future__ import annotations

import json
import time
import warnings

import numpy as np

from .cases import robot, suite

TORQUE_RATE = 1000.0          # N·m/s, a typical drive limit (issue 12)


def profile(time_law: str = "constant"):
    from toppra_app.controller import ControllerProfile
    return ControllerProfile(torque_headroom=0.9, velocity_headroom=0.95, torque_rate_max=TORQUE_RATE,
                             time_law=time_law)


def sampled_rates(r, plan, dt: float = 1e-3) -> dict:
    """Worst torque rate (N·m/s) and jerk (rad/s³) over 1 ms controller samples of `plan` (t = k dt up to the
    first sample at or after the end; rest before and after a rest-to-rest motion, holding gravity — and, for the
    joints a drive loads at rest (`RateLimits.preloaded`, controller.md), the Coulomb friction of the motion's
    direction there), worst |τ|/τ_max."""
    import dynamics
    from toppra_app.limits.rates import RateLimits
    from toppra_app.trajectory import controller_samples
    s = controller_samples(plan.robot, plan.path, plan.law, dt)
    tau, qdd = s.tau, s.qdd
    loaded = np.where(RateLimits(r, torque_rate_max=TORQUE_RATE, dt_c=dt).preloaded(r), r.coulomb, 0.0)
    rest = lambda q, th: (dynamics.inverse_dynamics(r, q[None], 0 * q[None], 0 * q[None])[0]      # noqa: E731
                          + loaded * np.sign(plan.path.dq(np.array([th]))[0]))
    if plan.sd_start == 0:
        tau, qdd = np.vstack([rest(s.q[0], plan.path.s_start), tau]), np.vstack([np.zeros(r.n), qdd])
    if plan.sd_end == 0:
        tau, qdd = np.vstack([tau, rest(s.q[-1], plan.path.s_end)]), np.vstack([qdd, np.zeros(r.n)])
    return dict(torque_rate=float(np.max(np.abs(np.diff(tau, axis=0))) / dt),
                jerk=float(np.max(np.abs(np.diff(qdd, axis=0))) / dt),
                torque=float(np.max(np.abs(s.tau) / r.tau_max)))


def _timed(fn, repeats):
    times, out, inaccurate = [], None, False
    for _ in range(repeats):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
        inaccurate |= any("inaccurate" in str(w.message) for w in caught)
        inaccurate |= out.status != "optimal"
    return float(np.median(times)), out, inaccurate


def run_case(case, repeats: int = 3) -> dict:
    from toppra_app import JointPath
    from toppra_app.errors import InfeasiblePathError
    from toppra_app.planner import TimeOptimalPlanner
    r = robot(case.robot)
    W, sd_end = case.waypoints, case.sd_end
    prof = profile()
    row = dict(case=case.name, family=case.family, robot=case.robot)
    plain = lambda: TimeOptimalPlanner(r, JointPath.from_waypoints(W)).plan(sd_end=sd_end)          # noqa: E731
    ctrl = lambda: TimeOptimalPlanner(r, JointPath.from_waypoints(W), controller=prof).plan(sd_end=sd_end)  # noqa
    lin = profile("linear")
    ctrl_lin = lambda: TimeOptimalPlanner(r, JointPath.from_waypoints(W), controller=lin).plan(sd_end=sd_end)  # noqa
    try:
        plain()
        ctrl()                                                              # warm-up (compiles)
        ctrl_lin()
    except InfeasiblePathError as exc:
        row.update(status="infeasible", message=str(exc)[:200])
        return row
    t_plain, p0, _ = _timed(plain, repeats)
    t_ctrl, p1, inaccurate = _timed(ctrl, repeats)
    t_lin, p2, inaccurate_lin = _timed(ctrl_lin, repeats)
    s0, s1, s2 = sampled_rates(r, p0), sampled_rates(r, p1), sampled_rates(r, p2)
    row.update(lin_s=t_lin, lin_ratio=t_lin / t_plain, lin_solves=int(p2.iterations), lin_inaccurate=bool(inaccurate_lin),
               lin_rate=s2["torque_rate"] / TORQUE_RATE, lin_torque=s2["torque"], lin_T=p2.duration,
               lin_shorter=1.0 - p2.duration / p1.duration)
    row.update(status="ok", plain_s=t_plain, ctrl_s=t_ctrl, ratio=t_ctrl / t_plain, solves=int(p1.iterations),
               passes=int(p1.rate_info["passes"]), inaccurate=bool(inaccurate),
               plain_rate=s0["torque_rate"] / TORQUE_RATE, ctrl_rate=s1["torque_rate"] / TORQUE_RATE,
               plain_jerk=s0["jerk"], ctrl_jerk=s1["jerk"], plain_torque=s0["torque"], ctrl_torque=s1["torque"],
               plain_T=p0.duration, ctrl_T=p1.duration, slower=p1.duration / p0.duration - 1.0,
               worst_ratio=float(p1.worst_ratio))
    return row


def summarise(rows) -> dict:
    ok = [r for r in rows if r["status"] == "ok"]
    ratio = np.array([r["ratio"] for r in ok])
    return dict(n=len(ok), ratio_median=float(np.median(ratio)), ratio_worst=float(ratio.max()),
                worst_case=ok[int(np.argmax(ratio))]["case"], inaccurate=sum(r["inaccurate"] for r in ok),
                rate_worst=float(max(r["ctrl_rate"] for r in ok)), plain_rate_median=float(np.median(
                    [r["plain_rate"] for r in ok])), slower_median=float(np.median([r["slower"] for r in ok])),
                slower_worst=float(max(r["slower"] for r in ok)), torque_worst=float(max(r["ctrl_torque"] for r in ok)),
                lin_ratio_median=float(np.median([r["lin_ratio"] for r in ok])),
                lin_ratio_worst=float(max(r["lin_ratio"] for r in ok)),
                lin_inaccurate=sum(r["lin_inaccurate"] for r in ok), lin_rate_worst=float(max(r["lin_rate"] for r in ok)),
                lin_shorter_median=float(np.median([r["lin_shorter"] for r in ok])),
                lin_shorter_min=float(min(r["lin_shorter"] for r in ok)),
                lin_shorter_max=float(max(r["lin_shorter"] for r in ok)))


def markdown(rows, summary, command: str) -> str:
    lines = [f"Command: `{command}`  ", f"Profile: torque headroom 0.9, velocity headroom 0.95, torque rate ≤ "
             f"{TORQUE_RATE:g} N·m/s (1 ms samples), smooth starts and stops; times are medians of a warm process.",
             "", "| case | plain ms | controller ms | ratio | solves | inaccurate | plain rate / limit | "
                 "controller rate / limit | max τ/τ_max | T plain s | T controller s | slower % | linear ms | ratio | "
                 "solves | rate / limit | T linear s | shorter % |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['case']} | infeasible: {r['message'][:80]} | | | | | | | | | | |")
            continue
        lines.append(f"| {r['case']} | {1e3 * r['plain_s']:.0f} | {1e3 * r['ctrl_s']:.0f} | {r['ratio']:.2f} | "
                     f"{r['solves']} | {'yes' if r['inaccurate'] else 'no'} | {r['plain_rate']:.1f} | "
                     f"{r['ctrl_rate']:.4f} | {r['ctrl_torque']:.3f} | {r['plain_T']:.4f} | {r['ctrl_T']:.4f} | "
                     f"{100 * r['slower']:+.1f} | {1e3 * r['lin_s']:.0f} | {r['lin_ratio']:.2f} | {r['lin_solves']}"
                     f"{' (inaccurate)' if r['lin_inaccurate'] else ''} | {r['lin_rate']:.4f} | {r['lin_T']:.4f} | "
                     f"{100 * r['lin_shorter']:.1f} |")
    s = summary
    lines += ["", f"Time ratio controller / plain: median {s['ratio_median']:.2f}×, worst {s['ratio_worst']:.2f}× "
              f"({s['worst_case']}); inaccurate solves: {s['inaccurate']}; worst sampled torque rate "
              f"{s['rate_worst']:.4f} × the limit (plain plans: median {s['plain_rate_median']:.1f}×); worst |τ|/τ_max "
              f"{s['torque_worst']:.3f}; duration +{100 * s['slower_median']:.1f} % median, "
              f"+{100 * s['slower_worst']:.1f} % worst.",
              "", f"time_law=\"linear\": planning time / plain median {s['lin_ratio_median']:.2f}×, worst "
              f"{s['lin_ratio_worst']:.2f}×; inaccurate solves: {s['lin_inaccurate']}; worst sampled torque rate "
              f"{s['lin_rate_worst']:.4f} × the limit; durations {100 * s['lin_shorter_median']:.1f} % shorter than the "
              f"constant law's (median; {100 * s['lin_shorter_min']:.1f} … {100 * s['lin_shorter_max']:.1f} %)."]
    return "\n".join(lines) + "\n"


def run_controller_benchmark(out=print, quick: bool = False, repeats: int = 3, json_path=None, markdown_path=None,
                             robots=None) -> dict:
    cases = suite(robots, quick=quick)
    out(f"## Controller profile vs plain plan on {len(cases)} cases{' (quick)' if quick else ''}; times are "
        f"medians of {repeats} in a warm process")
    out(f"{'case':34s} {'plain ms':>8s} {'ctrl ms':>8s} {'ratio':>6s} {'solves':>6s} {'inacc':>5s} "
        f"{'plain rate':>10s} {'ctrl rate':>9s} {'max τ':>6s} {'slower %':>8s}")
    rows = []
    for case in cases:
        r = run_case(case, repeats)
        rows.append(r)
        if r["status"] != "ok":
            out(f"{r['case']:34s} infeasible: {r['message'][:80]}")
            continue
        out(f"{r['case']:34s} {1e3 * r['plain_s']:8.1f} {1e3 * r['ctrl_s']:8.1f} {r['ratio']:6.2f} {r['solves']:6d} "
            f"{'yes' if r['inaccurate'] else 'no':>5s} {r['plain_rate']:10.1f} {r['ctrl_rate']:9.4f} "
            f"{r['ctrl_torque']:6.3f} {100 * r['slower']:+8.1f}   linear {1e3 * r['lin_s']:7.1f} ms {r['lin_ratio']:5.2f}x "
            f"rate {r['lin_rate']:.4f} T {r['lin_T']:.3f} shorter {100 * r['lin_shorter']:5.1f} %"
            f"{' INACCURATE' if r['lin_inaccurate'] else ''}")
    summary = summarise(rows)
    out(f"ratio median {summary['ratio_median']:.2f}×, worst {summary['ratio_worst']:.2f}× ({summary['worst_case']}); "
        f"inaccurate {summary['inaccurate']}; worst rate {summary['rate_worst']:.4f} × limit")
    out(f"  {'PASS' if summary['ratio_median'] <= 2.0 else 'FAIL'}  planning time ≤ 2× the plain plan (median)")
    out(f"  {'PASS' if summary['inaccurate'] == 0 else 'FAIL'}  no inaccurate solves")
    out(f"time_law='linear': ratio median {summary['lin_ratio_median']:.2f}×, worst {summary['lin_ratio_worst']:.2f}×; "
        f"inaccurate {summary['lin_inaccurate']}; worst rate {summary['lin_rate_worst']:.4f} × limit; durations "
        f"{100 * summary['lin_shorter_median']:.1f} % shorter (median)")
    result = dict(rows=rows, summary=summary)
    if json_path:
        with open(json_path, "w") as fh:
            json.dump(result, fh, indent=1, default=float)
    if markdown_path:
        with open(markdown_path, "w") as fh:
            fh.write(markdown(rows, summary, "toppra-app bench controller" + (" --quick" if quick else "")))
    return result
