"""The audit's twelve path families: the default plan against the converged one and toppra, per family.

Ported from an audit harness of the planner (its paths, seeds and order of draws, so its cases are reproduced
here): 12 families on the suite's four robots (iiwa7, panda-urdf, ur5e, ur10-urdf; `cases.robot`) — two random
waypoints, one joint moving, tiny motions (1e-2 … 1e-5 rad), a joint sitting 1–2 % from its range's end,
zig-zags of 5–12 waypoints, 30–60 waypoints on sines, 100–500 noisy samples of a smooth motion (1e-5 … 1e-3 rad
noise), boundary speeds, acceleration limits (scalar and per joint), a payload of 0.3–0.9 × the rated one, torque
limits lowered until holding the path still takes 99 % / 99.9 % of one, and mixes of these. A robot's draws in a
family come from seed 77000 + 100 × family index + robot index (in the order of `FAMILIES` and `ROBOTS`);
waypoints are drawn again (up to 100 times) until gravity along the path takes at most 97 % of every torque limit
(with the payload) and the spline stays within the joint ranges.

Per path: our default plan (a warm-up, then the median of 3 timings), toppra 0.6 on N = 1000 (median of 3
timings) and N = 5000 (`peers.toppra_plan`, Pinocchio's RNEA), the converged reference (`bench_planner.converged`),
the gap against it and against toppra N = 5000, the worst over-limit of our plan's 1 ms samples by Pinocchio's
RNEA + friction (`bench_planner._over_limit`) and, unless --no-scale, the same path on s ∈ [0, span] for spans
1e-3 … 1e3 (the worst relative change of the duration: a plan should not depend on the path's parametrisation).
A path we do not plan is a row with status "error" and toppra's verdict on it (N = 1000). Prints one line per
path, then a markdown table per family and over all; --json FILE writes the rows (never over an existing file).

    python -m benchmarks.study_audit [--families a,b] [--robots x,y] [--json FILE] [--no-scale]

All of it: about 8 minutes on the 2-core machine (noisy_dense, zigzag and mixed take most of it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import warnings

import numpy as np

from .cases import _span, hold_share, robot
from .study_families import _speed_at
from .timing import median_time

FAMILIES = ("line2", "single_joint", "tiny", "near_limit", "zigzag", "smooth_many", "noisy_dense", "speeds", "accel",
            "payload", "hold_edge", "mixed")
ROBOTS = ("iiwa7", "panda-urdf", "ur5e", "ur10-urdf")      # (the order the seeds were drawn in)
SPANS = (1e-3, 1e-2, 1e-1, 10.0, 1e2, 1e3)
SEED = 77000


def within(r, W) -> bool:
    """Does the spline through W stay within the joint ranges?"""
    from toppra_app import JointPath
    q = JointPath.from_waypoints(W).q(np.linspace(0.0, 1.0, 2000))
    qmin = np.where(np.isfinite(r.q_min), r.q_min, -1e9)
    qmax = np.where(np.isfinite(r.q_max), r.q_max, 1e9)
    return bool(((q >= qmin) & (q <= qmax)).all())


def draw(r, make, loaded=None, tries: int = 100):
    """Waypoints from `make()` until gravity takes ≤ 97 % of every limit of `loaded` (default `r`) and the
    spline stays within `r`'s ranges."""
    for _ in range(tries):
        W = make()
        if hold_share(r if loaded is None else loaded, W) <= 0.97 and within(r, W):
            return W
    raise RuntimeError(f"no holdable path drawn for {r.name}")


