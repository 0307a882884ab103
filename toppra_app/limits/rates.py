"""Torque-rate and joint-jerk limits (|dτ/dt| ≤ τ̇_max, |d³q/dt³| ≤ q⃛_max) as seen by a controller sampling
the trajectory every Δt_c (default 1 ms), by a sequential convex scheme around a reference speed profile.

The time law has θ̈ = a_j constant on interval j, so at grid point θ_i the joint accelerations and torques
jump (q̈ = q′θ̈ + q″θ̇², τ = m̃θ̈ + c̃θ̇² + d̃ + F_v q′θ̇, θ̇ continuous):

    Δq̈_i = q′_i (a_i − a_{i−1}),        Δτ_i = m̃_i (a_i − a_{i−1})                              (J)

and inside interval j they change smoothly (′ = d/dθ, θ⃛ = 0):

    dq̈/dt = θ̇ (3 q″ a_j + q‴ b),        dτ/dt = θ̇ (m̃′ a_j + c̃′ b + 2 c̃ a_j + d̃′) + F_v (q″ b + q′ a_j)   (S)

A controller sampling every Δt_c sees a jump within one sample period, so the finite difference over the
period that contains θ_i is at most |Δ_i|/Δt_c + |smooth rate| there. With θ̇ replaced by an upper bound
θ̇_ub,i = (1 + δ)√b_ref,i (b_ref the previous solution) and the trust region b_i ≤ (1 + δ)² b_ref,i, both
(J)/Δt_c and θ̇_ub × (S) are linear in (a, b), and |J| + |S| ≤ L is the four linear rows ±J ± S ≤ L — per
grid point, joint, kind and each neighbouring interval (the smooth rate of the interval on either side).
The rows reference a_{i−1} and a_i, which the planner's canonical per-point rows cannot express, so they
are passed to `TimeOptimalProblem` as a separate sparse block (`extra_rows`). The planner starts from the
plain time-optimal profile, re-solves with b_ref = the last solution, checks the 1 ms samples
(`check_samples`: finite differences of plan.sample(Δt_c).tau and .qdd, including the step from / to rest
at the ends) and lowers the allowed rate at the grid points around offending sample periods (several jumps
in one period when intervals are shorter than Δt_c, between-grid variation) until within `tol`.

Coulomb friction F_c sign(q̇) jumps by 2 F_c where a joint reverses (q′_k changes sign along the path): if
2 F_c > τ̇_max Δt_c no time law meets the sampled torque-rate limit there, and `RateLimits.check_path`
raises `InfeasiblePathError` before planning.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import dynamics

from .rows import per_joint_positive
from ..checks import real
from ..errors import InfeasiblePathError, InputError
from ..verify import Worst

KINDS = ("torque_rate", "jerk")
PRELOAD_ABOVE = 0.9    # a joint whose F_c exceeds this share of one sample's torque rate L Δt_c is loaded at rest
                       # (`rest_torques`); the others' step from rest keeps ≥ 10 % of the sample for m̃ θ̈


def _times(theta, b) -> np.ndarray:
    """Times at the grid points of the time law with θ̇² = b (b linear per interval); 0-speed intervals count 0."""
    sd = np.sqrt(np.maximum(b, 0.0))
    den = sd[1:] + sd[:-1]
    dt = np.where(den > 0, 2.0 * np.diff(theta) / np.where(den > 0, den, 1.0), 0.0)
    return np.concatenate(([0.0], np.cumsum(dt)))


def rest_torques(robot, sample, preload) -> np.ndarray:
    """(2, n) the torques at rest before the first and after the last sample of a motion from and to rest:
    gravity, and for the joints in `preload` (n,) bool the Coulomb friction F_c sign(q′) of the motion next to
    it (the first and last samples' friction, `trajectory.joint_motion`). At rest static friction holds a joint
    anywhere within ±F_c, so a drive whose torque rate is limited can load that friction before the start —
    F_c / τ̇_max, 3 ms for 3 N·m at 1000 N·m/s, with the joint still — and unload it after the end. The check
    counts on that only where it must: for a joint whose F_c exceeds `PRELOAD_ABOVE` of τ̇_max Δt_c (one sample
    period cannot take the step, or only with θ̈ ≈ 0: a SCARA's quill with 3 N was 202 % over after every pass, a
    gantry's wrist with exactly 1 N·m at 1000 N·m/s 0.26 %); elsewhere the step into the motion includes F_c, as
    a drive starting from its holding torque sees it (and the controller's rows hold it, `ControllerRows`)."""
    ends = np.stack([sample.q[0], sample.q[-1]])
    zero = np.zeros_like(ends)
    rigid = dynamics.inverse_dynamics(robot, np.concatenate([ends, ends]), np.concatenate([zero, sample.qd[[0, -1]]]),
                                      np.concatenate([zero, sample.qdd[[0, -1]]]))
    moving = sample.tau[[0, -1]] - rigid[2:] - robot.viscous * sample.qd[[0, -1]]      # F_c sign(q′) there
    return rigid[:2] + np.where(np.asarray(preload, bool), moving, 0.0)


class RateLimits:
    """The torque-rate and jerk limits of a planner (`torque_rate_max=`, `jerk_max=` options)."""

    def __init__(self, robot, torque_rate_max=None, jerk_max=None, dt_c: float = 1e-3, trust: float = 0.05,
                 exempt_reversals: bool = False):
        n = robot.n
        self.limits = {}
        if torque_rate_max is not None:
            self.limits["torque_rate"] = per_joint_positive(torque_rate_max, n, "torque_rate_max")
        if jerk_max is not None:
            self.limits["jerk"] = per_joint_positive(jerk_max, n, "jerk_max")
        dt_c = real(dt_c, "rate_dt", 0.0, None, bounds="(]", unit=" of seconds")
        self.dt_c, self.trust = dt_c, float(trust)
        self.exempt_reversals = bool(exempt_reversals)   # Coulomb steps at reversals left out (`check_samples`)

    def __bool__(self) -> bool:
        return bool(self.limits)

    # ------------------------------------------------------------------ coefficients
    def coefficients(self, robot, path, theta, side: int = 0) -> dict:
        """Per grid point (P, n): jump coefficient and smooth-rate coefficients (α a + β b + γ, multiplied
        by θ̇, plus the viscous terms ζ_a a + ζ_b b) of each kind. `side` −1 / +1: the smooth-rate
        coefficients of the interval left / right of each point (one-sided differences): at a spline knot
        q‴ jumps, and with it β (c̃′ holds M q‴) — a central difference would average the two sides."""
        return self.sided_coefficients(robot, path, theta, (side,))[0]

    def sided_coefficients(self, robot, path, theta, sides=(-1, 1)) -> list:
        """`coefficients` for each of `sides`, with the dynamics of all the points they need (θ and both
        ends of every one-sided difference) evaluated in one batch."""
        theta = np.asarray(theta, dtype=float)
        P = theta.size
        h = 1e-5 * max(path.length, 1e-9)
        windows = []
        for side in sides:
            lo = np.clip(theta - (h if side <= 0 else 0.0), path.s_start, path.s_end)
            hi = np.clip(theta + (h if side >= 0 else 0.0), path.s_start, path.s_end)
            hi = np.where(hi > lo, hi, np.minimum(lo + h, path.s_end))      # at a path end: the inner side
            lo = np.where(hi > lo, lo, hi - h)
            windows.append((lo, hi))
        # the sides share most points (θ ends one side's window and starts the other's): each evaluated once
        points, back = np.unique(np.concatenate([theta] + [x for w in windows for x in w]), return_inverse=True)
        U = path.evaluate(points)
        torque = "torque_rate" in self.limits
        if torque:
            co = dynamics.path_coefficients(robot, U.q, U.dq, U.ddq)
            grav = (co.d - robot.coulomb * np.sign(U.dq))[back[P:]]       # d̃ = g + F_c sign(q′) (Safeea eq. 5)
            co = type(co)(*(x[back] for x in co))
        q3 = np.asarray(path(np.concatenate([0.5 * (lo + hi) for lo, hi in windows]), 3),
                        dtype=float).reshape(len(sides) * P, -1)
        q1, q2 = U.dq[back[:P]], U.ddq[back[:P]]
        out = []
        for m, (lo, hi) in enumerate(windows):
            one = {}
            if "jerk" in self.limits:
                z = np.zeros_like(q1)
                one["jerk"] = dict(jump=q1, alpha=3.0 * q2, beta=q3[m * P:(m + 1) * P], gamma=z, za=z, zb=z)
            if torque:
                l_, h_ = slice((2 * m + 1) * P, (2 * m + 2) * P), slice((2 * m + 2) * P, (2 * m + 3) * P)
                w = (hi - lo)[:, None]
                dm, dc = ((getattr(co, k)[h_] - getattr(co, k)[l_]) / w for k in ("m", "c"))
                # d̃ holds F_c sign(q′): its θ-derivative is 0 except at reversals (handled by check_path)
                dd = (grav[h_.start - P:h_.stop - P] - grav[l_.start - P:l_.stop - P]) / w
                fv = robot.viscous
                one["torque_rate"] = dict(jump=co.m[:P], alpha=dm + 2.0 * co.c[:P], beta=dc, gamma=dd,
                                          za=fv * q1, zb=fv * q2)
            out.append(one)
        return out

    def check_path(self, robot, path, theta) -> None:
        """Coulomb friction jumps by 2 F_c where joint k reverses; infeasible if above τ̇_max,k Δt_c (unless those
        steps are exempt, `exempt_reversals`)."""
        if "torque_rate" not in self.limits or self.exempt_reversals:
            return
        th = np.linspace(path.s_start, path.s_end, max(20 * np.asarray(theta).size, 2001))
        d = path.dq(th)
        for k in range(robot.n):
            jump = 2.0 * robot.coulomb[k]
            if jump <= self.limits["torque_rate"][k] * self.dt_c:
                continue
            sg = np.sign(d[:, k])
            nz = np.flatnonzero(sg != 0)
            flips = nz[1:][sg[nz[1:]] != sg[nz[:-1]]]
            if flips.size:
                raise InfeasiblePathError(
                    f"torque_rate_max: joint {robot.joint_names[k]} (#{k}) reverses at θ ≈ {th[flips[0]]:.6g}, where "
                    f"its Coulomb friction torque jumps by 2 F_c = {jump:.4g} N·m > torque_rate_max × Δt_c = "
                    f"{self.limits['torque_rate'][k] * self.dt_c:.4g} N·m within one {1e3 * self.dt_c:g} ms sample "
                    f"period; no time law along this path meets the sampled torque-rate limit (that joint needs "
                    f"torque_rate_max ≥ {jump / self.dt_c:.4g}: give one per joint; or plan on a path on which it "
                    f"does not reverse; a controller profile can also exempt these steps, coulomb_reversals = "
                    f"\"exempt\", docs/controller.md)")

    # ------------------------------------------------------------------ rows
    def rows(self, coeffs: dict, theta, b_ref, scales: dict, nx: int, rest_start: bool, rest_end: bool):
        """The linear rows lo ≤ G x ≤ hi (x = (b, r, a, t) of `TimeOptimalProblem`) around b_ref, with the
        allowed rate of grid point i and joint k multiplied by scales[kind][i, k]; plus the trust region."""
        theta = np.asarray(theta, dtype=float)
        P = theta.size
        N = P - 1
        b_ref = np.maximum(np.asarray(b_ref, dtype=float), 0.0)
        sd_ub = (1.0 + self.trust) * np.sqrt(b_ref)
        # windows of grid points i..l that one sample period can contain (reference times, with margin for
        # the trust region): all their jumps fall into one finite difference
        t_ref = _times(theta, b_ref)
        l_max = np.searchsorted(t_ref, t_ref + (1.0 + 2.0 * self.trust) * self.dt_c, side="left") - 1
        l_max = np.clip(np.maximum(l_max, np.arange(P)), 0, N)
        wi, wl = [], []
        for d in range(int((l_max - np.arange(P)).max()) + 1):
            i = np.flatnonzero(l_max >= np.arange(P) + d)
            i = i[i + d <= N]
            wi.append(i)
            wl.append(i + d)
        wi, wl = np.concatenate(wi), np.concatenate(wl)
        # each window with the smooth rate of the interval before its first and after its last point
        pi = np.concatenate([wi, wl])                     # point whose smooth rate is used
        pj = np.concatenate([wi - 1, wl])                 # interval of that smooth rate
        w0 = np.concatenate([wi, wi])
        w1 = np.concatenate([wl, wl])
        ok = (pj >= 0) & (pj <= N - 1)
        pi, pj, w0, w1 = pi[ok], pj[ok], w0[ok], w1[ok]
        span = w1 - w0
        rows, cols, vals, los, his = [], [], [], [], []
        m0 = 0
        M = pi.size
        for kind, L in self.limits.items():
            co = coeffs[kind]
            jc_all = co["jump"] / self.dt_c
            # jump at point m: a_m − a_{m−1}; at the ends only from / to rest (a_{−1} = a_N = 0)
            m_all = np.arange(P)
            cn_all = np.where(((m_all < N) & ((m_all > 0) | rest_start))[:, None], jc_all, 0.0)   # × a_m
            cp_all = np.where(((m_all > 0) & ((m_all < N) | rest_end))[:, None], jc_all, 0.0)     # × −a_{m−1}
            sc = np.minimum(scales[kind][w0], scales[kind][w1])                                     # (M, n)
            for k in np.flatnonzero(np.isfinite(L)):
                Lik = L[k] * sc[:, k]
                alpha = (sd_ub[pi] * co["alpha"][pi, k] + co["za"][pi, k]) / Lik
                beta = (sd_ub[pi] * co["beta"][pi, k] + co["zb"][pi, k]) / Lik
                gamma = sd_ub[pi] * co["gamma"][pi, k] / Lik
                jr, jcol, jval = [], [], []
                for d in range(int(span.max()) + 1):
                    sel = np.flatnonzero(span >= d)
                    mm = w0[sel] + d
                    jr += [sel, sel]
                    jcol += [2 * P + np.minimum(mm, N - 1), 2 * P + np.maximum(mm - 1, 0)]
                    jval += [cn_all[mm, k] / Lik[sel], -cp_all[mm, k] / Lik[sel]]
                jr, jcol, jval = np.concatenate(jr), np.concatenate(jcol), np.concatenate(jval)
                for sgn in (1.0, -1.0):
                    # Σ jumps + sgn·smooth: … + sgn(α a_j + β b_i) ∈ [−1 − sgn γ, 1 − sgn γ]
                    r = m0 + np.arange(M)
                    rows += [m0 + jr, r, r]
                    cols += [jcol, 2 * P + pj, pi]
                    vals += [jval, sgn * alpha, sgn * beta]
                    los.append(-1.0 - sgn * gamma)
                    his.append(1.0 - sgn * gamma)
                    m0 += M
        # trust region b ≤ (1 + δ)² b_ref (makes θ̇ ≤ θ̇_ub, so the rows are conservative at grid points)
        r = m0 + np.arange(P)
        rows.append(r)
        cols.append(np.arange(P))
        vals.append(np.ones(P))
        los.append(np.full(P, -np.inf))
        his.append((1.0 + self.trust) ** 2 * np.maximum(b_ref, 0.0))
        m0 += P
        rows, cols, vals = (np.concatenate(v) for v in (rows, cols, vals))
        keep = vals != 0
        G = sp.csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(m0, nx))
        G.sum_duplicates()
        return G, np.concatenate(los), np.concatenate(his)

    # ------------------------------------------------------------------ check
    def preloaded(self, robot) -> np.ndarray:
        """(n,) bool: the joints whose Coulomb friction a drive loads at rest before a motion (`rest_torques`)."""
        if "torque_rate" not in self.limits:
            return np.zeros(robot.n, bool)
        return robot.coulomb > PRELOAD_ABOVE * self.limits["torque_rate"] * self.dt_c

    def rest_steps(self, robot, path) -> np.ndarray:
        """(2, n) the Coulomb friction F_c in the step from rest into the start and out of the end that the check
        counts (`rest_torques`): joints moving there and not `preloaded`; 0 elsewhere."""
        moving = np.abs(np.sign(path.dq(np.array([path.s_start, path.s_end]))))
        return moving * np.where(self.preloaded(robot), 0.0, robot.coulomb)

    def check_samples(self, robot, sample, rest_start: bool = True, rest_end: bool = True, direction=None) -> dict:
        """{kind: (ratios (M, n) of the sample steps, θ at the step's start (M,), θ at its end (M,), Worst)}
        from finite differences of the sampled q̈ and τ (step m: samples m → m+1; with rest_start / rest_end
        a sample at rest (q̈ = 0) Δt_c before the start / after the end, whose torque holds gravity — and the
        Coulomb friction of the motion next to it where the drive must load that at rest, `rest_torques`).
        With `exempt_reversals`, `direction` (the samples' q′) says where each joint's Coulomb term F_c sign(q′)
        changes between samples — along a motion only where it reverses — and the torque rate there leaves out
        that step."""
        t, qdd, tau, s = sample.t, sample.qdd, sample.tau, sample.s
        offset = np.zeros((1, robot.n))
        if self.exempt_reversals and direction is not None:
            flips = robot.coulomb * np.diff(np.sign(direction), axis=0)         # (M − 1, n): 0 but at reversals
            offset = np.concatenate([np.zeros((1, robot.n)), np.cumsum(flips, axis=0)])
            tau = tau - offset                                                 # (so the end's rest sample too)
        if rest_start or rest_end:
            rest = rest_torques(robot, sample, self.preloaded(robot)) - offset[[0, -1]]
            if rest_start:
                t = np.concatenate(([t[0] - self.dt_c], t))
                qdd = np.vstack([np.zeros(robot.n), qdd])
                tau = np.vstack([rest[0], tau])
                s = np.concatenate(([s[0]], s))
            if rest_end:
                t = np.concatenate((t, [t[-1] + self.dt_c]))
                qdd = np.vstack([qdd, np.zeros(robot.n)])
                tau = np.vstack([tau, rest[1]])
                s = np.concatenate((s, [s[-1]]))
        dt = np.diff(t)[:, None]
        out = {}
        for kind, L in self.limits.items():
            rate = np.diff(tau if kind == "torque_rate" else qdd, axis=0) / dt
            ratio = np.abs(rate) / L
            m, k = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
            w = Worst(kind, float(ratio[m, k]), int(k), float(t[m]), int(m), float(rate[m, k]), float(L[k]))
            out[kind] = (ratio, s[:-1], s[1:], w)
        return out

    @staticmethod
    def tighten(scales: dict, checked: dict, theta, tol: float, power: float = 1.0) -> int:
        """Lower the allowed rate at the grid points around every offending sample step by its measured
        ratio to the power `power` (all points from the start of the interval containing the step's start
        to the end of the interval containing its end). Returns the number of offending (step, joint)
        pairs."""
        P = np.asarray(theta).size
        count = 0
        for kind, (ratio, s0, s1, _) in checked.items():
            ms, ks = np.nonzero(ratio > 1.0 + tol)
            count += ms.size
            if ms.size == 0:
                continue
            f = np.clip(ratio[ms, ks] ** -power - 0.2 * tol, 0.3, 1.0)
            j0 = np.clip(np.searchsorted(theta, s0[ms], side="right") - 1, 0, P - 2)
            j1 = np.clip(np.searchsorted(theta, s1[ms], side="left"), 1, P - 1)
            for a, b_, k, fk in zip(j0, j1, ks, f):
                sl = slice(a, b_ + 1)
                scales[kind][sl, k] = np.minimum(scales[kind][sl, k], scales[kind][sl, k] * fk)
        return count


def ramp_profile(theta, g_start, g_end, L, rest) -> np.ndarray:
    """b along the fastest start from (stop at) rest that the jump rows allow (C5): θ̈ rising at
    k = min_k L_k / |g_k| at most, so θ̈ = k t, θ = k t³/6, b = (k t²/2)² = (k²/4)(6Δθ/k)^{4/3} at a
    distance Δθ from the rest end; inf where no end is at rest. With both ends at rest, also at most the
    rest-to-rest motion over the whole D = θ_N − θ_0 with |θ⃛| ≤ k (C5′, `_rest_to_rest`, k the smaller of the
    ends'): the ramp alone meets its mirror at D/2 with θ̈ still rising, 1.65× that motion's top speed. (g: jump
    coefficients of every limited (kind, joint) at the two ends, L their limits.)"""
    theta = np.asarray(theta, float)
    out = np.full(theta.size, np.inf)
    ks = []
    for end, g, on in ((0, g_start, rest[0]), (-1, g_end, rest[1])):
        g = np.abs(np.asarray(g, float))
        k = np.min(np.where(g > 0, L / np.where(g > 0, g, 1.0), np.inf))
        ks.append(k)
        if on and np.isfinite(k):
            d = np.abs(theta - theta[end])
            out = np.minimum(out, 0.25 * k * k * (6.0 * d / k) ** (4.0 / 3.0))
    k = min(ks)
    if rest[0] and rest[1] and np.isfinite(k) and theta[-1] > theta[0]:
        out = np.minimum(out, _rest_to_rest(np.minimum(theta - theta[0], theta[-1] - theta), theta[-1] - theta[0], k))
    return out


def _rest_to_rest(d: np.ndarray, D: float, k: float, samples: int = 2001) -> np.ndarray:
    """(C5′) θ̇² at distance d ≤ D/2 from the nearer end of the time-optimal rest-to-rest motion over D with
    |θ⃛| ≤ k: θ⃛ = +k on [0, τ], −k on [τ, 3τ], +k on [3τ, 4τ], τ = (D/(2k))^{1/3}, symmetric about t = 2τ (its
    top speed k τ² at D/2). θ(t) and θ̇(t) on the first half sampled finely, θ̇² read at d."""
    tau = (D / (2.0 * k)) ** (1.0 / 3.0)
    t = np.linspace(0.0, 2.0 * tau, samples)
    u, t1 = np.maximum(t - tau, 0.0), np.minimum(t, tau)
    th = k * t1 ** 3 / 6.0 + 0.5 * k * tau ** 2 * u + 0.5 * k * tau * u ** 2 - k * u ** 3 / 6.0
    sd = 0.5 * k * t1 ** 2 + k * tau * u - 0.5 * k * u ** 2
    return np.interp(np.minimum(d, 0.5 * D), th, sd * sd)
