"""The exact time law of a piecewise-constant (or piecewise-linear, continuous) θ̈ speed profile, and
sampled joint trajectories.

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
from dynamics.blocks import BLOCK_BYTES, in_blocks

from .checks import real
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


class MotionStops(ValueError):
    """A time law whose speed is zero on a whole interval (the motion would stop there for good)."""


class TimeLaw:
    """θ(t) from grid values b_i = θ̇²(θ_i) (≥ 0), exact for θ̈ constant per interval (`d` None or 0) or
    linear and continuous per interval: with u = (θ − θ_j)/Δθ_j ∈ [0, 1] and ā_j = (b_{j+1} − b_j)/(2Δθ_j),

        θ̈ = ā_j + d_j (u − ½),      θ̇² = (1 − u) b_j + u b_{j+1} − d_j Δθ_j u (1 − u),

    d_j = θ̈(θ_{j+1}) − θ̈(θ_j) the change of θ̈ across interval j (continuity at the grid points is the
    caller's: the node values are `sdd_grid`). The time of a part of an interval is the closed-form
    integral of 1/√(C + B v + A v²) (`elapsed`), and θ(t) its inverse (safeguarded Newton)."""

    def __init__(self, theta, b, d=None):
        self.theta = np.array(theta, dtype=float)            # its own (not the planner's grid: `plan.s`)
        self.b = np.maximum(np.asarray(b, dtype=float), 0.0)
        if self.theta.ndim != 1 or self.theta.shape != self.b.shape or self.theta.size < 2:
            raise ValueError("TimeLaw: theta and b must be 1-D arrays of the same length >= 2")
        dth = np.diff(self.theta)
        self.d = np.zeros(dth.size) if d is None else np.asarray(d, dtype=float).copy()
        if self.d.shape != dth.shape or not np.isfinite(self.d).all():
            raise ValueError("TimeLaw: d must be a finite 1-D array with one value per interval")
        self.linear = bool(np.any(self.d != 0.0))
        self.sd_grid = np.sqrt(self.b)
        self.a = (self.b[1:] - self.b[:-1]) / (2.0 * dth)              # θ̈ per interval (its mean if linear)
        den = self.sd_grid[1:] + self.sd_grid[:-1]
        with np.errstate(divide="ignore"):
            self.dt = np.where(den > 0, 2.0 * dth / np.where(den > 0, den, 1.0), np.inf)
        if self.linear:
            on = self.d != 0.0
            self.dt[on] = elapsed(*self._quadratic(np.flatnonzero(on)), dth[on], self.b[1:][on])
        if not np.isfinite(self.dt).all():
            j = int(np.flatnonzero(~np.isfinite(self.dt))[0])
            raise MotionStops(f"TimeLaw: the speed is zero on the whole interval {j} "
                             f"(θ ∈ [{self.theta[j]:.6g}, {self.theta[j + 1]:.6g}]): the motion stops there")
        self.t = np.concatenate(([0.0], np.cumsum(self.dt)))                     # time at grid points

    def _quadratic(self, j):
        """(C, B, A) of θ̇² = C + B v + A v² on intervals j, v = θ − θ_j."""
        dth = self.theta[j + 1] - self.theta[j]
        return self.b[j], 2.0 * self.a[j] - self.d[j], self.d[j] / dth

    def b_at(self, theta):
        """θ̇² at path parameters `theta` (each in its interval, through both of its ends: `_b_at`)."""
        th = np.asarray(theta, dtype=float)
        j = np.clip(np.searchsorted(self.theta, th, side="right") - 1, 0, self.a.size - 1)
        return self._b_at(j, th - self.theta[j])

    def _b_at(self, j, x):
        """θ̇² at θ_j + x written through both ends (exactly b_j, b_{j+1} there: near a stop the time and
        speed depend on √b, so the rounding of C + B x + A x² would show as ~1e-8)."""
        dth = self.theta[j + 1] - self.theta[j]
        return inside(self.b[j], self.b[j + 1], self.a[j], self.d[j], dth, x / dth)[0]

    @property
    def duration(self) -> float:
        return float(self.t[-1])

    @property
    def sdd_grid(self) -> np.ndarray:
        """θ̈ at the grid points (constant law: the following interval's, the last interval's at the end)."""
        return np.append(self.a - 0.5 * self.d, self.a[-1] + 0.5 * self.d[-1])

    def __call__(self, t):
        """θ, θ̇, θ̈ at times t (clipped to [0, duration])."""
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.duration)
        j = np.clip(np.searchsorted(self.t, t, side="right") - 1, 0, self.a.size - 1)
        tau = t - self.t[j]
        sd0, a = self.sd_grid[j], self.a[j]
        s = self.theta[j] + sd0 * tau + 0.5 * a * tau * tau
        sd = np.maximum(sd0 + a * tau, 0.0)
        s = np.minimum(s, self.theta[j + 1])
        a = a.copy()
        if self.linear:
            on = self.d[j] != 0.0
            if np.any(on):
                jj, dth = j[on], self.theta[j[on] + 1] - self.theta[j[on]]
                C, B, A = self._quadratic(jj)
                x = _invert(C, B, A, dth, tau[on], np.clip(s[on] - self.theta[jj], 0.0, dth),
                            lambda x: self._b_at(jj, x))
                # an interval's end exactly (t − t_j rounds to within ~1 ulp of Δt_j there; at a stop √b would show it)
                x = np.where(tau[on] >= self.dt[jj] - 4e-16 * self.duration, dth, x)
                s[on] = np.where(x >= dth, self.theta[jj + 1], self.theta[jj] + x)
                sd[on] = np.sqrt(self._b_at(jj, x))
                a[on] = 0.5 * B + A * x
        return s, sd, a

    def at_theta(self, theta):
        """θ̇, θ̈ and t at path parameters theta."""
        th = np.asarray(theta, dtype=float)
        j = np.clip(np.searchsorted(self.theta, th, side="right") - 1, 0, self.a.size - 1)
        u = (th - self.theta[j]) / (self.theta[j + 1] - self.theta[j])
        b = np.maximum((1 - u) * self.b[j] + u * self.b[j + 1], 0.0)
        sd = np.sqrt(b)
        den = self.sd_grid[j] + sd
        with np.errstate(divide="ignore", invalid="ignore"):
            t = self.t[j] + np.where(den > 0, 2.0 * (th - self.theta[j]) / np.where(den > 0, den, 1.0), 0.0)
        sdd = self.a[j].copy()
        if self.linear:
            on = self.d[j] != 0.0
            if np.any(on):
                jj = j[on]
                C, B, A = self._quadratic(jj)
                x = th[on] - self.theta[jj]
                bx = self._b_at(jj, x)
                sd[on] = np.sqrt(bx)
                sdd[on] = 0.5 * B + A * x
                t[on] = self.t[jj] + elapsed(C, B, A, x, bx)
        return sd, sdd, t


def inside(b0, b1, a, d, dth, u):
    """(θ̇², θ̈) at the fraction u ∈ [0, 1] of intervals with end values b0, b1, mean θ̈ a = (b1 − b0)/(2Δθ),
    θ̈ changing by d across them (0: constant) and length dth — the law of `TimeLaw`, in any consistent
    units (the planner's scaled β, α, δ, Δσ too): θ̇² = (1 − u) b0 + u b1 − d Δθ u (1 − u) (≥ 0),
    θ̈ = a + d (u − ½)."""
    b = (1.0 - u) * b0 + u * b1 - d * dth * u * (1.0 - u)
    return np.maximum(b, 0.0), a + d * (u - 0.5)


def elapsed(C, B, A, x, Q1=None):
    """∫_0^x dv / √(C + B v + A v²) (arrays; C ≥ 0 and the quadratic ≥ 0 on [0, x]); inf where it diverges.
    `Q1`: the quadratic's value at x where it is known exactly (a grid point's b): near a stop the time
    depends on √Q(x), so the rounding of C + B x + A x² (~1e-16) would move it by ~1e-8.

    A = 0: 2x/(√C + √Q(x)). A > 0: log1p(g(x)/g(0) − 1)/√A with g = 2√A √Q + 2A v + B, the difference
    g(x) − g(0) = 2√A (√Q(x) − √C + √A x) written without cancellation. A < 0: (arcsin w(x) − arcsin w(0))/√−A,
    w = −(2A v + B)/√(B² − 4AC), as one atan2 of the sine and cosine of the difference. Both tend to the
    A = 0 form as A → 0 without cancellation."""
    C, B, A, x = (np.asarray(v, dtype=float) for v in (C, B, A, x))
    Q1 = np.maximum(C + x * (B + A * x) if Q1 is None else np.asarray(Q1, dtype=float), 0.0)
    s0, s1 = np.sqrt(np.maximum(C, 0.0)), np.sqrt(Q1)
    ssum = s0 + s1
    r = np.sqrt(np.abs(A))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lin = np.where(ssum > 0, 2.0 * x / np.where(ssum > 0, ssum, 1.0), np.where(x > 0, np.inf, 0.0))
        diff = np.where(ssum > 0, (Q1 - C) / np.where(ssum > 0, ssum, 1.0), 0.0)               # √Q(x) − √C
        g0 = 2.0 * r * s0 + B
        up = np.log1p(2.0 * r * (diff + r * x) / g0) / r
        up = np.where(np.isnan(up), np.inf, up)
        down = np.arctan2(2.0 * r * (B * diff - 2.0 * A * x * s0), 4.0 * r * r * s0 * s1 + (2.0 * A * x + B) * B) / r
    out = np.where(A > 0, up, np.where(A < 0, down, lin))
    return np.where(x > 0, out, 0.0)


def _invert(C, B, A, dth, tau, x0, b_at, iterations: int = 60):
    """x ∈ [0, dth] with `elapsed(C, B, A, x)` = tau: Newton (dT/dx = 1/√Q) kept inside a shrinking bracket,
    bisection where a Newton step would leave it; `b_at(x)` the quadratic (`TimeLaw._b_at`)."""
    lo, hi = np.zeros_like(dth), dth.copy()
    x = np.clip(x0, lo, hi)
    for _ in range(iterations):
        bx = b_at(x)
        f = elapsed(C, B, A, x, bx) - tau
        lo = np.where(f <= 0, x, lo)
        hi = np.where(f >= 0, x, hi)
        q = np.sqrt(bx)
        with np.errstate(invalid="ignore"):
            xn = x - f * q
        bad = ~((xn > lo) & (xn < hi)) | ~np.isfinite(xn)
        xn = np.where(bad, 0.5 * (lo + hi), xn)
        done = np.abs(xn - x) <= 4e-16 * np.maximum(dth, 1e-300)
        x = xn
        if done.all():
            break
    return x


MAX_SAMPLES = 10_000_000           # documented bound (docs/safety.md): samples of one sampled trajectory
MAX_SAMPLE_BYTES = 2 ** 30         # ... and the bytes of its arrays, 8 × (4 + 4 n) a sample (t, θ, θ̇, θ̈; q, q̇, q̈, τ):
                                   # 10 million samples of 7 joints were 2.6 GB kept, 5.3 GB at the peak
BLOCK = 65_536                     # samples computed at a time: the peak is the arrays plus one block's work
CONTROLLER_BYTES = (10, 10)        # the controller profile's sampled rate check (`controller_samples`) takes about
                                   # 8 × (10 + 10 n) B a sample at its peak, at most `MAX_SAMPLE_BYTES` (640 B for 7
                                   # joints: 1.7 million samples; a count of 2 million was 5 GB at 30 joints, and
                                   # dt = 1e-6 s on a 69 s plan of 7 joints went past 24 GB)
END_STEP = 1e-3                    # the last step of `sample_times` is at least this share of dt,
END_STEP_MIN = 2e-9                # and at least 2 ns: stamps rounded to whole ns (ROS) still increase


def _check_count(duration: float, dt: float, most: int, field: str, whose: str, holder: str) -> None:
    """One line naming `field` where sampling `duration` every `dt` gives more than `most` samples."""
    if duration / dt > most:
        raise InputError(f"{field}: {dt:g} s gives {duration / dt:.3g} samples over {whose}{duration:.6g} s, more than "
                         f"the {most:.0e} {holder}; use a larger dt")


def check_bytes(duration: float, dt: float, per_sample: float, holder: str, hint: str = "", field: str = "dt",
                whose: str = "") -> None:
    """One line naming `field` (`dt`) where sampling `duration` every `dt` at `per_sample` bytes a sample takes more
    than `MAX_SAMPLE_BYTES` (`holder`: what would hold them), before anything is allocated."""
    count = duration / dt
    if count * per_sample > MAX_SAMPLE_BYTES:
        raise InputError(f"{field}: {dt:g} s gives {count:.3g} samples over {whose}{duration:.6g} s, "
                         f"{size_text(count * per_sample)} {holder} ({per_sample:.0f} B a sample), more than the "
                         f"{size_text(MAX_SAMPLE_BYTES)} it may take; use a larger dt{hint}")


def size_text(nbytes: float) -> str:
    return f"{nbytes / 2**30:.3g} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.3g} MiB"


def sample_times(duration: float, dt: float, per_sample: float = 0.0) -> np.ndarray:
    """0, dt, 2 dt, … and the exact end time (so the end state is always included). A grid time closer to
    the end than max(dt·END_STEP, 2 ns) is left out (the last step is then up to that much longer than dt),
    so the times stay strictly increasing when rounded to whole nanoseconds (ROS ``time_from_start``).
    `per_sample`: the bytes the caller keeps a sample (`check_bytes`)."""
    dt = real(dt, "dt", 0.0, None, bounds="(]", unit=" of seconds")
    _check_count(duration, dt, MAX_SAMPLES, "dt", "", "a trajectory may have")
    check_bytes(duration, dt, per_sample, "of arrays")
    t = np.arange(0.0, duration, dt)
    if t.size > 1 and duration - t[-1] < max(END_STEP * dt, END_STEP_MIN):
        t = t[:-1]                                  # (also a grid time that rounded onto or past the end)
    if t.size == 0 or duration > t[-1]:
        t = np.append(t, duration)
    return t


def joint_motion(robot, path, s, sd, sdd, t=None) -> TrajectorySample:
    """Joint positions, velocities, accelerations and torques (rigid body + friction) along the path."""
    S = path.evaluate(s)
    qd = S.dq * sd[:, None]
    qdd = S.dq * sdd[:, None] + S.ddq * (sd * sd)[:, None]
    tau = dynamics.motor_torques(robot, S.q, qd, qdd, S.dq)      # at rest: Coulomb of the motion next to it
    return TrajectorySample(t if t is not None else np.full(s.shape, np.nan), S.q, qd, qdd, tau, S.theta, sd, sdd)


def sample_trajectory(robot, path, law: TimeLaw, dt: float = 1e-3) -> TrajectorySample:
    """The trajectory at controller rate (default 1 kHz), from the exact time law; at most `MAX_SAMPLE_BYTES`
    of arrays, computed `BLOCK` samples at a time (the path, the dynamics and the time law's work took twice
    the arrays again: 1e-6 s on a 3 s plan peaked at 1.7 GB)."""
    t = sample_times(law.duration, dt, 8.0 * (4 + 4 * robot.n))
    fields = in_blocks(lambda tb: tuple(vars(joint_motion(robot, path, *law(tb), tb)).values()),
                       BLOCK_BYTES / BLOCK, t)                                  # (`BLOCK` samples a block)
    return TrajectorySample(*fields)


def controller_samples(robot, path, law, dt: float):
    """The trajectory as a controller sampling every dt sees it: t = 0, dt, 2dt, … up to the first sample
    at or after the end, where the state is the end state (`plan.sample` instead ends on the exact end
    time, a shorter last step than a controller has)."""
    T = law.duration
    a, b = CONTROLLER_BYTES
    check_bytes(T, dt, 8.0 * (a + b * robot.n), "at the peak of its sampled rate check", field="controller.dt",
                whose="the plan's ")
    t = np.arange(int(np.ceil(T / dt - 1e-9)) + 1) * dt
    s, sd, sdd = law(np.minimum(t, T))
    return joint_motion(robot, path, s, sd, sdd, t)
