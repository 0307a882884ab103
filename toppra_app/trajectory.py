"""The exact time law of a piecewise-constant-θ̈ speed profile, and sampled joint trajectories.

On a grid θ_0 < … < θ_N with b_i = θ̇²(θ_i), a constant path acceleration per interval makes b linear
in θ there (b′ = 2θ̈), so (Verscheure et al. 2009; Lipp & Boyd 2014)

    a_j  = (b_{j+1} − b_j) / (2 Δθ_j),                    Δθ_j = θ_{j+1} − θ_j
    Δt_j = ∫ dθ / √b = 2 Δθ_j / (√b_j + √b_{j+1}),
    θ(t) = θ_j + √b_j τ + ½ a_j τ²,   θ̇(t) = √b_j + a_j τ,   τ = t − t_j ∈ [0, Δt_j]

which is exact (no numerical integration): θ(t) is piecewise quadratic, θ̇ continuous.
Joint motion follows from the path: q̇ = q′ θ̇, q̈ = q′ θ̈ + q″ θ̇².
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import dynamics

from .errors import InputError


@dataclass(frozen=True)
class TrajectorySample:
    """A trajectory sampled at times t: joint positions, velocities, accelerations, torques (N, n),
    and the path parameter θ with its derivatives (N,)."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    s: np.ndarray
    sd: np.ndarray
    sdd: np.ndarray

    def __iter__(self):                       # unpack as t, q, qd, qdd, tau
        return iter((self.t, self.q, self.qd, self.qdd, self.tau))

    def __len__(self) -> int:
        return int(self.t.shape[0])


class TimeLaw:
    """θ(t) from grid values b_i = θ̇² (≥ 0), exact for a constant θ̈ per interval."""

    def __init__(self, theta, b):
        self.theta = np.asarray(theta, dtype=float)
        self.b = np.maximum(np.asarray(b, dtype=float), 0.0)
        if self.theta.ndim != 1 or self.theta.shape != self.b.shape or self.theta.size < 2:
            raise ValueError("TimeLaw: theta and b must be 1-D arrays of the same length >= 2")
        dth = np.diff(self.theta)
        self.sd_grid = np.sqrt(self.b)
        self.a = (self.b[1:] - self.b[:-1]) / (2.0 * dth)                       # θ̈ per interval
        den = self.sd_grid[1:] + self.sd_grid[:-1]
        with np.errstate(divide="ignore"):
            self.dt = np.where(den > 0, 2.0 * dth / np.where(den > 0, den, 1.0), np.inf)
        if not np.isfinite(self.dt).all():
            j = int(np.flatnonzero(~np.isfinite(self.dt))[0])
            raise ValueError(f"TimeLaw: the speed is zero on the whole interval {j} "
                             f"(θ ∈ [{self.theta[j]:.6g}, {self.theta[j + 1]:.6g}]): the motion stops there")
        self.t = np.concatenate(([0.0], np.cumsum(self.dt)))                     # time at grid points

    @property
    def duration(self) -> float:
        return float(self.t[-1])

    @property
    def sdd_grid(self) -> np.ndarray:
        """θ̈ at the grid points (the following interval's, the last interval's at the end)."""
        return np.append(self.a, self.a[-1])

    def __call__(self, t):
        """θ, θ̇, θ̈ at times t (clipped to [0, duration])."""
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.duration)
        j = np.clip(np.searchsorted(self.t, t, side="right") - 1, 0, self.a.size - 1)
        tau = t - self.t[j]
        sd0, a = self.sd_grid[j], self.a[j]
        s = self.theta[j] + sd0 * tau + 0.5 * a * tau * tau
        sd = np.maximum(sd0 + a * tau, 0.0)
        s = np.minimum(s, self.theta[j + 1])
        return s, sd, a.copy()

    def at_theta(self, theta):
        """θ̇, θ̈ and t at path parameters theta (b interpolated linearly inside each interval)."""
        th = np.asarray(theta, dtype=float)
        j = np.clip(np.searchsorted(self.theta, th, side="right") - 1, 0, self.a.size - 1)
        u = (th - self.theta[j]) / (self.theta[j + 1] - self.theta[j])
        b = np.maximum((1 - u) * self.b[j] + u * self.b[j + 1], 0.0)
        sd = np.sqrt(b)
        den = self.sd_grid[j] + sd
        with np.errstate(divide="ignore", invalid="ignore"):
            t = self.t[j] + np.where(den > 0, 2.0 * (th - self.theta[j]) / np.where(den > 0, den, 1.0), 0.0)
        return sd, self.a[j], t


MAX_SAMPLES = 10_000_000           # documented bound (docs/safety.md): samples of one sampled trajectory


def sample_times(duration: float, dt: float) -> np.ndarray:
    """0, dt, 2 dt, … and the final time (so the end state is always included)."""
    if not (np.isfinite(dt) and dt > 0):
        raise InputError(f"dt: must be a positive number of seconds, got {dt}")
    if duration / dt > MAX_SAMPLES:
        raise InputError(f"dt: {dt:g} s gives {duration / dt:.3g} samples over {duration:.6g} s, more than the "
                         f"{MAX_SAMPLES:.0e} a trajectory may have; use a larger dt")
    t = np.arange(0.0, duration, dt)
    if t.size == 0 or duration - t[-1] > 1e-12:
        t = np.append(t, duration)
    return t


def joint_motion(robot, path, s, sd, sdd, t=None) -> TrajectorySample:
    """Joint positions, velocities, accelerations and torques (rigid body + friction) along the path."""
    S = path.evaluate(s)
    qd = S.dq * sd[:, None]
    qdd = S.dq * sdd[:, None] + S.ddq * (sd * sd)[:, None]
    tau = dynamics.motor_torques(robot, S.q, qd, qdd)
    return TrajectorySample(t if t is not None else np.full(s.shape, np.nan), S.q, qd, qdd, tau, S.theta, sd, sdd)


def sample_trajectory(robot, path, law: TimeLaw, dt: float = 1e-3) -> TrajectorySample:
    """The trajectory at controller rate (default 1 kHz), from the exact time law."""
    t = sample_times(law.duration, dt)
    s, sd, sdd = law(t)
    return joint_motion(robot, path, s, sd, sdd, t)
