"""Every URDF of example-robot-data against Pinocchio: the dynamics layer on robots the tests do not choose.

Each description is loaded by `dynamics.from_urdf` (mimic joints independent, as Pinocchio's default) and by
`pinocchio.buildModelFromUrdf` (fixed base; continuous joints mapped to Pinocchio's (cos, sin)), and compared on
21 configurations (3 seeds × q = 0, four uniform within the limits, 1e-9 inside them, exactly at them) with
random rates: M (`crba`), gravity, RNEA, C(q, q̇) q̇ and the whole C (`computeCoriolisMatrix`), the Christoffel
symbols of the first kind by Safeea's recursion and by the tree algorithm (Echeandia & Wensing) against the
polarisation of Pinocchio's RNEA without gravity, Γ_kij = ½(τ(e_i + e_j) − τ(e_i) − τ(e_j)), every link's and
frame's pose (`framesForwardKinematics`), the Jacobians of the first 60 frames (LOCAL_WORLD_ALIGNED) and the
tool frame's operational-space inertia inverse J M⁻¹ Jᵀ (Chang & Khatib). Relative errors: max |ours − ref| over
max |ref| (poses and Jacobians: absolute, in m and rad; C and Γ against max |M|; g against the RNEA
torque's largest entry, as g is 0 on some bases).

    python -m benchmarks.study_urdf_pinocchio [--only panda,baxter] [--seeds 3]

All of it: about 3 minutes on the 2-core machine (tiago_dual's 101 joints take most of it).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

COLUMNS = ("M", "g", "RNEA", "Cq̇", "C", "Γ", "Γ tree", "FK", "J", "Λ⁻¹")


class _Pin:
    """Pinocchio's quantities in our joint order (continuous joints as (cos, sin) in q)."""

    def __init__(self, model, robot):
        import pinocchio as pin
        self.pin, self.model, self.data = pin, model, model.createData()
        self.free = model.copy()
        self.free.gravity = pin.Motion.Zero()
        self.fdata = self.free.createData()
        joints = [model.joints[model.getJointId(name)] for name in robot.joint_names]
        if model.nv != robot.n or any(j.nv != 1 for j in joints):
            raise ValueError(f"joints differ: Pinocchio nv = {model.nv}, ours n = {robot.n}")
        self.iq, self.nq = [j.idx_q for j in joints], [j.nq for j in joints]
        self.iv = np.array([j.idx_v for j in joints])

    def q(self, q):
        out = self.pin.neutral(self.model).copy()
        for k, (i, nq) in enumerate(zip(self.iq, self.nq)):
            out[i:i + nq] = q[k] if nq == 1 else (np.cos(q[k]), np.sin(q[k]))
        return out

    def v(self, v):
        out = np.zeros(self.model.nv)
        out[self.iv] = v
        return out

    def M(self, q):
        M = self.pin.crba(self.model, self.data, self.q(q))
        M = np.triu(M) + np.triu(M, 1).T
        return M[np.ix_(self.iv, self.iv)]

    def rnea(self, q, v, a, gravity=True):
        model, data = (self.model, self.data) if gravity else (self.free, self.fdata)
        return self.pin.rnea(model, data, self.q(q), self.v(v), self.v(a))[self.iv]

    def coriolis(self, q, v):
        return self.pin.computeCoriolisMatrix(self.model, self.data, self.q(q), self.v(v))[np.ix_(self.iv, self.iv)]

    def christoffel(self, q):
        n, z = len(self.iv), np.zeros(len(self.iv))
        E = np.eye(n)
        T1 = np.array([self.rnea(q, E[i], z, gravity=False) for i in range(n)])
        G = np.zeros((n, n, n))
        for i in range(n):
            G[:, i, i] = T1[i]
            for j in range(i + 1, n):
                G[:, i, j] = G[:, j, i] = 0.5 * (self.rnea(q, E[i] + E[j], z, gravity=False) - T1[i] - T1[j])
        return G

    def frame_id(self, name):
        for kind in (self.pin.BODY, self.pin.FIXED_JOINT, self.pin.JOINT, self.pin.OP_FRAME, self.pin.SENSOR):
            if self.model.existFrame(name, kind):
                return self.model.getFrameId(name, kind)
        return None

    def poses(self, q, names):
        self.pin.framesForwardKinematics(self.model, self.data, self.q(q))
        return {nm: self.data.oMf[self.frame_id(nm)].homogeneous.copy() for nm in names}

    def jacobian(self, q, name):
        J = self.pin.computeFrameJacobian(self.model, self.data, self.q(q), self.frame_id(name),
                                          self.pin.LOCAL_WORLD_ALIGNED)
        return J[:, self.iv]


def _err(ours, ref, scale=None) -> float:
    ours, ref = np.asarray(ours, float), np.asarray(ref, float)
    return float(np.abs(ours - ref).max(initial=0.0)) / max(float(np.abs(ref).max(initial=0.0)), scale or 0.0, 1e-300)


