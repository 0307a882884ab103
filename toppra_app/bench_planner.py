"""`toppra-app bench planner`: our convex planner against toppra (TOPP-RA), in one run.

For a few paths on the Panda and the iiwa 7 (torque + velocity (+ acceleration) limits, Coulomb friction):

* ours: `plan_time_optimal` with the default grid — time for the coefficients m̃, c̃, d̃ + solve (+ the
  one-off cvxpy compilation, shown apart) and a re-plan with another payload (no compilation);
* toppra 0.6: `SplineInterpolator` on the same waypoints, `JointVelocityConstraint`,
  `JointAccelerationConstraint`, `JointTorqueConstraint` with an inverse-dynamics callback from
  `dynamics.inverse_dynamics` (Coulomb friction as `fs_coef`), `TOPPRA` with the interpolation scheme and
  `parametrizer="ParametrizeConstAccel"`, on N = 1000 grid points and on a converged grid (N = 5000);
* for both: the duration and the worst |τ|/τ_max (and velocity, acceleration) of the trajectory
  resampled at 1 ms, torques by our recursive Newton–Euler + friction.

Durations are compared with toppra's converged one (the continuous optimum to ~0.01 %).
"""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np

import dynamics

from .path import JointPath
from .planner import TimeOptimalPlanner
from .verify import check_samples
from .trajectory import TrajectorySample, sample_times


# ---------------------------------------------------------------------------------- robots and paths
BENCH_PATHS = {
    "panda": {
        "pick-place": [[0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.7], [0.8, 0.2, -0.3, -1.5, 0.5, 1.9, 0.2],
                       [1.5, 0.5, 0.2, -1.0, -0.4, 2.3, -0.5], [0.9, 0.0, 0.5, -2.2, 0.3, 1.2, 0.4]],
        "long-swing": [[-2.0, -0.3, 0.4, -2.4, -0.6, 2.0, 0.0], [-0.5, 0.6, 0.1, -1.2, 0.2, 1.2, 1.0],
                       [1.2, 0.9, -0.4, -0.8, 0.8, 2.8, -1.2], [2.2, 0.1, 0.6, -1.9, -0.2, 1.5, 0.5]],
        "straight": [[-1.2, 0.7, 0.0, -1.0, 0.0, 2.0, 0.0], [1.2, 0.7, 0.0, -1.0, 0.0, 2.0, 0.0]],
    },
    "iiwa7": {
        "pick-place": [[0.0, 0.4, 0.0, -1.2, 0.0, 1.0, 0.0], [1.0, 0.9, 0.3, -0.9, 0.2, 0.8, 0.5],
                       [1.8, 0.6, -0.2, -1.5, -0.3, 1.1, -0.4], [2.4, 1.0, 0.1, -0.8, 0.1, 0.5, 0.2]],
        "long-swing": [[-2.2, 0.2, 0.5, -1.6, 0.5, 1.2, 0.0], [-0.8, 1.2, -0.6, -0.6, -0.8, -0.5, 1.5],
                       [0.9, 1.4, 0.3, -0.4, 0.6, 1.6, -1.0], [2.3, 0.5, -0.4, -1.8, -0.3, 0.4, 0.8]],
        "straight": [[-1.5, 1.2, 0.0, -0.5, 0.0, 0.5, 0.0], [1.5, 1.2, 0.0, -0.5, 0.0, 0.5, 0.0]],
    },
}


# ---------------------------------------------------------------------------------- toppra
def pinocchio_inverse_dynamics(robot):
    """An inverse-dynamics callback (q, q̇, q̈) -> τ by Pinocchio's RNEA on `toppra_app.peers.to_pinocchio`."""
    import pinocchio as pin

    from .peers import to_pinocchio
    model = to_pinocchio(robot)
    data = model.createData()

    def inv_dyn(q, qd, qdd):
        return np.array(pin.rnea(model, data, np.asarray(q, float), np.asarray(qd, float), np.asarray(qdd, float)))
    return inv_dyn