def family_paths(family: str, name: str) -> list:
    """[(label, robot, W, plan keywords), ...] of robot `name` in `family`, drawn in the audit's order (its
    labels; a label repeated within a robot's family gets "-b")."""
    from dynamics.payload import RigidBodyInertia
    from toppra_app import JointPath
    k = ROBOTS.index(name)
    rng, r = np.random.default_rng(SEED + 100 * FAMILIES.index(family) + k), robot(name)
    n, uni = r.n, lambda lo, hi, size=None: rng.uniform(lo, hi, size=size)      # noqa: E731
    out = []
    if family == "line2":
        lo, hi = _span(r, 0.1, 0.9)
        out += [(f"{name}-{j}", r, draw(r, lambda: uni(lo, hi, (2, n))), {}) for j in range(3)]
    elif family == "single_joint":                 # the others stand still at a random point
        lo, hi = _span(r, 0.2, 0.8)
        for joint in [int(rng.integers(0, 3)), int(rng.integers(3, n))]:
            def make():
                W = np.tile(uni(lo, hi), (int(rng.integers(2, 5)), 1))
                W[:, joint] = uni(lo[joint], hi[joint], len(W))
                return W
            out.append((f"{name}-j{joint}", r, draw(r, make), {}))
    elif family == "tiny":
        lo, hi = _span(r, 0.25, 0.75)
        for amp in (1e-2, 1e-3, 1e-4, 1e-5):
            m = int(rng.integers(2, 6))
            out.append((f"{name}-{amp:g}", r, draw(r, lambda: uni(lo, hi) + uni(-amp, amp, (m, n))), {}))
    elif family == "near_limit":                   # one joint approaches and sits 1–2 % from an end of its range
        lo, hi = _span(r, 0.2, 0.8)
        qmin = np.where(np.isfinite(r.q_min), r.q_min, -np.pi)
        qmax = np.where(np.isfinite(r.q_max), r.q_max, np.pi)
        for j in range(2):
            joint, frac = int(rng.integers(0, n)), rng.uniform(0.01, 0.02)
            edge = qmin[joint] + frac * (qmax[joint] - qmin[joint]) if j == 0 else \
                qmax[joint] - frac * (qmax[joint] - qmin[joint])

            def make():
                m = int(rng.integers(2, 4))
                W = uni(lo, hi, (m, n))
                W[-2 if m > 2 else 0:, joint] = edge
                return W
            out.append((f"{name}-j{joint}-{'lo' if j == 0 else 'hi'}{frac * 100:.1f}%", r, draw(r, make), {}))
    elif family == "zigzag":
        lo, hi = _span(r, 0.3, 0.7)
        for _ in range(3):
            m = int(rng.integers(5, 13))
            out.append((f"{name}-{m}wp", r, draw(r, lambda: _zigzag(rng, lo, hi, m, n)), {}))
    elif family == "smooth_many":
        lo, hi = _span(r, 0.25, 0.75)
        for _ in range(2):
            m = int(rng.integers(30, 61))

            def make():
                s = np.linspace(0, 1, m)[:, None]
                f, p = uni(0.5, 2.0, n), uni(0, 2 * np.pi, n)
                return 0.5 * (lo + hi) + 0.5 * (hi - lo) * uni(0.3, 1.0, n) * np.sin(2 * np.pi * f * s + p)
            out.append((f"{name}-{m}wp", r, draw(r, make), {}))
    elif family == "noisy_dense":
        lo, hi = _span(r, 0.25, 0.75)
        sizes = [(int(rng.integers(100, 200)), 1e-5), (int(rng.integers(200, 350)), 1e-4),
                 (int(rng.integers(350, 501)), 1e-3)]
        for m, noise in sizes:
            def make():
                smooth = JointPath.from_waypoints(uni(lo, hi, (int(rng.integers(2, 5)), n)))
                return smooth.q(np.linspace(0, 1, m)) + rng.normal(scale=noise, size=(m, n))
            out.append((f"{name}-{m}x{noise:g}", r, draw(r, make), {}))
    elif family == "speeds":                       # start (and end) at a share of the speed-limited θ̇
        lo, hi = _span(r, 0.2, 0.8)
        for j in range(2):
            W = draw(r, lambda: uni(lo, hi, (int(rng.integers(2, 6)), n)))
            vm = [_speed_at(r, W, 0.0), _speed_at(r, W, 1.0)]
            f0, f1 = (uni(0.1, 0.5), uni(0.1, 0.5)) if j == 0 else (uni(0.2, 0.6), 0.0)
            out.append((f"{name}-{j}", r, W, dict(sd_start=f0 * vm[0], sd_end=f1 * vm[1])))
    elif family == "accel":
        lo, hi = _span(r, 0.2, 0.8)
        for a in [float(uni(1.0, 4.0)), uni(5.0, 30.0, n)]:
            ra = r.with_limits(qdd_max=a if np.ndim(a) else np.full(n, a))
            W = draw(ra, lambda: uni(lo, hi, (int(rng.integers(3, 7)), n)))
            out.append((f"{name}-{'scalar%.1f' % a if np.ndim(a) == 0 else 'perjoint'}", ra, W, {}))
    elif family == "payload":
        lo, hi = _span(r, 0.2, 0.8)
        for _ in range(2):
            mass = float(uni(0.3, 0.9) * (r.rated_payload or 3.0))
            P = RigidBodyInertia.box(mass, uni(0.05, 0.3, 3), com_offset=uni(-0.05, 0.15, 3))
            W = draw(r, lambda: uni(lo, hi, (int(rng.integers(2, 6)), n)), r.with_payload(P, allow_overload=True))
            out.append((f"{name}-{mass:.2f}kg", r, W, dict(payload=P)))
    elif family == "hold_edge":                    # torque limits lowered: holding takes 99 % / 99.9 % of one
        lo, hi = _span(r, 0.2, 0.8)
        for target in (0.99, 0.999):
            W = draw(r, lambda: uni(lo, hi, (int(rng.integers(2, 5)), n)))
            ratio = hold_share(r, W, samples=4000)
            out.append((f"{name}-hold{target}", r.with_limits(tau_max=r.tau_max * ratio / target), W, {}))
    elif family == "mixed":
        out += _mixed(name, k, r, rng)
    else:
        raise ValueError(f"unknown family {family!r}")
    seen = set()
    for i, (label, *rest) in enumerate(out):      # (the audit named two zig-zags alike: the second one "-b")
        out[i] = (label + "-b" if label in seen else label, *rest)
        seen.add(label)
    return out


