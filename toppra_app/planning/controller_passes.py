"""The passes of the controller profile's rate rows (`planning.controller.ControllerRows`, docs/controller.md
"Passes"): after each solve the 1 ms samples are checked, and another pass re-solves with new caps b̄ — the
rows hold at θ̇ = √b̄, exact where the profile meets its cap and conservative below it — while a limit is
broken, a cap binds, or the smooth terms gave away more than `GAIN_MIN` of a binding limit or `MEAN_GAIN_MIN`
of the limits on average (at most `max_passes`). Passes are not monotone, so the plan is the shortest pass
within the limits (`finished`), and
the tangent objective's certificate (`socp.tangent`) is asked for only where that pass can be the plan
(`uncertified`).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..limits.rates import RateLimits
from ..trajectory import controller_samples

TRUST = 0.05                 # δ: the next pass's cap is at least (1 + δ)² × the last profile (`_next_cap`)
GROW = 0.15                  # where the last cap bound, the next is (1 + GROW)² × it
SETTLE = 2e-3                # another pass while the duration moved by more than this (relative)
GAIN_MIN = 0.5               # another pass only if it could loosen a binding row by more than this share ...
MEAN_GAIN_MIN = 0.06         # ... or the rows by this share on average over the motion's time (`_gain`): after
                             # the first pass 0.07–0.10 on three dense noisy suite paths, then 8–10 % shorter;
                             # 0.004–0.06 on the smooth ones, where a second pass gained at most 1 %
MARGIN = 0.05                # the groups within this of their limit (`_gain`; `ControllerRows._initial_keep`)


class ControllerPasses:
    """The pass rules of `ControllerRows` (mixed into it: they read its caps, rows and sampled check)."""

    def after(self, robot, path, law, check=None) -> bool:
        """Check the samples of `law` (`check`: its plain check, kept with it); True if another pass is wanted (its
        numbers then set)."""
        more, _, gain, mean, capped = self._wanted(law)     # (before this pass is counted and recorded)
        self.passes += 1
        self.rounds = 0
        sample = controller_samples(robot, path, law, self.profile.dt)
        direction = path.dq(sample.s) if self.rates.exempt_reversals else None      # (q′ at every sample: only then)
        checked = self.rates.check_samples(robot, sample, *self.rest_check, direction=direction)
        if not self.rest[0] or not self.rest[1]:          # smooth_ends off: ignore the steps from / to rest
            checked = self._drop_end_steps(checked)
        worst = max(c[3].ratio for c in checked.values())
        self.last = checked
        over = worst > 1.0 + self.tol
        self.history.append(dict(duration=law.duration, worst_rate_ratio=worst, gain=gain, mean_gain=mean,
                                 capped=capped))
        if not over and (self.best is None or law.duration < self.best[0].duration):
            self.best = (law, check, checked)
        if not (more or (over and self.passes < self.profile.max_passes)):
            return False
        if over:
            # squared: an excess left by the solver's absolute tolerance on tiny rows (near a rest end) does
            # not shrink with the bound, and the measured ratio alone took 4+ passes to settle
            RateLimits.tighten(self.scales, checked, self.theta, self.tol, power=2.0)
        self.cap = self._capped(self._next_cap(law))
        self._rows = self._values = None
        return True

    def uncertified(self, law, bound: float) -> bool:
        """True where this pass's solution `law` of the tangent objective (θ̈ constant) need not be certified
        (`socp.tangent`, which would solve again): `after` will ask for another pass whatever the sampled check
        finds (`more_passes`: this profile only sets the next caps and weights), or an earlier pass's plan within
        the limits is shorter than (1 − `bound`) × this one, which the certificate says no profile on these rows
        beats (in its duration model, `tangent.model_time`, which floors √b near a rest end: an estimate there;
        the plan is then that earlier one, `finished`)."""
        return self.more_passes(law) or (self.best is not None and (1.0 - bound) * law.duration > self.best[0].duration)

    def more_passes(self, law) -> bool:
        """True where `after` will ask for another pass whatever the sampled check finds, and would on any
        solution near this one (`_wanted`: not for the mean gain alone, which the uncertified profile can
        overstate — ur10-urdf/many-0: 67.5 s against 59.2 s certified, and the pass after it 63.4 s)."""
        return self._wanted(law)[1]

    def _wanted(self, law) -> tuple[bool, bool, float, float, bool]:
        """(another pass whatever the sampled check finds, the same not for the mean gain alone, gain, mean gain,
        capped) for the pass about to be checked: passes are left and a cap bound (`capped`), or the smooth terms
        gave away `GAIN_MIN` of a binding limit (`gain`) or `MEAN_GAIN_MIN` of them on average over the motion's
        time (`_gain`) with the duration still moving; `after` also makes one, passes left, where the samples
        break a limit. (Where a later cap than the first bound, the next pass was longer on the suite's tiny and
        dense paths, but 1.6–6 % shorter on 12 tiny motions of `study_hunt`'s 197, some only at the fourth pass
        after a longer third: the plan is the shortest pass, so the pass is made.)"""
        gain, mean = self._gain(law)
        capped = bool(self._at_cap(law).any())
        n = self.passes + 1
        left = n < self.profile.max_passes and not (self.SETTLED_AFTER and n >= self.SETTLED_AFTER)
        moving = self._moved(law) or self.passes == 0
        sure = left and (capped or (moving and gain >= GAIN_MIN))
        return sure or (left and moving and mean >= MEAN_GAIN_MIN), sure, gain, mean, capped

    def _at_cap(self, law) -> np.ndarray:
        """(P,) where the profile met its cap (above the boundary speeds)."""
        return (np.maximum(law.b, 0.0) >= (1.0 - 1e-4) * self.cap) & (self.cap > self.b_floor)

    def _moved(self, law) -> bool:
        """The duration moved by more than `SETTLE` since the last pass."""
        return bool(self.history) and abs(self.history[-1]["duration"] - law.duration) > SETTLE * law.duration

    def _next_cap(self, law) -> np.ndarray:
        """The next pass's cap. Where the last cap bound, the rows were exact (θ̇ = √b̄) and the trust region
        stopped the plan: grow it by (1 + `GROW`)². Elsewhere the rows took θ̇ = √b̄ > √b, and the smooth rate
        (~ θ̇ β b near a velocity-dominated limit) was over-stated by √(b̄/b): the row met at b̄^{1/2} b is met
        at the profile b* with b*^{3/2} = b̄^{1/2} b, the estimate b̄^{1/3} b^{2/3} of the fixed point (C6),
        at least (1 + `TRUST`)² b."""
        b, bound = np.maximum(law.b, 0.0), self._at_cap(law)
        fixed = np.cbrt(self.cap) * np.cbrt(b) ** 2
        return np.where(bound, (1.0 + GROW) ** 2 * self.cap, np.maximum(fixed, (1.0 + TRUST) ** 2 * b))

    def _gain(self, law) -> tuple[float, float]:
        """What another pass could gain: (the largest, the time-weighted mean over the grid points) of `_lost`."""
        lost, b = self._lost(law), np.maximum(law.b, 0.0)
        dt = 2.0 * np.diff(self.theta) / np.maximum(np.sqrt(b[:-1]) + np.sqrt(b[1:]), 1e-300)
        w = np.concatenate(([0.0], dt)) + np.concatenate((dt, [0.0]))         # the time about each grid point
        return float(lost.max(initial=0.0)), float(np.dot(w, lost) / max(w.sum(), 1e-300))

    def _lost(self, law) -> np.ndarray:
        """(P,) at the groups within `MARGIN` of their limit at this solution, the largest share of the limit that
        the smooth term (C2) gave away by taking θ̇ = √b̄ instead of √b."""
        theta, b = self.theta, np.maximum(law.b, 0.0)
        a = np.diff(b) / (2.0 * np.diff(theta))
        a_prev = np.concatenate(([0.0 if self.rest[0] else a[0]], a))
        a_next = np.concatenate((a, [0.0 if self.rest[1] else a[-1]]))
        abar = 0.5 * (a_prev + a_next)[:, None]
        su, sd = np.sqrt(self.cap)[:, None], np.sqrt(b)[:, None]
        G = self._rows[3]
        smooth = self.al * abar + self.be * b[:, None] + self.ga
        value = G * np.abs(a_next - a_prev)[:, None] + np.abs(su * smooth + self.za * abar + self.zb * b[:, None])
        Ls = self._scale()
        near = value >= (1.0 - MARGIN) * Ls
        lost = np.maximum(su - sd, 0.0) * np.abs(smooth) / Ls
        return np.max(np.where(near, lost, 0.0), axis=1, initial=0.0)

    def _drop_end_steps(self, checked):
        out = {}
        for kind, (ratio, s0, s1, w) in checked.items():
            ratio = ratio.copy()
            if self.rest_check[0] and not self.rest[0]:
                ratio[0] = 0.0
            if self.rest_check[1] and not self.rest[1]:
                ratio[-1] = 0.0
            m, k = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
            out[kind] = (ratio, s0, s1, type(w)(w.kind, float(ratio[m, k]), int(k), w.theta, int(m), w.value, w.limit))
        return out

    def warn_if_over(self, robot) -> None:
        w = max(self.rate_check().values(), key=lambda x: x.ratio, default=None)
        if w is not None and w.ratio > 1.0 + self.tol:
            warnings.warn(f"the plan still exceeds the controller profile's {w.kind} limit of joint "
                          f"{robot.joint_names[w.joint]} by {100 * (w.ratio - 1):.3f} % at t = {w.theta:.6g} s on "
                          f"the {1e3 * self.profile.dt:g} ms samples after {self.passes} passes (tol "
                          f"{100 * self.tol:g} %); raise max_passes or use a finer grid", RuntimeWarning, stacklevel=3)

    def finished(self, robot, law, check) -> tuple:
        """(law, check, `rate_check`, `info`) of the plan: the last pass's, or an earlier pass's within the limits
        that was shorter — passes are not monotone (a cap raised where it bound makes the rows at θ̇ = √b̄ more
        conservative elsewhere: the suite's tiny iiwa motion took 0.1266 s on the second pass, 0.1290 s on the
        third) — or, where the last pass still exceeds a rate limit, the shortest one within them (a UR5e path
        with the linear law and `max_passes=2` ended 0.73 % over with its first pass within); warned about where
        no pass kept the limits."""
        last_over = bool(self.last) and max(c[3].ratio for c in self.last.values()) > 1.0 + self.tol
        if self.best is not None and (last_over or self.best[0].duration < law.duration):
            law, check, self.last = self.best
        self.warn_if_over(robot)
        return law, check, self.rate_check(), self.info()

    def rate_check(self) -> dict:
        return {kind: c[3] for kind, c in self.last.items()} if self.last else {}

    def info(self) -> dict:
        keep = self.keep if self.keep is not None else np.zeros(0, bool)
        return dict(solves=self.solves, passes=self.passes, history=self.history, rows=int(keep.sum()),
                    rows_all=int(keep.size))
