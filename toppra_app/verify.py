"""Checking a time law against the limits *between* grid points.

The optimiser enforces the limits at the grid points only. Here the exact time law (b linear in θ
inside each interval, constant θ̈; see `trajectory`) is re-evaluated at ``substeps + 1`` points per
interval (both ends included), and every limit is recomputed from the physics, independently of the
optimiser's rows: torques by recursive Newton–Euler inverse dynamics plus friction, joint velocities
q′ θ̇ and accelerations q′ θ̈ + q″ θ̇². The result is a ratio |value| / limit per interval, kind and joint.

With θ̈ linear per interval the values bend more between sub-samples (θ̇² is quadratic inside an interval,
the torque cubic in θ̈ and θ̇²), so there each sub-sample's ratio also takes the extreme of the parabola
through it and its two neighbours where that extreme lies between them (`between_peaks`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import dynamics

from .samples import CrossingSamples, KnotSamples, SubSamples  # noqa: F401  (the check's samples, also named here)
from .samples import flip_joints
from .trajectory import inside

KINDS = ("torque", "velocity", "acceleration")
SWING = 0.3         # `swing_room`: the relative change of θ̇² over an interval at which its room counts in full
                    # (0.1–0.3 with the square, 0.05–0.3 linear: the same plans caught on 324 measured; 0.3 the
                    # fewest flagged that needed no refinement)


@dataclass(frozen=True)
class Worst:
    """The largest |value| / limit of one kind of limit, and where it happens."""
    kind: str
    ratio: float
    joint: int           # -1 when no limit of this kind exists
    theta: float
    interval: int
    value: float
    limit: float

    @property
    def limit_set(self) -> bool:
        """False for a kind of limit the robot does not have (no joint's is finite): nothing was compared, and
        its ratio 0 and joint −1 mean nothing (a tool limit has joint −1 too, and is set)."""
        return bool(np.isfinite(self.limit))

    def as_dict(self, joint_names=None) -> dict:
        d = dict(kind=self.kind, ratio=self.ratio, joint=self.joint, theta=self.theta, interval=self.interval,
                 value=self.value, limit=self.limit)
        if joint_names is not None and self.joint >= 0:
            d["joint_name"] = joint_names[self.joint]
        return d


def worst_text(worst: dict) -> str:
    """The worst value/limit of each kind of limit that is set, one line ("torque 100.01 %, velocity 99.2 %")."""
    return ", ".join(f"{k} {100 * w.ratio:.2f} %" for k, w in worst.items() if w.limit_set)


def worst_summary(worst: dict, joint_names=None) -> dict:
    """A summary.json's `worst` ({kind: `Worst.as_dict`}) of the limits that are set, and `limits_not_set`, the
    kinds the robot has no limit of (their entries read "ratio 0.0, joint −1", as if they had been checked)."""
    return dict(worst={k: w.as_dict(joint_names) for k, w in worst.items() if w.limit_set},
                limits_not_set=[k for k, w in worst.items() if not w.limit_set])


@dataclass
class LimitCheck:
    """Per-interval worst ratios (N, n) per kind, and the overall worst per kind."""
    ratios: dict
    worst: dict
    grid_torques: np.ndarray | None = None   # (P, n) torques at the grid points (each with the following
                                             # interval's θ̈, the last with the last one's), when computed
    at: dict = field(default_factory=dict)   # kind -> (N, n) fraction u of the worst point (a sub-sample or knot)
    rho: np.ndarray | None = None            # (N, S+1) the largest ratio of any limit at each sub-sample

    @property
    def worst_ratio(self) -> float:
        return max((w.ratio for w in self.worst.values()), default=0.0)


def _worst(kind, ratio, value, limit, theta) -> Worst:
    """ratio, value: (N, S+1, n); limit: (n,)."""
    if ratio.size == 0 or not np.isfinite(limit).any():
        return Worst(kind, 0.0, -1, float("nan"), -1, float("nan"), float("inf"))
    flat = np.nanargmax(ratio)
    j, k, joint = np.unravel_index(flat, ratio.shape)
    return Worst(kind, float(ratio[j, k, joint]), int(joint), float(theta[j, k]), int(j),
                 float(value[j, k, joint]), float(limit[joint]))


def joint_limits(robot) -> dict:
    """{kind: (n,) limit} of the joint limits this module recomputes (inf: none)."""
    return {"velocity": robot.qd_max, "acceleration": robot.qdd_max, "torque": robot.tau_max}


def sub_sample_speeds(sub: SubSamples, b, d=None) -> tuple[np.ndarray, np.ndarray]:
    """(θ̇², θ̈), each (N, S+1), at the sub-samples of the exact time law through grid values b: θ̈
    constant per interval (b linear inside it), or with `d` (N,) linear and continuous (`trajectory.TimeLaw`)."""
    j = np.arange(sub.theta_grid.size - 1)[:, None]
    bs, sdd = law_at(b, d, np.diff(sub.theta_grid), j, sub.u[None, :])          # (N, S+1)
    return bs, np.broadcast_to(sdd, bs.shape)


def law_at(b, d, dth, j, u) -> tuple[np.ndarray, np.ndarray]:
    """(θ̇², θ̈) of the exact time law through grid values b (and d, or None: θ̈ constant per interval) at
    the fractions u of intervals j (`trajectory.inside`; j and u broadcast), dth the intervals' widths."""
    b = np.maximum(np.asarray(b, dtype=float), 0.0)
    dd = 0.0 if d is None else np.asarray(d, dtype=float)[j]
    return inside(b[j], b[j + 1], (b[j + 1] - b[j]) / (2.0 * dth[j]), dd, dth[j], u)


def sub_sample_values(robot, sub: SubSamples, b, d=None) -> dict:
    """{kind: (N·(S+1), n) values} of torque (if limited), joint velocity and acceleration at the
    sub-samples of the exact time law through grid values b (and d, `sub_sample_speeds`)."""
    bs, sdd = sub_sample_speeds(sub, b, d)
    return joint_values(robot, sub.q, sub.dq, sub.ddq, bs.reshape(-1), sdd.reshape(-1),
                        lambda: sub.world(robot), sub.direction)


def joint_values(robot, q, dq, ddq, b, sdd, world=None, direction=None) -> dict:
    """{kind: (M, n) values} of joint velocity q′ θ̇, acceleration q′ θ̈ + q″ θ̇² and (if limited) torque at
    M path samples (q, q′, q″) with θ̇² = b, θ̈ = sdd (M,); `world`: a callable giving the samples'
    `world_quantities_t` (computed here if None). Coulomb friction takes the sign of q′ (`direction` where
    given): at rest too, the one-sided limit of the motion (`dynamics.motor_torques`)."""
    sd = np.sqrt(b)[:, None]
    qd = dq * sd
    qdd = dq * np.asarray(sdd)[:, None] + ddq * sd * sd
    values = {"velocity": qd, "acceleration": qdd}
    if np.isfinite(robot.tau_max).any():
        values["torque"] = dynamics.motor_torques(robot, q, qd, qdd, dq if direction is None else direction,
                                                   world=None if world is None else world())
    return values


def between_peaks(v: np.ndarray) -> np.ndarray:
    """(N, S+1, n) |extreme| of the parabola through the values `v` (N, S+1, n) at every three neighbouring,
    equally spaced sub-samples of an interval where that extreme lies between the outer two, at the middle
    one's index (0 elsewhere, and at the interval's ends). On smooth values it finds the peak between
    sub-samples to third order in their spacing (measured on suite plans with θ̈ linear per interval:
    within 5e-5 of the peak on 128 sub-samples, where the sub-samples alone missed up to 6.5e-4)."""
    out = np.zeros_like(v)
    if v.shape[1] < 3:
        return out
    y0, y1, y2 = v[:, :-2], v[:, 1:-1], v[:, 2:]
    curv = y0 - 2.0 * y1 + y2
    with np.errstate(divide="ignore", invalid="ignore"):
        x = 0.5 * (y0 - y2) / curv                                  # the vertex, in sub-sample spacings
        top = y1 - 0.125 * (y2 - y0) ** 2 / curv
    out[:, 1:-1] = np.where((curv != 0) & (np.abs(x) <= 1.0), np.abs(top), 0.0)
    return out


def check_time_law(robot, sub: SubSamples, b, d=None, peaks: bool | None = None) -> LimitCheck:
    """Ratios |value| / limit of torque, joint velocity and acceleration at the sub-samples of the
    exact time law through grid values b (and d: θ̈ linear per interval, `sub_sample_speeds`); with the
    peaks between sub-samples (`between_peaks`) if `peaks`, by default where any d is not 0 — and for joint
    speeds always (cheap, no dynamics: controller plans, θ̈ constant on 200 intervals for 12–22 waypoints, were
    up to 0.29 % over their speed headroom between sub-samples while the check said 0.05 %). (The planner
    asks for them on dense waypoint paths too: there the torque bends sharply next to the spline's knots,
    and on iiwa7/dense-0 with 600 intervals a plan within tol at the sub-samples was 0.32 % over on 1 ms
    samples; with the peaks, 0.072 %.)"""
    N, S1 = sub.theta.shape
    n = robot.n
    values = sub_sample_values(robot, sub, b, d)
    limits = joint_limits(robot)
    if peaks is None:
        peaks = d is not None and bool(np.any(np.asarray(d) != 0.0))
    ratios, worst, at = {}, {}, {}
    rho = np.zeros((N, S1))
    for kind in KINDS:
        lim = limits[kind]
        if kind not in values or not np.isfinite(lim).any():
            ratios[kind] = np.zeros((N, n))
            worst[kind] = _worst(kind, np.zeros((0,)), None, lim, sub.theta)
            continue
        v = values[kind].reshape(N, S1, n)
        r = np.abs(v) / lim                        # inf limit → 0
        if peaks or kind == "velocity":            # (the value reported is then the peak's, signed as v)
            r = np.maximum(r, between_peaks(v) / lim)
            v = np.where(np.isfinite(lim), np.sign(v) * r * np.where(np.isfinite(lim), lim, 0.0), v)   # (0 · inf:
                                                   # numpy's "invalid value" warning, a stderr line of the CLI)
        ratios[kind] = r.max(axis=1)
        at[kind] = sub.u[r.argmax(axis=1)]
        np.maximum(rho, r.max(axis=2), out=rho)
        worst[kind] = _worst(kind, r, v, lim, sub.theta)
    if sub.knots is not None:
        _with_knots(robot, sub.knots, np.diff(sub.theta_grid), b, d, limits, ratios, worst, at)
    if sub.crossings is not None and "torque" in values:
        _with_crossings(robot, sub.crossings, np.diff(sub.theta_grid), b, d, ratios, worst, at)
    grid_torques = None
    if "torque" in values:
        tau = values["torque"].reshape(N, S1, n)
        grid_torques = np.concatenate([tau[:, 0, :], tau[-1:, -1, :]])
    return LimitCheck(ratios, worst, grid_torques, at, rho)


def _with_knots(robot, K: KnotSamples, dth, b, d, limits, ratios, worst, at) -> None:
    """Merge the ratios at the knots inside intervals (`KnotSamples`) into the check's (in place)."""
    j = K.j
    bs, sdd = law_at(b, d, dth, j, K.u)
    for kind, v in joint_values(robot, K.q, K.dq, K.ddq, bs, sdd).items():
        lim = limits[kind]
        if not np.isfinite(lim).any():
            continue
        r = np.abs(v) / lim                                            # (M, n)
        best = np.zeros_like(ratios[kind])
        np.maximum.at(best, j, r)
        m, k = np.nonzero((r >= best[j]) & (best[j] > ratios[kind][j]))
        at[kind][j[m], k] = K.u[m]
        ratios[kind] = np.maximum(ratios[kind], best)
        m, k = np.unravel_index(np.argmax(r), r.shape)
        if r[m, k] > worst[kind].ratio:
            worst[kind] = Worst(kind, float(r[m, k]), int(k), float(K.theta[m]), int(j[m]), float(v[m, k]),
                                float(lim[k]))


def _with_crossings(robot, C: CrossingSamples, dth, b, d, ratios, worst, at) -> None:
    """Merge the torque next to each Coulomb flip (`CrossingSamples`: |τ − F_c sign(q̇)| + F_c of the joint
    whose q′ changes sign) into the check's ratios (in place)."""
    lim = robot.tau_max
    on = np.flatnonzero(flip_joints(robot)[C.joint])
    if on.size == 0:
        return
    j, k, m = C.j[on], C.joint[on], np.arange(on.size)
    bs, sdd = law_at(b, d, dth, j, C.u[on])
    values = joint_values(robot, C.q[on], C.dq[on], C.ddq[on], bs, sdd)
    tau = values["torque"][m, k] - robot.coulomb[k] * np.sign(C.dq[on][m, k])
    v = np.abs(tau) + robot.coulomb[k]
    r = v / lim[k]
    up = r > ratios["torque"][j, k]
    np.maximum.at(ratios["torque"], (j, k), r)
    at["torque"][j[up], k[up]] = C.u[on][up]           # (the last of several in one interval and joint)
    i = int(np.argmax(r))
    if r[i] > worst["torque"].ratio:
        worst["torque"] = Worst("torque", float(r[i]), int(k[i]), float(C.theta[on][i]), int(j[i]),
                                float(np.sign(tau[i]) * v[i]), float(lim[k[i]]))


def gap_estimate(check: LimitCheck, law) -> float | None:
    """How much faster than `law` the exact optimum might be, as a share of its duration (an indicator).

    At every point of a continuous time-optimal profile some limit is active (the path acceleration is
    at its largest or smallest value, or the speed at its largest). With θ̈ constant per interval the
    discrete profile cannot stay on a limit that bends inside an interval, and where the largest ratio
    of any limit at a sub-sample is ρ < 1 the motion is slower than it could be there. Summed over the
    intervals as (1 − min ρ)·Δt/T. Not a bound: on the planner benchmark suite it was above the measured
    gap to a 3200-interval solve in every case, by 1.5× (large gaps) to ~15× (small ones)."""
    return None if check.rho is None else estimate_of(interval_room(check, law), law)


def estimate_of(room: np.ndarray, law) -> float | None:
    """`gap_estimate` from the room (N,) of every interval (`room_of`): its sum over the duration."""
    if law.duration <= 0 or not np.isfinite(law.duration):
        return None
    return float(room.sum() / law.duration)


def interval_room(check: LimitCheck, law) -> np.ndarray:
    """(N,) (1 − min ρ)·Δt of every interval: the time it may lose to the optimum (`gap_estimate`)."""
    return room_of(check.rho, law)


def swing_room(check: LimitCheck, law) -> np.ndarray:
    """(N,) `interval_room` weighted by how far θ̇² swings across each interval, min(1, (r / `SWING`)²) with
    r = |b_{j+1} − b_j| / (b_j + b_{j+1}): the room a θ̈-linear plan may lose. Its quadratic θ̇² follows a
    limit through an interval where θ̇² changes little (a switch between limits near the top of the profile
    leaves room at mid-interval that costs almost nothing: tiny motions, estimate ~1 %, gap ~0.01 %), not
    where it swings by a large factor (one joint turning back while the others barely move); the estimate
    the planner refines θ̈-linear plans by (`refine.for_the_swing`)."""
    b = law.b
    r = np.abs(np.diff(b)) / np.maximum(b[1:] + b[:-1], np.finfo(float).tiny)
    return interval_room(check, law) * np.minimum(1.0, (r / SWING) ** 2)


def room_of(rho: np.ndarray, law) -> np.ndarray:
    """(N,) (1 − min ρ)·Δt of every interval for the largest ratios ρ (N, S+1) of any limit at its samples."""
    dt = np.where(np.isfinite(law.dt), law.dt, 0.0)
    return np.clip(1.0 - rho.min(axis=1), 0.0, 1.0) * dt


def check_samples(robot, sample, tau=None) -> dict:
    """Worst ratio per kind of a sampled trajectory (t, q, qd, qdd[, tau]); tau defaults to the sample's.

    Returns {kind: Worst} with `interval` the sample index and `theta` the sample time."""
    q, qd, qdd = sample.q, sample.qd, sample.qdd
    tau = sample.tau if tau is None else tau
    theta = np.asarray(getattr(sample, "t", np.arange(len(q))), dtype=float)[:, None]
    out = {}
    for kind, v, lim in (("torque", tau, robot.tau_max), ("velocity", qd, robot.qd_max),
                         ("acceleration", qdd, robot.qdd_max)):
        if not np.isfinite(lim).any():
            out[kind] = _worst(kind, np.zeros((0,)), None, lim, theta)
            continue
        r = (np.abs(v) / lim)[:, None, :]
        out[kind] = _worst(kind, r, v[:, None, :], lim, theta)
    return out