def _zigzag(rng, lo, hi, m: int, n: int, noise: float = 0.02):
    a, b = rng.uniform(lo, hi, size=(2, n))
    W = np.array([a if i % 2 == 0 else b for i in range(m)])
    return W + rng.normal(scale=noise, size=W.shape)


def _mixed(name: str, k: int, r, rng) -> list:
    """Even robots: a zig-zag with q̈ ≤ 3 and a tiny motion with both end speeds; odd: 300 noisy samples with
    half the rated payload and one wrist joint moving 1 rad with q̈ ≤ 2."""
    from dynamics.payload import RigidBodyInertia
    from toppra_app import JointPath
    lo, hi = _span(r, 0.3, 0.7)
    if k % 2 == 0:
        ra = r.with_limits(qdd_max=np.full(r.n, 3.0))
        m = int(rng.integers(6, 10))
        out = [(f"{name}-zigzag{m}-acc3", ra, draw(ra, lambda: _zigzag(rng, lo, hi, m, r.n)), {})]
        W = draw(r, lambda: rng.uniform(lo, hi) + rng.uniform(-1e-4, 1e-4, size=(3, r.n)))
        P = JointPath.from_waypoints(W)
        vm = [float(np.min(r.qd_max / np.maximum(np.abs(P.dq(np.array([th]))[0]), 1e-12))) for th in (0.0, 1.0)]
        return out + [(f"{name}-tiny1e-4-speeds", r, W, dict(sd_start=0.3 * vm[0], sd_end=0.2 * vm[1]))]
    pay = RigidBodyInertia.box(0.5 * (r.rated_payload or 3.0), (0.1, 0.1, 0.2), com_offset=(0, 0, 0.08))

    def make():
        smooth = JointPath.from_waypoints(rng.uniform(lo, hi, size=(3, r.n)))
        return smooth.q(np.linspace(0, 1, 300)) + rng.normal(scale=1e-3, size=(300, r.n))
    out = [(f"{name}-dense300x1e-3-payload", r, draw(r, make, r.with_payload(pay, allow_overload=True)),
            dict(payload=pay))]
    W = np.tile(rng.uniform(lo, hi), (2, 1))
    W[1, r.n - 2] += 1.0
    return out + [(f"{name}-wrist-line-acc2", r.with_limits(qdd_max=np.full(r.n, 2.0)), W, {})]