def configurations(robot, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(robot.q_min), robot.q_min, -np.pi)
    hi = np.where(np.isfinite(robot.q_max), robot.q_max, np.pi)
    side = rng.integers(0, 2, robot.n)
    return np.array([np.zeros(robot.n), *rng.uniform(lo, hi, (4, robot.n)),
                     np.where(side, hi - 1e-9 * (hi - lo), lo + 1e-9 * (hi - lo)), np.where(side, hi, lo)])


def compare(path: str, seeds=(0, 1, 2)) -> tuple:
    """(our model, {column: worst error}) of one URDF."""
    import dynamics as dyn
    import pinocchio as pin
    from dynamics.christoffel_tree import christoffel_tree
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = dyn.from_urdf(path, mimic="independent")
    ref = _Pin(pin.buildModelFromUrdf(path), robot)
    names = [nm for nm in list(robot.link_names) + list(robot.frame_names) if ref.frame_id(nm) is not None]
    worst = dict.fromkeys(COLUMNS, 0.0)

    def keep(column, value):
        worst[column] = max(worst[column], value)
    for seed in seeds:
        Q = configurations(robot, seed)
        rng = np.random.default_rng(100 + seed)
        QD, QDD = rng.uniform(-2, 2, Q.shape), rng.uniform(-3, 3, Q.shape)
        M, g, tau = dyn.mass_matrix(robot, Q), dyn.gravity_torques(robot, Q), dyn.inverse_dynamics(robot, Q, QD, QDD)
        C, G, Gt = dyn.coriolis_matrix(robot, Q, QD), dyn.christoffel(robot, Q), christoffel_tree(robot, Q)
        T = dyn.forward_kinematics(robot, Q)
        for s, (q, qd, qdd) in enumerate(zip(Q, QD, QDD)):
            Mr = ref.M(q)
            scale = float(np.abs(Mr).max())
            keep("M", _err(M[s], Mr))
            tau_r = ref.rnea(q, qd, qdd)
            keep("g", _err(g[s], ref.rnea(q, 0 * q, 0 * q), float(np.abs(tau_r).max())))   # (g = 0: flying bases)
            keep("RNEA", _err(tau[s], tau_r))
            keep("Cq̇", _err(C[s] @ qd, ref.rnea(q, qd, 0 * q, gravity=False), scale))
            keep("C", _err(C[s], ref.coriolis(q, qd), scale))
            Gr = ref.christoffel(q)
            keep("Γ", _err(G[s], Gr, scale))
            keep("Γ tree", _err(Gt[s], Gr, scale))
            poses = ref.poses(q, names)
            for nm in names:
                b, X = robot.frame(nm)
                keep("FK", _err((T[s, b] @ X)[:3], poses[nm][:3], 1.0))
            if s < 3:
                for nm in names[:60]:
                    keep("J", _err(dyn.frame_jacobian(robot, q, nm), ref.jacobian(q, nm), 1.0))
                Jt = ref.jacobian(q, robot.tool_frame)
                if np.linalg.eigvalsh(Mr).min() > 1e-12 * scale:
                    keep("Λ⁻¹", _err(dyn.operational_space_inertia_inverse(robot, q, [robot.tool_frame]),
                                     Jt @ np.linalg.solve(Mr, Jt.T)))
    return robot, worst


def main(argv=None) -> int:
    from .cases import erd_path
    ap = argparse.ArgumentParser(prog="python -m benchmarks.study_urdf_pinocchio", description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated file names without .urdf (default: all)")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    root = Path(erd_path("robots"))
    paths = sorted(root.rglob("*.urdf"))
    if args.only:
        paths = [p for p in paths if p.stem in set(args.only.split(","))]
    print("| file | n | tree | " + " | ".join(COLUMNS) + " | s |")
    print("|---|---|---|" + "---|" * (len(COLUMNS) + 1))
    totals, skipped = dict.fromkeys(COLUMNS, (0.0, "")), []
    for p in paths:
        t0 = time.perf_counter()
        try:
            robot, worst = compare(str(p), tuple(range(args.seeds)))
        except Exception as exc:                  # refused by either loader, or no joint in common
            text = " ".join(str(exc).replace(str(p), p.name).split())
            skipped.append(f"{p.relative_to(root)}: {type(exc).__name__}: {text[:160]}")
            continue
        for c, v in worst.items():
            totals[c] = max(totals[c], (v, p.stem))
        print(f"| {p.relative_to(root)} | {robot.n} | {'tree' if not robot.is_serial else 'chain'} | "
              + " | ".join(f"{worst[c]:.1e}" for c in COLUMNS) + f" | {time.perf_counter() - t0:.1f} |", flush=True)
    print("\nworst: " + ", ".join(f"{c} {v:.1e} ({who})" for c, (v, who) in totals.items()))
    for line in skipped:
        print(f"not compared: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