def toppra_plan(robot, waypoints, N: int, *, s=None, sd_start: float = 0.0, sd_end: float = 0.0,
                scheme: str = "interpolation", dt: float | None = 1e-3, inv_dyn=None) -> dict:
    """Plan with toppra on N + 1 uniform grid points; returns duration, seconds (constraint setup + solve)
    and, with `dt`, the 1 ms resampling (a `TrajectorySample`, torques by our RNEA + friction).

    `inv_dyn` is toppra's inverse-dynamics callback (default: `dynamics.inverse_dynamics` of `robot`;
    `pinocchio_inverse_dynamics(robot)` is ~50× faster per call)."""
    import toppra as ta
    import toppra.algorithm as algo
    import toppra.constraint as constraint
    logging.getLogger("toppra").setLevel(logging.ERROR)
    W = np.asarray(waypoints, dtype=float)
    ss = np.linspace(0.0, 1.0, W.shape[0]) if s is None else np.asarray(s, dtype=float)
    kind = (constraint.DiscretizationType.Interpolation if scheme == "interpolation"
            else constraint.DiscretizationType.Collocation)
    big = 1e6
    t0 = time.perf_counter()
    path = ta.SplineInterpolator(ss, W)
    vmax = np.where(np.isfinite(robot.qd_max), robot.qd_max, big)
    cons = [constraint.JointVelocityConstraint(np.stack([-vmax, vmax], axis=1))]
    if np.isfinite(robot.qdd_max).any():
        amax = np.where(np.isfinite(robot.qdd_max), robot.qdd_max, big)
        cons.append(constraint.JointAccelerationConstraint(np.stack([-amax, amax], axis=1), discretization_scheme=kind))
    if np.isfinite(robot.tau_max).any():
        tmax = np.where(np.isfinite(robot.tau_max), robot.tau_max, big)

        if inv_dyn is None:
            def inv_dyn(q, qd, qdd):
                return dynamics.inverse_dynamics(robot, q, qd, qdd)
        cons.append(constraint.JointTorqueConstraint(inv_dyn, np.stack([-tmax, tmax], axis=1),
                                                     np.asarray(robot.coulomb), discretization_scheme=kind))
    grid = np.linspace(ss[0], ss[-1], N + 1)
    instance = algo.TOPPRA(cons, path, gridpoints=grid, parametrizer="ParametrizeConstAccel")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traj = instance.compute_trajectory(sd_start, sd_end)
    seconds = time.perf_counter() - t0
    if traj is None:
        return dict(duration=float("nan"), seconds=seconds, sample=None, feasible=False)
    out = dict(duration=float(traj.duration), seconds=seconds, feasible=True, sample=None)
    if dt:
        t = sample_times(traj.duration, dt)
        q, qd, qdd = traj(t), traj(t, 1), traj(t, 2)
        tau = dynamics.inverse_dynamics(robot, q, qd, qdd) + dynamics.friction_torques(robot, qd)
        nan = np.full(t.shape, np.nan)
        out["sample"] = TrajectorySample(t, q, qd, qdd, tau, nan, nan, nan)
    return out


def worst_ratios(robot, sample) -> dict:
    """{kind: worst |value|/limit} of a sampled trajectory."""
    return {k: w.ratio for k, w in check_samples(robot, sample).items()}


