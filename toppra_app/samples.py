"""The points where the between-grid check (`verify`) evaluates a time law: sub-samples inside every grid
interval (`SubSamples`), the spline's knots and points near the path's ends that fall between them
(`KnotSamples`), and the Coulomb flips inside intervals (`CrossingSamples`) — the path evaluated there once
per planner, the configuration-only part of inverse dynamics there once per robot (`SubSamples.world`).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from dynamics._batch import world_quantities_t
from dynamics.kinematics import dynamics_origin

from .limits.rows import at_flip

END_SAMPLES = (8, 20)   # the check's points at 2^-k of the path from each end, k in this range (`SubSamples.build`):
                        # from rest the viscous friction F_v q′ √b rises like √θ, faster than the sub-samples resolve
                        # (an iiwa with strong friction was 0.48 % over its limit 1 ms after its start, the check
                        # 1.0009 at 1/8 of its first interval)
NEWTON_STEPS = 3        # on q′ from the linear interpolation to a Coulomb flip (`CrossingSamples`): exact to rounding
NOISE = 1e-12           # ... where |q′_k| is above this share of the sample's largest |q′|

_PREFETCH = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toppra-app-prefetch")
PREFETCH = True     # overlap the check's kinematics with the solve in a thread; off where every core already
                    # has a process of its own (batch workers), where the thread would only compete


def _prefetch_after_fork() -> None:
    """A forked child's own prefetch thread: the parent's is not there, and its executor, which had seen it idle,
    started none, so a plan in a `multiprocessing` "fork" child of a process that had planned waited for ever."""
    global _PREFETCH
    _PREFETCH = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toppra-app-prefetch")


os.register_at_fork(after_in_child=_prefetch_after_fork)


def flip_joints(robot) -> np.ndarray:
    """(n,) bool: the joints with Coulomb friction under a finite torque limit — those whose flips (q′ changing
    sign) the planner puts on grid points (`planning.layers.on_coulomb_flips`) and the check examines."""
    return (robot.coulomb > 0) & np.isfinite(robot.tau_max)


@dataclass
class SubSamples:
    """Sub-sample positions inside every interval of a grid, with the path evaluated there."""
    theta_grid: np.ndarray     # (P,)
    u: np.ndarray              # (S+1,) fractions in [0, 1]
    theta: np.ndarray          # (N, S+1)
    q: np.ndarray              # (N·(S+1), n)
    dq: np.ndarray
    ddq: np.ndarray
    knots: "KnotSamples | None" = None                       # the spline's knots inside the intervals, and
                                                             # points close to the path's ends (`END_SAMPLES`)
    crossings: "CrossingSamples | None" = None               # where a joint's q′ changes sign between them
    direction: np.ndarray | None = None                      # (N·(S+1), n) whose sign Coulomb friction takes:
                                                             # q′, at an interval's end on a flip its neighbour's
    _world: dict = field(default_factory=dict, repr=False)   # (id(robot), pid) -> (robot, Future of WorldT)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def build(cls, path, theta_grid, substeps: int = 20, knots: bool = True) -> "SubSamples":
        """`knots`: also sample the path's spline knots (`path.knots`, if it has them) that lie inside
        intervals off the sub-samples (`KnotSamples`)."""
        th = np.asarray(theta_grid, dtype=float)
        u = np.linspace(0.0, 1.0, int(substeps) + 1)
        sub = th[:-1, None] + u[None, :] * np.diff(th)[:, None]
        sub[:, -1] = th[1:]
        S = path.evaluate(sub.reshape(-1))
        if not knots:
            return cls(th, u, sub, S.q, S.dq, S.ddq)
        near = (th[-1] - th[0]) * 0.5 ** np.arange(END_SAMPLES[0], END_SAMPLES[1] + 1)     # inside the end intervals
        ends = np.concatenate([th[0] + near[near < th[1] - th[0]], th[-1] - near[near < th[-1] - th[-2]]])
        at = KnotSamples.build(path, th, u, np.concatenate([np.ravel(getattr(path, "knots", ())), ends]))
        # a grid point on a Coulomb flip (`layers.on_coulomb_flips`): each interval beside it takes the
        # friction of its own side, the one-sided limit with its own θ̈ (θ̈ may jump at a grid point)
        dq, ddq = S.dq.reshape(sub.shape + (-1,)), S.ddq.reshape(sub.shape + (-1,))
        direction = dq.copy()
        for end, inner in ((0, 1), (-1, -2)):
            direction[:, end] = np.where(at_flip(dq[:, end], ddq[:, end]), dq[:, inner], dq[:, end])
        flips = CrossingSamples.build(path, th, u, direction)
        return cls(th, u, sub, S.q, S.dq, S.ddq, at, flips, direction.reshape(S.dq.shape))

    def prefetch(self, robot) -> None:
        """Start computing the configuration-only part of inverse dynamics at the sub-samples (body
        poses, axes, world inertias) in a worker thread, e.g. while the solver runs; `world` waits for it.
        Nothing happens with `PREFETCH` off or without torque limits (`world` then computes it when asked)."""
        if PREFETCH and np.isfinite(robot.tau_max).any():
            self._future(robot)

    def _future(self, robot):
        key = (id(robot), os.getpid())                     # (a forked child: not the parent's future, maybe pending)
        with self._lock:
            if key not in self._world or self._world[key][0] is not robot:
                if len(self._world) >= 2:                  # keep the memory bounded (payload re-plans)
                    self._world.pop(next(iter(self._world)))
                self._world[key] = (robot, _PREFETCH.submit(world_quantities_t, robot, self.q, dynamics_origin(robot)))
            return self._world[key][1]

    def world(self, robot):
        """`world_quantities_t(robot, q, dynamics_origin(robot))` at the sub-samples (from `prefetch`, or computed now)."""
        return self._future(robot).result()


@dataclass(frozen=True)
class KnotSamples:
    """The path at the knots of its spline that lie inside grid intervals, off the sub-samples. The spline's
    third derivative jumps at a knot, so joint acceleration and torque have a kink there, and on a noisy
    path with many waypoints that kink is a sharp peak the sub-samples straddle (and a parabola through
    three of them does not model): the 3000-waypoint path of tests/test_output_safety.py (iiwa 7, 1e-4 rad
    noise) on 4096 intervals was 7.4 % over the torque limit at knots while its sub-samples were within
    0.09 %. The check evaluates these points too, so a repair puts a station on the knot."""
    j: np.ndarray              # (M,) interval
    u: np.ndarray              # (M,) fraction inside it
    theta: np.ndarray          # (M,)
    q: np.ndarray              # (M, n)
    dq: np.ndarray
    ddq: np.ndarray

    @classmethod
    def build(cls, path, th: np.ndarray, u_sub: np.ndarray, points=None) -> "KnotSamples | None":
        """At the path's knots, or at `points` (θ values) where given, inside intervals and off the sub-samples."""
        knots = np.asarray(getattr(path, "knots", ()) if points is None else points, dtype=float).reshape(-1)
        j = np.searchsorted(th, knots, side="right") - 1
        ok = (j >= 0) & (j < th.size - 1)
        knots, j = knots[ok], j[ok]
        dth = th[j + 1] - th[j]
        u = (knots - th[j]) / dth
        off = np.abs(u[:, None] - u_sub[None, :]).min(axis=1, initial=np.inf) * dth > 1e-12 * (th[-1] - th[0])
        if not off.any():
            return None
        S = path.evaluate(knots[off])
        return cls(j[off], u[off], knots[off], S.q, S.dq, S.ddq)


