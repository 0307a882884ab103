"""Independent check of the thermal (RMS torque) cycle limit (`toppra_app.objectives.thermal`).

Per cycle (the built-in palletizing cell's box 1 and random closed cycles of 2–4 rest-to-rest moves on
iiwa7, ur5e and the example-robot-data Panda / UR10 URDFs of `cases.robot`):

* the returned plans' cycle RMS recomputed on 0.1 ms samples with **Pinocchio's RNEA** (`peers.to_pinocchio`
  of the *unloaded* robot, the payload added in Pinocchio at the tool frame) + F_v q̇ + F_c sign(q̇), trapezoidal,
  plus the idle hold g(q_end)² T_idle (`pinocchio.computeGeneralizedGravity`); move durations recomputed from
  the grid speeds, Σ 2Δθ/(√b_j + √b_{j+1}); compared with the reported `rms`, `cycle_time`, `motion_time`,
  `idle_time`, `thermally_limited`;
* optimality: the same convex model (the instance the planner built, its final ρ) linearised at the returned
  plans and solved once more (a fixed point: no lower T), the cycle on a grid twice as fine, and a
  brute-force feasible cycle: every
  time-optimal move slowed uniformly by its own factor λ_m ≥ 1 (τ = A/λ² + g + F_v q̇/λ + F_c sign q̇ on the
  0.1 ms samples, coordinate descent over λ on a grid of 600 values in [1, 4]) with the idle time chosen
  exactly — the returned T must not be above it.

    python -m benchmarks.study_thermal [--quick] [--json FILE]

Prints one line per cycle and a markdown table (docs/planner_limits.md, "Thermal").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

from .cases import _span, holdable, robot as suite_robot
from .peers import to_pinocchio

DT = 2e-5                # the RMS check (trapezoid: ~4e-5 of the RMS off at this step)
DT_BRUTE = 2e-4
LAMBDAS = np.geomspace(1.0, 4.0, 600)


# ---------------------------------------------------------------------------------------------- Pinocchio
def pin_model(robot, payload):
    """Pinocchio model of the unloaded `robot` with `payload` (a mass or a dict) added at the tool frame."""
    import pinocchio as pin
    from dynamics.payload import as_payload
    model = to_pinocchio(robot)
    if payload is not None:
        p = as_payload(payload)
        body, T = robot.frame(None)
        fid = model.getFrameId(robot.link_names[body])
        jid = model.frames[fid].parentJoint
        local = model.frames[fid].placement * pin.SE3(T[:3, :3], T[:3, 3])
        model.inertias[jid] = model.inertias[jid] + local.act(pin.Inertia(float(p.mass), np.asarray(p.com, float),
                                                                            np.asarray(p.inertia, float)))
    return model


def split_torques(model, robot, q, qd, qdd):
    """(g, A, friction): τ = A + g + friction, A = RNEA(q, q̇, q̈) − g, per sample."""
    import pinocchio as pin
    data = model.createData()
    g = np.array([pin.computeGeneralizedGravity(model, data, x).copy() for x in q])
    full = np.array([pin.rnea(model, data, a, b, c).copy() for a, b, c in zip(q, qd, qdd)])
    return g, full - g


def friction(robot, qd, lam=1.0):
    return np.asarray(robot.viscous) * qd / lam + np.asarray(robot.coulomb) * np.sign(qd)


def samples(plan, dt=DT):
    """t, q, q̇, q̈ of a plan every dt (and the end), from its time law."""
    D = plan.duration
    t = np.append(np.arange(0.0, D, dt), D)
    if t.size > 2 and t[-1] - t[-2] < 1e-12:
        t = t[:-1]
    return t, plan.eval(t), plan.evald(t), plan.evaldd(t)


def trap(y, t):
    return np.sum(0.5 * (y[1:] + y[:-1]) * np.diff(t)[:, None], axis=0)


def grid_duration(plan) -> float:
    th, b = np.asarray(plan.law.theta), np.maximum(np.asarray(plan.law.b), 0.0)
    return float(np.sum(2.0 * np.diff(th) / (np.sqrt(b[1:]) + np.sqrt(b[:-1]))))


def move_data(robot, plan, payload, dt=DT):
    import pinocchio as pin
    model = pin_model(robot, payload)
    t, q, qd, qdd = samples(plan, dt)
    g, A = split_torques(model, robot, q, qd, qdd)
    g_end = pin.computeGeneralizedGravity(model, model.createData(), plan.path.q(np.array([plan.path.s_end]))[0])
    return dict(t=t, q=q, qd=qd, qdd=qdd, g=g, A=A, g_end=np.array(g_end), robot=robot)


def independent_rms(robot, plans, payloads, idle):
    """(rms per joint, cycle time, motion time, per-move grid durations, the moves' worst value/limit of
    torque (Pinocchio + friction), velocity and acceleration on the samples)."""
    E, motion, durs, limit = 0.0, 0.0, [], 0.0
    for p, pay in zip(plans, payloads):
        d = move_data(robot, p, pay)
        tau = d["A"] + d["g"] + friction(robot, d["qd"])
        for x, cap in ((tau, robot.tau_max), (d["qd"], robot.qd_max), (d["qdd"], robot.qdd_max)):
            limit = max(limit, float(np.max(np.abs(x) / cap)))
        E = E + trap(tau * tau, d["t"])
        motion += float(d["t"][-1])
        durs.append(grid_duration(p))
    g_end = d["g_end"]
    T = motion + idle
    return np.sqrt((E + idle * g_end ** 2) / T), T, motion, durs, g_end, limit


# ---------------------------------------------------------------------------------------------- brute force
def brute_force(robot, opt_plans, payloads, tau_rms):
    """Smallest cycle time over per-move uniform slow-downs λ_m of the time-optimal moves + exact idle."""
    data = [move_data(robot, p, pay, DT_BRUTE) for p, pay in zip(opt_plans, payloads)]
    g_end = data[-1]["g_end"]
    lam = LAMBDAS
    Es, Ds, worst = [], [], []
    tau_max = np.asarray(robot.tau_max, float)
    for d in data:
        e, w = [], []
        for l in lam:
            tau = d["A"] / l ** 2 + d["g"] + friction(robot, d["qd"], l)
            e.append(l * trap(tau * tau, d["t"]))
            w.append(float(np.max(np.abs(tau) / tau_max)))
        Es.append(np.array(e))                        # (L, n): ∫ τ² dt of the move slowed by λ
        Ds.append(lam * d["t"][-1])
        worst.append(np.array(w))

    def cycle(idx):
        E = sum(Es[m][i] for m, i in enumerate(idx))
        D = sum(Ds[m][i] for m, i in enumerate(idx))
        need = (E - g_end ** 2 * D) / (tau_rms ** 2 - g_end ** 2)
        return max(D, float(np.max(need)))

    best_i = min(range(lam.size), key=lambda i: cycle([i] * len(data)))
    idx = [best_i] * len(data)
    best = cycle(idx)
    for _ in range(20):
        improved = False
        for m in range(len(data)):
            for i in range(lam.size):
                trial = idx.copy()
                trial[m] = i
                c = cycle(trial)
                if c < best * (1 - 1e-12):
                    best, idx, improved = c, trial, True
        if not improved:
            break
    over = max(float(worst[m][i]) for m, i in enumerate(idx))
    return best, [float(lam[i]) for i in idx], over


# ---------------------------------------------------------------------------------------------- cycles
def random_cycle(name, seed, moves):
    """Closed cycle through `moves` random postures (0.3–0.7 of the ranges), one extra waypoint per move."""
    from toppra_app import JointPath
    r = suite_robot(name)
    rng = np.random.default_rng(seed)
    lo, hi = _span(r, 0.3, 0.7)
    for _ in range(200):
        P = [lo + (hi - lo) * rng.random(r.n) for _ in range(moves)]
        W = [np.array([P[i], 0.5 * (P[i] + P[(i + 1) % moves]) + 0.15 * (hi - lo) * (rng.random(r.n) - 0.5),
                       P[(i + 1) % moves]]) for i in range(moves)]
        if all(holdable(r, w) for w in W):
            return r, [JointPath.from_waypoints(w) for w in W]
    raise RuntimeError(f"no holdable cycle for {name}")


def rating_for(r, paths, payloads, factor, grid):
    """factor × the time-optimal cycle's RMS, but ≥ 1.25 |g_end| + 1 % of τ_max (idle can help)."""
    from toppra_app.objectives.thermal import plan_cycle_with_rms_limit
    free = plan_cycle_with_rms_limit(r, paths, 1e9, payloads=payloads, grid=grid)
    last = free.time_optimal_plans[-1]
    import dynamics
    g = np.abs(dynamics.gravity_torques(last.robot, last.path.q(np.array([last.path.s_end]))[0]))
    return np.maximum(factor * free.unconstrained_rms, 1.25 * g + 0.01 * np.asarray(r.tau_max)), free