# ---------------------------------------------------------------------------------- benchmark
def _median_run(fn, repeats: int):
    """Run fn() `repeats` times; return (median seconds, the result of the median run)."""
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        runs.append((time.perf_counter() - t0, out))
    runs.sort(key=lambda r: r[0])
    return runs[len(runs) // 2]


def replan_sequence(out=print, robot_name: str = "iiwa7", path_name: str = "long-swing") -> dict:
    """Re-plans with a sequence of payloads on one planner, with and without row pruning: ms per plan
    and whether it compiled (alternating empty/loaded as in palletizing, then ever heavier point masses)."""
    from dynamics.payload import RigidBodyInertia
    robot = dynamics.load_robot(robot_name)
    path = JointPath.from_waypoints(BENCH_PATHS[robot_name][path_name])
    box = RigidBodyInertia.box(5.0, (0.3, 0.2, 0.2), com_offset=(0.0, 0.0, 0.1))
    seq = [("5 kg box", box), ("none", None), ("box", box), ("none", None)] + \
          [(f"{m:g} kg", m) for m in (1.0, 2.0, 3.0, 4.5, 6.0, 7.0, 0.5, 3.0)]
    out(f"\nRe-planning one {robot_name} \"{path_name}\" planner with a sequence of payloads (point masses at the "
        "flange unless a box); ms per plan, C = it compiled:\n")
    out("| prune | first plan | " + " | ".join(label for label, _ in seq) + " |")
    out("|---" * (len(seq) + 2) + "|")
    rows = {}
    for prune in (True, False):
        planner = TimeOptimalPlanner(robot, path, prune=prune)
        t0 = time.perf_counter()
        planner.plan()
        cells = [f"{1e3 * (time.perf_counter() - t0):.0f}"]
        for _, payload in seq:
            t0 = time.perf_counter()
            plan = planner.plan(payload=payload)
            cells.append(f"{1e3 * (time.perf_counter() - t0):.0f}" + (" C" if plan.timings["compile"] > 0 else ""))
        rows[prune] = cells
        out(f"| {prune} | " + " | ".join(cells) + " |")
    return rows


def run_planner_benchmark(out=print, quick: bool = False, robots=("panda", "iiwa7"), repeats: int = 5) -> dict:
    """Compare ours with toppra (N = 1000 and converged) on the paths of `BENCH_PATHS`; print tables.

    Every time is the median of `repeats` runs from scratch (a new planner, hence a new cvxpy compilation,
    for ours), after one untimed warm-up run of each planner (imports, first-call caches)."""
    N_conv = 2000 if quick else 5000
    repeats = 3 if quick else repeats
    try:
        import pinocchio  # noqa: F401  (only for a fast callback: the converged toppra reference)
        fast_callback = pinocchio_inverse_dynamics
    except ImportError:                                   # pragma: no cover - depends on the environment
        fast_callback = None
    results = []
    out("## Time-optimal planning: ours (cvxpy + Clarabel) vs toppra 0.6 (TOPP-RA, interpolation scheme)\n")
    out(f"Durations T relative to toppra on a converged grid (N = {N_conv}). Times are medians of {repeats} runs "
        "from scratch after a warm-up. Ours = the whole first `TimeOptimalPlanner(robot, path).plan()`: path "
        "coefficients, coarse + final problem build, cvxpy compilation and Clarabel solves, and the between-grid "
        "check (shown apart; toppra has none); re-plan = the first plan with another payload (half the rated "
        "payload as a point mass) on the same planner, marked when it had to compile. toppra = path, "
        "constraint setup (inverse-dynamics callback per grid point) and solve, with Pinocchio's `rnea` and with "
        "our per-sample `dynamics.inverse_dynamics` as callback. Worst τ = max |τ|/τ_max on 1 ms resampling "
        "(our RNEA + friction).\n")
    out("| robot | path | ours T [s] | vs conv. | toppra-1000 T [s] | vs conv. | ours first plan [s] | of which check [s] "
        "| ours re-plan [s] | toppra-1000, Pinocchio callback [s] | toppra-1000, our RNEA callback [s] "
        "| ours / toppra (Pinocchio) | ours without check / toppra (Pinocchio) | ours / toppra (our RNEA) "
        "| ours worst τ | toppra-1000 worst τ |")
    out("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    warm = BENCH_PATHS[robots[0]]
    warm_robot = dynamics.load_robot(robots[0])
    TimeOptimalPlanner(warm_robot, JointPath.from_waypoints(next(iter(warm.values())))).plan()
    toppra_plan(warm_robot, next(iter(warm.values())), 1000, dt=None,
                inv_dyn=fast_callback(warm_robot) if fast_callback else None)
    for name in robots:
        robot = dynamics.load_robot(name)
        paths = BENCH_PATHS[name]
        if quick:
            paths = dict(list(paths.items())[:2])
        for pname, W in paths.items():
            path = JointPath.from_waypoints(W)

            def first_plan():
                planner = TimeOptimalPlanner(robot, path)
                return planner, planner.plan()
            wall, (planner, plan) = _median_run(first_plan, repeats)
            tm = plan.timings
            mass = 0.5 * (robot.rated_payload or 1.0)
            replan_wall, replan = _median_run(lambda: planner.plan(payload=mass), 1)
            ours_ratio = worst_ratios(plan.robot, plan.sample(1e-3))
            tp = toppra_plan(robot, W, 1000)
            tp_fast = (_median_run(lambda: toppra_plan(robot, W, 1000, dt=None, inv_dyn=fast_callback(robot)),
                                   repeats)[1] if fast_callback else None)
            tc = toppra_plan(robot, W, N_conv, dt=None, inv_dyn=fast_callback(robot) if fast_callback else None)
            tp_ratio = worst_ratios(robot, tp["sample"]) if tp["sample"] is not None else {"torque": float("nan")}
            fast_s = tp_fast["seconds"] if tp_fast else float("nan")
            row = dict(robot=name, path=pname, ours=plan.duration, toppra_1000=tp["duration"],
                       toppra_conv=tc["duration"], ours_wall=wall, ours_check=tm["verify"],
                       ours_compile=tm["compile"], replan_wall=replan_wall, replan_compile=replan.timings["compile"],
                       replan_duration=replan.duration, toppra_seconds=tp["seconds"],
                       toppra_pinocchio_seconds=fast_s, ours_worst=ours_ratio, toppra_worst=tp_ratio,
                       timings=dict(tm))
            row["ratio_pinocchio"] = wall / fast_s
            row["ratio_pinocchio_no_check"] = (wall - tm["verify"]) / fast_s
            row["ratio_our_rnea"] = wall / tp["seconds"]
            results.append(row)
            rel = lambda x: 100.0 * (x / tc["duration"] - 1.0)
            out(f"| {name} | {pname} | {plan.duration:.4f} | {rel(plan.duration):+.3f} % | {tp['duration']:.4f} | "
                f"{rel(tp['duration']):+.3f} % | {wall:.3f} | {tm['verify']:.3f} | {replan_wall:.3f}"
                f"{' (compiled)' if replan.timings['compile'] > 0 else ''} | "
                f"{fast_s:.3f} | {tp['seconds']:.3f} | {row['ratio_pinocchio']:.2f}× | "
                f"{row['ratio_pinocchio_no_check']:.2f}× | {row['ratio_our_rnea']:.3f}× | "
                f"{ours_ratio['torque']:.4f} | {tp_ratio['torque']:.4f} |")
    out("\nBreakdown of our first plans [ms] (coefficients = m̃ c̃ d̃ and payload derivatives at both grids; build = "
        "rows, pruning and cvxpy problem; check = between-grid check):\n")
    out("| robot | path | coefficients | build | compile | solve | check | total |")
    out("|---|---|---|---|---|---|---|---|")
    for r in results:
        t = r["timings"]
        out(f"| {r['robot']} | {r['path']} | {1e3 * t['coefficients']:.1f} | {1e3 * t['build']:.1f} | "
            f"{1e3 * t['compile']:.1f} | {1e3 * t['solve']:.1f} | {1e3 * t['verify']:.1f} | {1e3 * t['total']:.1f} |")
    results_replan = replan_sequence(out)
    worst_ours = max(max(r["ours_worst"].values()) for r in results)
    worst_tp = max(r["toppra_worst"]["torque"] for r in results)
    out(f"\nWorst over-limit on 1 ms resampling (any kind for ours, torque for toppra-1000): ours "
        f"{100 * (worst_ours - 1):+.3f} %, toppra {100 * (worst_tp - 1):+.3f} %.")
    # toppra's collocation scheme (its default) for contrast: the between-grid torque excess it leaves
    coll = []
    for r in results:
        robot = dynamics.load_robot(r["robot"])
        res = toppra_plan(robot, BENCH_PATHS[r["robot"]][r["path"]], 1000, scheme="collocation",
                          inv_dyn=fast_callback(robot) if fast_callback else None)
        r["toppra_collocation_worst"] = worst_ratios(robot, res["sample"])["torque"] if res["sample"] else float("nan")
        coll.append(f"{r['robot']}/{r['path']} {r['toppra_collocation_worst']:.4f}")
    out("\ntoppra with its default collocation scheme (N = 1000), worst |τ|/τ_max on 1 ms resampling: "
        + ", ".join(coll))
    return {"rows": results, "replans": results_replan}
