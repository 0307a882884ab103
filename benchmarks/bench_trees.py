"""Complexity of the tree algorithms (`toppra-app bench`): time against the number of bodies N.

1. Coriolis matrix, Echeandia & Wensing Algorithm 1 (`coriolis_matrix_tree`): O(Nd) — ~N² for serial
   chains (d = N), ~N log N for binary trees (d ≈ log₂ N) (the paper's Fig. 2–3).
2. Christoffel symbols, Algorithm 2 (`christoffel_tree`): O(Nd²) — ~N³ for chains, ~N log² N for
   binary trees; Safeea's recursion (`dynamics.christoffel`, dense output) for comparison.
3. Operational-space inertia, Chang & Khatib Table 1 (`operational_space_inertia`) with m = 2
   points on a two-armed tree: O(nm + m³), linear in n; J M⁻¹ Jᵀ (O(n³)) for comparison.

Times are per configuration, measured on a batch of configurations (the algorithms are vectorised
over samples): 64 for the Coriolis matrix and the operational-space inertia, 4–64 for the Christoffel
symbols (fewer for the largest symbol sets, to bound memory). The
Coriolis and Christoffel columns use the sparse outputs (`dense=False`): the work of the algorithms,
without filling the dense n×n (n×n×n) arrays. Exponents are least-squares slopes of log t against
log N over the larger sizes; the "t/(N·d)" columns show the paper's complexity directly.
"""

from __future__ import annotations

import numpy as np

import dynamics
from .timing import best_time
from dynamics.random_model import (binary_tree_parents, binary_tree_robot, random_tree_robot,  # noqa: F401
                                   serial_chain_robot, two_arm_robot)


def _depth(robot) -> int:
    return int(robot.subtree_mask().sum(axis=0).max())


def _slope(x, y, first: int) -> float:
    x, y = np.log(np.asarray(x, float)[first:]), np.log(np.asarray(y, float)[first:])
    return float(np.polyfit(x, y, 1)[0])


def run_tree_benchmark(out=print, quick: bool = False) -> dict:
    from dynamics.christoffel_tree import christoffel_tree, tree_triples
    from dynamics.coriolis_tree import coriolis_matrix_tree
    from dynamics.operational_space_inertia import operational_space_inertia

    rng = np.random.default_rng(0)
    repeat = 2 if quick else 3
    results = {}
    families = {"serial chain": (serial_chain_robot, (4, 8, 16, 32) if quick else (16, 32, 48, 64, 96, 128, 256)),
                "binary tree": (binary_tree_robot, (7, 15, 31, 63) if quick else (7, 15, 31, 63, 127, 255))}
    for family, (build, sizes) in families.items():
        out(f"## {family}: Coriolis matrix (Algorithm 1) and Christoffel symbols (Algorithm 2)\n")
        out("| N | depth d | Coriolis [µs] | t/(N·d) [ns] | Christoffel [µs] (batch) | t/(N·d²) [ns] | Safeea, dense [µs] |")
        out("|---|---|---|---|---|---|---|")
        rows = []
        for n in sizes:
            robot = build(n, seed=n)
            d = _depth(robot)
            triples = len(tree_triples(robot).trip_i)
            batch = int(np.clip(2_000_000 // (6 * triples), 4, 64))
            q, qd = rng.uniform(-np.pi, np.pi, (2, 64, n))
            tc = best_time(lambda: coriolis_matrix_tree(robot, q, qd, dense=False), repeat) / 64
            tg, ts = np.nan, np.nan
            if triples <= 200_000:
                tg = best_time(lambda: christoffel_tree(robot, q[:batch], dense=False), repeat) / batch
            if n <= 127:
                ts = best_time(lambda: dynamics.christoffel(robot, q[:8]), repeat) / 8
            rows.append(dict(N=n, d=d, coriolis=tc, christoffel=tg, safeea=ts))
            out(f"| {n} | {d} | {tc * 1e6:.1f} | {tc / (n * d) * 1e9:.0f} | {tg * 1e6:.1f} ({batch}) | "
                f"{tg / (n * d * d) * 1e9:.1f} | {ts * 1e6:.0f} |")
        Ns = [r["N"] for r in rows]
        ec = _slope(Ns, [r["coriolis"] for r in rows], len(rows) - 4)
        good = [r for r in rows if np.isfinite(r["christoffel"])]
        eg = _slope([r["N"] for r in good], [r["christoffel"] for r in good], len(good) - 4)
        theory = "N², N³" if family == "serial chain" else "N log N, N log² N (between N¹ and N²)"
        out(f"\nFitted growth over the last four sizes: Coriolis ~ N^{ec:.2f} (N ≥ {Ns[-4]}), Christoffel "
            f"~ N^{eg:.2f} (N ≥ {good[-4]['N']}) (theory: {theory}).\n")
        results[family] = dict(rows=rows, exponent_coriolis=ec, exponent_christoffel=eg)
    sizes = (18, 36, 72, 144) if quick else (18, 36, 72, 144, 288, 576)
    out("## Operational-space inertia, m = 2 points on a two-armed tree (Chang & Khatib Table 1)\n")
    out("| n | batch | Table 1 [µs] | J M⁻¹ Jᵀ, inverted [µs] |")
    out("|---|---|---|---|")
    rows = []
    for n in sizes:
        robot = two_arm_robot(n, seed=n)
        batch = 64
        q = rng.uniform(-np.pi, np.pi, (batch, n))
        to = best_time(lambda: operational_space_inertia(robot, q, ["left", "right"]), repeat) / batch

        def direct():
            J = np.concatenate([dynamics.frame_jacobian(robot, q, f) for f in ("left", "right")], axis=1)
            Minv_JT = np.linalg.solve(dynamics.mass_matrix(robot, q), np.swapaxes(J, 1, 2))
            return np.linalg.inv(J @ Minv_JT)
        tdir = best_time(direct, repeat) / batch if n <= 288 else np.nan      # O(n³): skip the largest
        rows.append(dict(n=n, osi=to, direct=tdir))
        out(f"| {n} | {batch} | {to * 1e6:.1f} | {tdir * 1e6:.1f} |")
    eo = _slope(sizes, [r["osi"] for r in rows], len(rows) - 4)
    good = [r for r in rows if np.isfinite(r["direct"])]
    ed = _slope([r["n"] for r in good], [r["direct"] for r in good], len(good) - 3)
    out(f"\nFitted growth: Table 1 ~ n^{eo:.2f} (n ≥ {sizes[-4]}; theory: O(nm + m³), linear in n); "
        f"J M⁻¹ Jᵀ ~ n^{ed:.2f} (n ≥ {good[-3]['n']}).")
    results["osi"] = dict(rows=rows, exponent=eo, exponent_direct=ed)
    return results