def cases(quick: bool):
    from scenarios.palletizing import load_cell
    from scenarios.palletizing.plan import plan_pallet
    out = []
    cell = load_cell()
    rep = plan_pallet(cell, boxes=[0], check_collisions=False, nominal=False)
    ms = [m for m in rep.moves if m.box == 0]
    out.append(dict(name="pallet box 1, 0.3 τ_max", robot=cell.robot, paths=[m.path for m in ms],
                    payloads=[m.payload for m in ms], tau=0.3 * np.asarray(cell.robot.tau_max),
                    opts=dict(grid=cell.grid, gap_target=cell.gap_target), finer=False))
    specs = [("iiwa7", 11, 2, None, 0.85), ("ur5e", 12, 3, 2.0, 0.85), ("panda-urdf", 13, 2, None, 0.8),
             ("ur10-urdf", 14, 4, 5.0, 0.85), ("ur5e", 16, 2, None, 1.05)]
    if quick:
        specs = specs[:2]
    for name, seed, k, mass, factor in specs:
        r, paths = random_cycle(name, seed, k)
        payloads = [mass] + [None] * (k - 1) if mass else None
        tau, _ = rating_for(r, paths, payloads, factor, 100)
        out.append(dict(name=f"{name} {k} moves{f' ({mass} kg on move 1)' if mass else ''}, {factor} × RMS₀",
                        robot=r, paths=paths, payloads=payloads, tau=tau, opts=dict(grid=100)))
    return out