def evaluate(family: str, label: str, r, W, sd_start: float = 0.0, sd_end: float = 0.0, payload=None,
             scale: bool = True, repeats: int = 3) -> dict:
    """The audit's row of one path (see the module's docstring); `payload` a `RigidBodyInertia` or None."""
    from toppra_app import JointPath, plan_time_optimal
    from .bench_planner import _over_limit, converged
    from .peers import pinocchio_inverse_dynamics, toppra_plan
    W = np.asarray(W, float)
    rp = r if payload is None else r.with_payload(payload, allow_overload=True)
    row = dict(family=family, label=label, robot=r.name, m=len(W), sd_start=sd_start, sd_end=sd_end,
               payload=None if payload is None else float(payload.mass), hold=hold_share(rp, W))
    inv = pinocchio_inverse_dynamics(rp)
    ends = dict(sd_start=sd_start, sd_end=sd_end)
    ours = lambda: plan_time_optimal(r, JointPath.from_waypoints(W), payload=payload, **ends)   # noqa: E731
    peer = lambda N: toppra_plan(rp, W, N, dt=None, inv_dyn=inv, **ends)                      # noqa: E731
    try:
        ours()                                                                  # warm-up (compiles)
        t_ours, plan = median_time(ours, repeats)
    except Exception as exc:                    # an error is a finding: reported, not raised
        tp = peer(1000)
        return dict(row, status="error", exc=type(exc).__name__, msg=str(exc)[:300],
                    toppra_feasible=bool(tp["feasible"]), toppra1000=tp["duration"])
    row.update(status="ok", duration=plan.duration, ours_s=t_ours, worst_ratio=plan.worst_ratio,
               plan_status=plan.status, N=int(plan.s.size - 1), solves=int(plan.iterations),
               gap_est=float(plan.gap_estimate) if plan.gap_estimate is not None else np.nan)
    t_tp, tp = median_time(lambda: peer(1000), repeats)
    tp5 = peer(5000)
    row.update(toppra_s=t_tp, ratio=t_ours / t_tp, toppra1000=tp["duration"], toppra5000=tp5["duration"],
               toppra_feasible=bool(tp["feasible"]))
    try:
        fine, fines = converged(r, W, sd_end, payload=payload, sd_start=sd_start)
        row.update(conv=fine.duration, conv_c=fines[0].duration, conv_l=fines[1].duration, conv_wr=fine.worst_ratio)
    except Exception as exc:
        row.update(conv=np.nan, conv_exc=f"{type(exc).__name__}: {str(exc)[:200]}")
    row["gap_conv"] = plan.duration / row["conv"] - 1.0
    row["gap_tp5"] = plan.duration / tp5["duration"] - 1.0 if tp5["feasible"] else np.nan
    smp = plan.sample(1e-3)
    row["over"] = _over_limit(rp, smp.q, smp.qd, smp.qdd)
    if scale:
        sc, s = {}, np.linspace(0.0, 1.0, len(W))
        for span in SPANS:
            try:
                d = plan_time_optimal(r, JointPath.from_waypoints(W, s=span * s), payload=payload,
                                      sd_start=sd_start * span, sd_end=sd_end * span).duration
                sc[span] = d / plan.duration - 1.0
            except Exception as exc:
                sc[span] = f"{type(exc).__name__}: {str(exc)[:150]}"
        num = [abs(v) for v in sc.values() if isinstance(v, float)]
        row.update(scale={f"{k:g}": v for k, v in sc.items()}, scale_worst=max(num) if num else np.nan,
                   scale_err=[f"{k:g}: {v}" for k, v in sc.items() if isinstance(v, str)])
    return row