@dataclass(frozen=True)
class CrossingSamples(KnotSamples):
    """The path (fields as `KnotSamples`) where joint `joint`'s q′ changes sign inside a grid interval (between
    two sub-samples, or on one). Coulomb friction F_c sign(q̇) flips there and the torque jumps by 2 F_c; with θ̈
    continuous across it (inside an interval) its value next to the flip, |τ without the Coulomb term| + F_c, is
    the largest around it, and the sub-samples on either side, where the rest of the torque has moved on, do not
    see it: a z1 arm (Coulomb 10 % of τ_max) was 2.4 % over its torque limit on 1 ms samples right after a flip
    while the check found 1.0008. The check takes that one-sided value here (`_with_crossings`). The default
    grid has a point on every flip (`planning.layers.on_coulomb_flips`), where θ̈ may jump and each side is
    checked with its own friction (`SubSamples.direction`); these are the flips left inside intervals (a grid
    given as points, a flip next to a knot), where a repair puts a station and lowers the limit."""
    joint: np.ndarray          # (M,) the joint whose q′ changes sign

    @classmethod
    def build(cls, path, th: np.ndarray, u_sub: np.ndarray, dq: np.ndarray) -> "CrossingSamples | None":
        """From q′ at the sub-samples, `dq` (N, S+1, n): the zero between two of opposite sign (linear
        interpolation of q′, then `NEWTON_STEPS` Newton steps on q′ inside that bracket, so that a grid point
        or station moved there stands on the flip: `limits.rows.at_flip`) and interior sub-samples where q′ is
        0 between two of opposite sign — not a joint that does not move, nor rounding noise (|q′_k| below
        `NOISE` of the sample's largest |q′| counts as 0)."""
        s = np.sign(np.where(np.abs(dq) > NOISE * np.abs(dq).max(axis=-1, keepdims=True), dq, 0.0))
        j, m, k = np.nonzero(s[:, :-1] * s[:, 1:] < 0)
        y0, y1 = dq[j, m, k], dq[j, m + 1, k]
        u = u_sub[m] + (u_sub[m + 1] - u_sub[m]) * y0 / (y0 - y1)
        lo, hi = u_sub[m], u_sub[m + 1]
        j0, m0, k0 = np.nonzero((s[:, 1:-1] == 0) & (s[:, :-2] * s[:, 2:] < 0))
        j, u, k = np.concatenate([j, j0]), np.concatenate([u, u_sub[m0 + 1]]), np.concatenate([k, k0])
        if j.size == 0:
            return None
        lo, hi = np.concatenate([lo, u_sub[m0 + 1]]), np.concatenate([hi, u_sub[m0 + 1]])
        span, i = th[j + 1] - th[j], np.arange(j.size)
        for _ in range(NEWTON_STEPS):
            S = path.evaluate(th[j] + u * span)
            f, fp = S.dq[i, k], S.ddq[i, k] * span
            u = np.clip(u - np.divide(f, fp, out=np.zeros_like(f), where=fp != 0), lo, hi)
        theta = th[j] + u * span
        S = path.evaluate(theta)
        return cls(j, u, theta, S.q, S.dq, S.ddq, k)