def capture_problem():
    """Make `thermal._CycleProblem` remember its last instance (for the T(1 − 1e-3) check)."""
    from toppra_app.objectives import thermal
    holder = {}
    base = thermal.CycleProblem if not hasattr(thermal.CycleProblem, "_captured") else thermal.CycleProblem.__base__

    class Captured(base):
        _captured = True

        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            holder["cyc"] = self
    thermal.CycleProblem = Captured
    return holder


def run(case) -> dict:
    from toppra_app.objectives.thermal import plan_cycle_with_rms_limit
    holder = capture_problem()
    holder.clear()
    r, paths, payloads, tau = case["robot"], case["paths"], case["payloads"], case["tau"]
    t0 = time.perf_counter()
    res = plan_cycle_with_rms_limit(r, paths, tau, payloads=payloads, **case["opts"])
    wall = time.perf_counter() - t0
    pays = payloads or [None] * len(paths)
    rms, T, motion, durs, _, limit = independent_rms(r, res.plans, pays, res.idle_time)
    ratio = rms / tau
    row = dict(case=case["name"], T0=res.unconstrained_cycle_time, T=res.cycle_time, motion=res.motion_time,
               idle=res.idle_time, worst_ratio=float(ratio.max()), solves=len(res.solves), wall=wall,
               rms_rel_diff=float(np.max(np.abs(rms / res.rms - 1))), T_diff=abs(T - res.cycle_time),
               motion_diff=abs(motion - res.motion_time),
               dur_diff=float(max(abs(d - p.duration) for d, p in zip(durs, res.plans))),
               limited=res.thermally_limited,
               limited_indep=[r.joint_names[k] for k in np.flatnonzero(rms >= 0.995 * tau)],
               retightened=res.retightened, limit=limit)
    s = res.summary()
    row["summary_consistent"] = bool(np.allclose(s["rms_ratio"], res.rms / tau, rtol=1e-12)
                                     and s["cycle_time_s"] == res.cycle_time
                                     and abs(s["motion_time_s"] + s["idle_time_s"] - s["cycle_time_s"]) <= 1e-12 * T)
    free = (res.unconstrained_rms <= tau).all()
    row["time_optimal_fits"] = bool(free)
    if free:
        row.update(T_equals_T0=res.cycle_time == res.unconstrained_cycle_time, refit=None, finer=None, brute=None,
                   gap=0.0)
        return row
    cyc = holder["cyc"]
    cyc.linearise([p.law.b for p in res.plans])
    Tn, _ = cyc.solve((res.rating_used / tau) ** 2, "CLARABEL")
    fine = None
    if case.get("finer", True):
        opts = dict(case["opts"], grid=2 * case["opts"]["grid"])
        fine = plan_cycle_with_rms_limit(r, paths, tau, payloads=payloads, **opts).cycle_time
    Tb, lams, over = brute_force(r, res.time_optimal_plans, pays, tau)
    row.update(refit=Tn * cyc.T0 / res.cycle_time - 1.0, finer=None if fine is None else fine / res.cycle_time - 1.0,
               brute=Tb, brute_lambda=lams, brute_over=over, gap=res.cycle_time / Tb - 1.0)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    if a.json and os.path.exists(a.json):
        sys.exit(f"--json: {a.json} exists; not overwritten")
    warnings.simplefilter("ignore", RuntimeWarning)
    rows = []
    for case in cases(a.quick):
        row = run(case)
        rows.append(row)
        print({k: (round(v, 6) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
    print("\n| cycle | T₀ (s) | T (s) | motion / idle (s) | worst RMS/rating (Pinocchio) | reported RMS vs Pinocchio "
          "| moves' worst value/limit (Pinocchio) | re-solve at the answer | grid × 2 | brute force T (s) | T / brute − 1 "
          "| solves | wall (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    pct = (lambda v: "—" if v is None else f"{100 * v:+.3f} %")
    for w in rows:
        bf = "—" if w["brute"] is None else f"{w['brute']:.4f}"
        print(f"| {w['case']} | {w['T0']:.4f} | {w['T']:.4f} | {w['motion']:.3f} / {w['idle']:.3f} | "
              f"{w['worst_ratio']:.5f} | {w['rms_rel_diff']:.1e} | {w['limit']:.5f} | {pct(w['refit'])} | {pct(w['finer'])} | {bf} | "
              f"{pct(w['gap'] if w['brute'] is not None else None)} | {w['solves']} | {w['wall']:.1f} |")
    if a.json:
        with open(a.json, "x") as f:
            json.dump(rows, f, indent=1, default=str)


if __name__ == "__main__":
    main()
