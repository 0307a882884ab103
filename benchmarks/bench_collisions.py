"""`toppra-app bench collisions`: the cost of checking the palletizing moves for collisions (coal),
certified stepping against checking every 1 ms sample against every obstacle, on the built-in cell."""

from __future__ import annotations

import time

import numpy as np


def _every_sample(cell, move, sample) -> float:
    import coal
    from dynamics.forward_kinematics import forward_kinematics
    from scenarios.palletizing import collisions as cl
    segs, tcp = cl._segments(cell, forward_kinematics(cell.robot, sample.q))
    obs = cl.obstacles(cell, move.box, move.kind)
    req, res = coal.DistanceRequest(), coal.DistanceResult()
    best = np.inf
    objs = []
    for name, kind, a, b, r in segs:
        L = float(np.linalg.norm(b[0] - a[0]))
        R, c = cl._poses_along(a, b)
        objs.append((coal.CollisionObject(coal.Capsule(r, L) if kind == "capsule" else coal.Cylinder(r, L),
                                          coal.Transform3s()), R, c))
    if move.kind == "loaded":
        size = move.slot.box.size
        objs.append((coal.CollisionObject(coal.Box(*size), coal.Transform3s()), tcp[:, :3, :3],
                     tcp[:, :3, 3] + 0.5 * size[2] * tcp[:, :3, 2]))
    for o, R, c in objs:
        for k in range(len(sample.t)):
            o.setTransform(coal.Transform3s(np.ascontiguousarray(R[k]), c[k]))
            for _, oo, *_ in obs:
                res.clear()
                best = min(best, coal.distance(o, oo, req, res))
    return best


def run_collision_benchmark(out=print, quick: bool = False) -> dict:
    from scenarios.palletizing import load_cell, plan_pallet
    from scenarios.palletizing.collisions import check_move
    cell = load_cell()
    report = plan_pallet(cell, quick=quick)
    rows = []
    for m in report.moves:
        smp = m.plan.sample(1e-3)
        t0 = time.perf_counter()
        c = check_move(cell, m, smp)
        ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        _every_sample(cell, m, smp)
        naive = time.perf_counter() - t0
        rows.append(dict(move=m.label, samples=len(smp.t), checks=c.checks, ours=ours, naive=naive,
                         distance=c.distance, bodies=c.bodies))
    out(f"## Collision checks (`toppra-app bench collisions`, built-in cell, {len(rows)} moves)\n")
    out("| move | 1 ms samples | checks | ours ms | every sample ms | ratio | closest mm | bodies |")
    out("|---|---|---|---|---|---|---|---|")
    for r in rows:
        out(f"| {r['move']} | {r['samples']} | {r['checks']} | {1e3 * r['ours']:.1f} | {1e3 * r['naive']:.0f} | "
            f"{r['ours'] / r['naive']:.3f} | {1e3 * r['distance']:.1f} | {r['bodies'][0]} – {r['bodies'][1]} |")
    ours = np.array([r["ours"] for r in rows])
    ratio = np.array([r["ours"] / r["naive"] for r in rows])
    out(f"\nper move: median {1e3 * np.median(ours):.1f} ms, worst {1e3 * ours.max():.1f} ms; "
        f"against every sample: median {np.median(ratio):.3f}×, worst {ratio.max():.3f}×")
    return dict(rows=rows)
