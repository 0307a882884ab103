"""`toppra-app bench dynamics`: our batched recursive dynamics against Pinocchio, in one run.

Prints ratios (ours / Pinocchio, lower is better) measured on this machine in this process:
1. Christoffel symbols per configuration: ours batched over 1000 configurations (Safeea's recursion,
   `dynamics.christoffel`) vs Pinocchio's `computeRNEADerivatives` with unit velocities (n calls per
   configuration, C[k,i,j] = ½ ∂τ_k/∂v_i at v = e_j).
2. Path coefficients m̃, c̃, d̃ for 1000 path samples: ours (`dynamics.path_coefficients`) vs a loop of
   three `pinocchio.rnea` calls per sample (d̃ = rnea(q, 0, 0), m̃ = rnea(q, 0, q′) − d̃,
   c̃ = rnea(q, q′, q″) − d̃).
3. Growth with n on random serial chains (Safeea Table 2: O(n³) for all symbols).
"""

from __future__ import annotations


import numpy as np

import dynamics
from dynamics.random_model import random_robot

from .timing import best_time
from .peers import pinocchio_christoffel, to_pinocchio


def _pin_christoffel_time(robot, q: np.ndarray) -> float:
    import pinocchio as pin
    model = to_pinocchio(robot)
    model.gravity = pin.Motion.Zero()
    data = model.createData()
    k = [0]

    def one():
        pinocchio_christoffel(model, data, q[k[0] % len(q)])
        k[0] += 1
    return best_time(one, 5, 0.2 / 5)


def _pin_coefficients_time(robot, q, dq, ddq) -> float:
    import pinocchio as pin
    model = to_pinocchio(robot)
    data = model.createData()
    zero = np.zeros(robot.n)

    def loop():
        for k in range(len(q)):
            g = pin.rnea(model, data, q[k], zero, zero)
            pin.rnea(model, data, q[k], zero, dq[k]) - g
            pin.rnea(model, data, q[k], dq[k], ddq[k]) - g
    return best_time(loop, 3, 0.2 / 3)


def run_dynamics_benchmark(out=print, quick: bool = False, robots=("panda", "iiwa7")) -> dict:
    rng = np.random.default_rng(1)
    N = 200 if quick else 1000
    results = {"christoffel": [], "coefficients": [], "scaling": []}
    out(f"## Christoffel symbols per configuration (ours batched over N = {N})\n")
    out("| robot | n | ours batched [µs/config] | ours single [µs] | Pinocchio [µs/config] | ratio batched/Pinocchio |")
    out("|---|---|---|---|---|---|")
    for name in robots:
        robot = dynamics.load_robot(name)
        q = rng.uniform(np.maximum(robot.q_min, -np.pi), np.minimum(robot.q_max, np.pi), (N, robot.n))
        ours = best_time(lambda: dynamics.christoffel(robot, q), 5, 0.2 / 5) / N
        single = best_time(lambda: dynamics.christoffel(robot, q[0]), 5, 0.2 / 5)
        peer = _pin_christoffel_time(robot, q)
        results["christoffel"].append(dict(robot=name, ours=ours, single=single, pinocchio=peer))
        out(f"| {name} | {robot.n} | {ours * 1e6:.1f} | {single * 1e6:.0f} | {peer * 1e6:.1f} | {ours / peer:.2f} |")
    out(f"\n## Path coefficients m̃, c̃, d̃ for {N} samples\n")
    out("| robot | ours, contracted eq. 32 [ms] | ours, full Christoffel [ms] | Pinocchio rnea loop [ms] | ratio contracted/Pinocchio | ratio full/Pinocchio |")
    out("|---|---|---|---|---|---|")
    for name in robots:
        robot = dynamics.load_robot(name)
        q = rng.uniform(np.maximum(robot.q_min, -np.pi), np.minimum(robot.q_max, np.pi), (N, robot.n))
        dq, ddq = rng.normal(size=(2, N, robot.n))
        ours = best_time(lambda: dynamics.path_coefficients(robot, q, dq, ddq), 5, 0.2 / 5)
        full = best_time(lambda: dynamics.path_coefficients(robot, q, dq, ddq, method="full"), 5, 0.2 / 5)
        peer = _pin_coefficients_time(robot, q, dq, ddq)
        results["coefficients"].append(dict(robot=name, ours=ours, full=full, pinocchio=peer))
        out(f"| {name} | {ours * 1e3:.2f} | {full * 1e3:.2f} | {peer * 1e3:.2f} | {ours / peer:.2f} | {full / peer:.2f} |")
    sizes = (3, 5, 7, 10, 15) if quick else (3, 5, 7, 10, 15, 20, 30)
    Ns = 100 if quick else 200
    out(f"\n## Christoffel time against n, random serial chains (ours batched over N = {Ns})\n")
    out("| n | ours [µs/config] | Pinocchio [µs/config] | ratio |")
    out("|---|---|---|---|")
    for n in sizes:
        robot = random_robot(n, seed=n)
        q = rng.normal(size=(Ns, n))
        ours = best_time(lambda: dynamics.christoffel(robot, q), 3, 0.2 / 3) / Ns
        peer = _pin_christoffel_time(robot, q)
        results["scaling"].append(dict(n=n, ours=ours, pinocchio=peer))
        out(f"| {n} | {ours * 1e6:.1f} | {peer * 1e6:.1f} | {ours / peer:.2f} |")
    ns = np.array([r["n"] for r in results["scaling"]], dtype=float)
    big = ns >= 7
    for key in ("ours", "pinocchio"):
        t = np.array([r[key] for r in results["scaling"]])
        slope = np.polyfit(np.log(ns[big]), np.log(t[big]), 1)[0]
        results[f"exponent_{key}"] = slope
    out(f"\nFitted growth for n ≥ 7: ours ~ n^{results['exponent_ours']:.2f}, "
        f"Pinocchio ~ n^{results['exponent_pinocchio']:.2f} (Safeea Table 2: the symbols themselves are O(n³)).")
    return results