def run_path(family: str, label: str, r, W, kw: dict, seed: int, scale: bool = True, repeats: int = 3) -> dict:
    """`evaluate`, warnings silenced; a failure of the study itself is a row too (status "error")."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            row = evaluate(family, label, r, W, scale=scale, repeats=repeats, **kw)
        except Exception as exc:
            row = dict(family=family, label=label, robot=r.name, status="error", exc=type(exc).__name__,
                       msg=str(exc)[:300], trace=traceback.format_exc()[-800:])
    return dict(row, seed=seed)


def printed(row: dict) -> dict:
    """`row`, printed as one line."""
    head = f"{row['family']:12s} {row['label']:34s}"
    if row["status"] != "ok":
        tp = row.get("toppra_feasible")
        print(f"{head} error {row['exc']}: {row['msg'][:90]} (toppra: "
              f"{'?' if tp is None else 'feasible' if tp else 'infeasible'})", flush=True)
        return row
    sc = f" scale {row['scale_worst']:.1e}" if "scale_worst" in row else ""
    print(f"{head} N={row['N']:5d} {1e3 * row['ours_s']:7.1f} ms x{row['ratio']:6.2f} "
          f"gap {100 * row['gap_conv']:+.4f} % tp5000 {100 * row['gap_tp5']:+.4f} % "
          f"over {100 * row['over']:+.3f} %{sc}", flush=True)
    return row


def _pair(v: np.ndarray, fmt: str, scale: float = 1.0) -> str:
    v = v[np.isfinite(v)] * scale
    return f"{np.median(v):{fmt}} / {v.max():{fmt}}" if v.size else "–"


def table_line(name: str, rows: list) -> str:
    """One line of the table: `rows` of a family (or all)."""
    ok = [x for x in rows if x["status"] == "ok"]
    col = lambda key: np.array([x.get(key, np.nan) for x in ok], float)      # noqa: E731
    t5 = col("gap_tp5")
    sc = col("scale_worst")
    sc = f"{np.nanmax(sc):.1e}" if np.isfinite(sc).any() else "–"
    over = f"{100 * col('over').max():+.3f}" if ok else "–"
    ratio = col("ratio")
    ratio = f"{np.median(ratio):.2f} / {ratio.max():.1f}" if ok else "–"
    return (f"| {name} | {len(rows)} | {_pair(col('gap_conv'), '+.3f', 100)} | {_pair(t5, '+.3f', 100)} "
            f"({int(np.isfinite(t5).sum())}) | {over} | {sc} | {ratio} | {_pair(col('ours_s'), '.0f', 1e3)} | "
            f"{len(rows) - len(ok)} |")


def report(rows: list, families) -> None:
    """The markdown table per family and over all (as the audit's summary)."""
    print("\n| family | n | gap vs conv % med / worst | gap vs toppra5000 % med / worst (n) | over % worst | "
          "scale worst | ours/toppra time med / worst | ours ms med / worst | errors |")
    print("|---|---|---|---|---|---|---|---|---|")
    for family in families:
        sel = [x for x in rows if x["family"] == family]
        if sel:
            print(table_line(family, sel))
    print(table_line("all", rows), flush=True)


def _refuse(msg: str) -> int:
    print(f"study_audit: {msg}", file=sys.stderr)
    return 2


def _write(path: str, rows: list, argv) -> int:
    """The rows to `path`, created here (never over a file that appeared meanwhile); 0, or 2 and one line."""
    text = json.dumps(dict(command=" ".join(["python -m benchmarks.study_audit", *argv]), rows=rows),
                      indent=1, default=float)
    try:
        with open(path, "x") as fh:
            try:
                fh.write(text + "\n")
            except OSError:
                fh.close()
                os.remove(path)
                raise
    except FileExistsError:
        return _refuse(f"{path}: appeared during the run; not overwritten")
    except OSError as exc:
        return _refuse(f"{path}: cannot write ({exc.strerror or exc})")
    print(f"rows written to {path}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--robots", default=",".join(ROBOTS))
    ap.add_argument("--json", default=None, help="write the rows to this new file")
    ap.add_argument("--no-scale", action="store_true", help="skip the spans 1e-3 … 1e3 of s")
    a = ap.parse_args(argv)
    families, robots = a.families.split(","), a.robots.split(",")
    for what, got, known in (("family", families, FAMILIES), ("robot", robots, ROBOTS)):
        bad = [x for x in got if x not in known]
        if bad:
            return _refuse(f"unknown {what} {bad[0]!r} (one of {', '.join(known)})")
    if a.json is not None:
        if os.path.lexists(a.json):
            return _refuse(f"{a.json}: exists; not overwritten")
        if not os.path.isdir(os.path.dirname(os.path.abspath(a.json))):
            return _refuse(f"{a.json}: no such directory")
    rows, t0 = [], time.perf_counter()
    for family in families:
        for name in robots:
            seed = SEED + 100 * FAMILIES.index(family) + ROBOTS.index(name)
            for label, r, W, kw in family_paths(family, name):
                rows.append(printed(run_path(family, label, r, W, kw, seed, scale=not a.no_scale)))
    report(rows, families)
    print(f"\n{len(rows)} paths in {time.perf_counter() - t0:.0f} s")
    return _write(a.json, rows, sys.argv[1:] if argv is None else argv) if a.json is not None else 0


if __name__ == "__main__":
    raise SystemExit(main())
