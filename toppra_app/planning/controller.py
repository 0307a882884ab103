"""Torque-rate and jerk rows of the controller profile (`toppra_app.controller`) in the compiled
structure `socp.controller_problem.ControllerProblem` (docs/controller.md, equations (C1)–(C5)).

With θ̈ = a_j constant on interval j, q̈ and τ jump at grid point θ_i by (`limits.rates`, eq. (J))

    J_i = g_i (a_i − a_{i−1}),      g = q′ (jerk) or m̃ (torque rate),                           (C1)

a_{−1} = a_N = 0 at a rest end (the step from / to rest: smooth starts and stops), and change smoothly
next to it at the rate (eq. (S))

    S = θ̇ (α a_j + β b + γ) + ζ_a a_j + ζ_b b,     j = i − 1 (left) or i (right).              (C2)

A controller sampling every Δt_c sees the jump within one sample period. With the cap b_i ≤ b̄_i (7),
θ̇_i ∈ [0, √b̄_i] and S is linear in θ̇, so |S| is largest at θ̇ = √b̄_i or 0; with ā = (a_{i−1} + a_i)/2
both sides are S(ā) ± c_a (a_i − a_{i−1})/2 (c_a the coefficient of a), so

    G_i |a_i − a_{i−1}| + |S(ā)| ≤ L s_i,   G_i = |g_i| / w_i + |c_a| / 2                          (C3)

— four linear rows per (point, kind, joint, θ̇ end) — with w_i = Δt_c where the adjacent intervals last
≥ 2Δt_c, else half the shortest of them (several jumps then share a period and sum to ≤ Δt_c worth), and
s_i ≤ 1 a per-point factor lowered where the sampled check still finds an excess. The constant γ
(gravity's rate) makes (C3) infeasible at θ̇ = √b̄ when √b̄ |γ| > L, so the cap is lowered to

    √b̄_i ≤ GAMMA_SHARE · L s_i / |γ_i|,                                                        (C4)

and at a rest end, to the fastest ramp the jump rows allow (θ̈ rising at k = min L_k/|g_k|):

    b̄ ≤ (k²/4) (6 |θ − θ_end| / k)^{4/3}.                                                      (C5)

The first pass takes b̄ = (1 + FIRST_SLACK)² × the smallest of the coarse reachability profile's larger end
of each coarse interval, (C5) and (C7) b = (L/|β|)^{2/3}; a further pass (while the 1 ms samples break a
limit, a cap binds, or the smooth terms gave away more than `GAIN_MIN` of a binding limit or `MEAN_GAIN_MIN`
of the limits on average; at most `max_passes`) takes (1 + `GROW`)² × the cap where it bound and the
fixed-point estimate (C6) b̄^{1/3} b^{2/3} ≥ (1 + `TRUST`)² b elsewhere (`_next_cap`; the passes:
`controller_passes`). β and γ differ on the two sides of a spline
knot: the rows take their mean and half the difference as a margin (C3'). Only the groups that can
bind at a point are packed (`_initial_keep`); any other row a solution breaks is added and the problem
solved again (`add_broken`); rows at θ̇ = 0 only where the viscous terms matter.
"""

from __future__ import annotations

import numpy as np

from ..limits.rates import PRELOAD_ABOVE, RateLimits, ramp_profile
from ..socp.controller_problem import window_start
from ..socp.problem import UNUSED
from ..socp.stations import SLOT_SIZES
from .controller_passes import MARGIN, ControllerPasses

GAMMA_SHARE = 0.6            # (C4): share of the rate budget the gravity term may take at the cap
BROKEN = 1e-7                # rows added after a solve: those broken by more than this (normalised)
MAX_ADD_ROUNDS = 12          # solves per pass that add broken rows
D_RANGE = 1e-2              # z = D β (`_compute`): D_i = 1 / the expected β_i, from 1 to 1 / D_RANGE
H_SLACK = 2e-7               # every normalised bound lowered by this: twice the solver's feasibility tolerance
VISCOUS_SHARE = 0.02         # pack the θ̇ = 0 rows of (C3) where viscous terms may reach this share of L
FIRST_SLACK = 0.25           # the first cap: (1 + FIRST_SLACK)² × the coarse reachability profile
REST_FLOOR = 1.0 - PRELOAD_ABOVE   # a rest end's rows keep at least this share of L s_i after its Coulomb step


class ControllerRows(ControllerPasses):
    """The rate rows of one plan: coefficients at the grid points once, numbers per pass."""

    SETTLED_AFTER = None    # passes after which a plan within its limits stops (None: the rules of `after`)

    def __init__(self, profile, robot, path, theta, L: float, Bbar: float, sd_start: float, sd_end: float,
                 b_first, tol: float):
        self.profile, self.theta, self.L, self.Bbar, self.tol = profile, np.asarray(theta, float), L, Bbar, tol
        self.limits = profile.limits_for(robot)
        self.rates = RateLimits(robot, self.limits.get("torque_rate"), self.limits.get("jerk"), profile.dt,
                                exempt_reversals=profile.coulomb_reversals == "exempt")
        self.rates.check_path(robot, path, theta)
        sides = self.rates.sided_coefficients(robot, path, theta, (-1, 1))
        # one column per limited (kind, joint): arrays (P, G)
        cols = [(kind, int(k)) for kind, lim in self.limits.items() for k in np.flatnonzero(np.isfinite(lim))]
        self.groups = cols
        pick = lambda co, key: np.stack([co[kind][key][:, k] for kind, k in cols], axis=1)   # noqa: E731
        self.g, self.za, self.zb = (pick(sides[1], k) for k in ("jump", "za", "zb"))
        # the smooth rate's β, γ on the two sides of θ_i (they differ at spline knots, where q‴ jumps): the rows
        # take their mean, and half their difference as a margin (C3'); α is continuous on a C² path
        (bl, gl, al), (br, gr, ar) = ([pick(co, k) for k in ("beta", "gamma", "alpha")] for co in sides)
        self.al, self.be, self.ga = 0.5 * (al + ar), 0.5 * (bl + br), 0.5 * (gl + gr)
        self.dbe, self.dga = 0.5 * np.abs(br - bl), 0.5 * np.abs(gr - gl)
        self.be_sides, self.ga_sides = (bl, br), (gl, gr)                  # (the linear law's rows use each side)
        self.Lg = np.array([self.limits[kind][k] for kind, k in cols])
        steps = self.rates.rest_steps(robot, path)           # (2, n): the Coulomb friction in the steps from rest
        self.rest_step = np.stack([steps[:, k] if kind == "torque_rate" else np.zeros(2) for kind, k in cols], axis=1)
        self.visc = bool(np.any(self.za) or np.any(self.zb))
        self.E = 2 if self.visc else 1                      # θ̇ ends of (C3): √b̄ (and 0 with viscous terms)
        self.rest = (sd_start == 0.0 and profile.smooth_ends, sd_end == 0.0 and profile.smooth_ends)
        self.rest_check = (sd_start == 0.0, sd_end == 0.0)
        P = self.theta.size
        self.scales = {kind: np.ones((P, robot.n)) for kind in self.limits}
        self.K_all = len(cols) * self.E * 4
        self.keep = None                                    # rows packed (grows; `add_broken`)
        self.K, self.rounds, self.solves = 2, 0, 0
        ends = np.array([sd_start ** 2, sd_end ** 2])
        self.b_floor = np.zeros(P)
        self.b_floor[[0, -1]] = ends
        b_first = np.maximum(np.asarray(b_first, float), 0.0)
        # (C7): where the smooth rate's velocity term binds, θ̇ |β| b ≤ L holds up to b = (L / |β|)^{2/3}; a cap far
        # above that (the plain profile's) leaves the rows at θ̇ = √b̄ allowing only a creep (and the solver
        # once reported such a problem infeasible)
        be = np.abs(self.be) + self.dbe
        b_vel = np.min(np.where(be > 0, (self.Lg / np.where(be > 0, be, 1.0)) ** (2.0 / 3.0), np.inf), axis=1)
        self.cap = self._capped((1.0 + FIRST_SLACK) ** 2 * np.minimum(np.minimum(b_first, self._ramp()), b_vel))
        # |θ̈| the plan may reach near each point: the reachability profile's, over ±2 intervals, × 1.5 (`_initial_keep`)
        a_first = np.abs(np.diff(b_first) / (2.0 * np.diff(self.theta)))
        a_pt = np.maximum(np.concatenate(([0.0], a_first)), np.concatenate((a_first, [0.0])))
        pad = np.pad(a_pt, 2, mode="edge")
        self.a_ref = 1.5 * np.max(np.stack([pad[k:k + P] for k in range(5)]), axis=0)[:, None]
        self.passes, self.history, self.last, self._rows, self._values = 0, [], None, None, None
        self.best = None            # (law, plain check, rate check) of the shortest pass within the limits (`finished`)
        self.probe = True           # try each solve without iterative refinement first (`diagnose`) until that fails

    def probed(self, ok: bool) -> None:
        self.probe = self.probe and ok

    def reference(self, found: tuple, scale_b: float) -> tuple:
        """The tangent objective's first reference (θ̈ constant): the sweeps' profile `found` = (β, None) on the
        plain rows (`reachability.reference_profile`), at most the cap b̄ (in β = b / `scale_b`), which every
        solution keeps. At the plain profile the first certificate (`socp.tangent`) was 0.12–0.40 on the suite's
        dense paths, and their first pass took 2–3 solves; capped 0.11–0.28 and one solve fewer each (5 → 4, the
        iiwa's 3 → 2; 10 % less planning time, interleaved), durations within 0.006 %; the other suite paths the
        same solves within 0.0012 % (their first bound stays 0.03–0.3: a second solve either way). On 35 more
        dense noisy paths (four robots, 100–400 waypoints, noise 1e-5–1e-3) 135 → 127 solves, durations −0.22 …
        +0.16 % (the passes end elsewhere; two above +0.05 %); `study_hunt`'s 197 plans the same 604 solves,
        within ±0.032 %. Not every path gains: a built-in iiwa dense draw (`suite(["iiwa7", "ur5e"])`) stalls
        its re-weighting at 4e-4 and takes the time cones, 5 → 6 solves, +0.016 %."""
        return np.minimum(found[0], self.cap / scale_b), found[1]

    def _ramp(self) -> np.ndarray:
        """(C5) on the grid, from the jump coefficients at its ends."""
        return ramp_profile(self.theta, self.g[0], self.g[-1], self.Lg, self.rest)

    def _scale(self) -> np.ndarray:
        """(P, G) allowed rate L_k s_i of every group."""
        return self.Lg[None, :] * np.stack([self.scales[kind][:, k] for kind, k in self.groups], axis=1)

    def _row_bounds(self, w) -> np.ndarray:
        """(P, G) the rows' bound L_k s_i, less at a rest end the Coulomb friction F_c/w_i the step from or to rest
        also holds (`rest_step`: with a_0 ≥ 0 from rest and a ≤ 0 into it, |g Δa + F_c| ≤ |g| |Δa| + F_c, exact
        where m̃ and q′ agree in sign); at least `REST_FLOOR` of it (a lowered s_i meets the rest in passes)."""
        Ls = self._scale()
        out = Ls.copy()
        for e, i in ((0, 0), (1, -1)):
            if self.rest[e]:
                out[i] = np.maximum(Ls[i] - self.rest_step[e] / w[i], REST_FLOOR * Ls[i])
        return out

    # ------------------------------------------------------------------ caps
    def _capped(self, b_up: np.ndarray) -> np.ndarray:
        """b̄ with (C4) applied and never below the boundary speeds."""
        sq = np.sqrt(np.maximum(b_up, 0.0))
        g = np.abs(self.ga) + self.dga
        lim = GAMMA_SHARE * self._scale() / np.where(g > 0, g, 1.0)
        sq = np.minimum(sq, np.where(g > 0, lim, np.inf).min(axis=1))
        return np.maximum(sq ** 2, self.b_floor)

    # ------------------------------------------------------------------ numbers of (6), (7)
    def values(self) -> dict:
        """"p" (P·K·3,), "ph" (P·K,), "cap" (P,) of the packed rows, in the solver's scaled variables
        (β = b / (L² B̄)); K (`self.K`) the slot size of the structure to solve."""
        if self._values is None:
            if self._rows is None:
                self._rows = self._compute()
            p, hh, cap, G = self._rows
            if self.keep is None:
                self.keep = self._initial_keep(G)
            need = int(self.keep.sum(axis=1).max(initial=1))
            self.K = next((k for k in SLOT_SIZES if k >= need), need)
            order = np.argsort(~self.keep, axis=1, kind="stable")[:, :self.K]
            if order.shape[1] < self.K:
                order = np.pad(order, ((0, 0), (0, self.K - order.shape[1])), mode="edge")
            valid = np.arange(self.K)[None, :] < self.keep.sum(axis=1)[:, None]
            rows = np.arange(p.shape[0])[:, None]
            pk = np.where(valid[:, :, None], p[rows, order], 0.0)
            hk = np.where(valid, hh[rows, order], UNUSED)
            self._values = {"p": pk.reshape(-1), "ph": hk.reshape(-1), "cap": cap, "D": self._D}
        return self._values

    def _initial_keep(self, G: np.ndarray) -> np.ndarray:
        """Every jump row of (C3) bounds the same |a_i − a_{i−1}| at θ_i: the tightest group allows at most
        B_i = min_k L_k s_i / G_k. Group k can bind only if G_k B_i + S̄_k ≥ L_k s_i, with S̄_k a bound of its
        smooth rate at |a| ≤ the largest |θ̈| of the reachability profile (`a_ref`) and b ≤ b̄: only those
        are packed; `add_broken` adds any other row that a solution breaks."""
        Ls = self._scale()
        B = np.min(np.where(G > 0, Ls / np.where(G > 0, G, 1.0), np.inf), axis=1, keepdims=True)
        su = np.sqrt(self.cap)[:, None]
        S_ub = (su * np.abs(self.al) + np.abs(self.za)) * self.a_ref + (su * (np.abs(self.be) + self.dbe) +
                                                                        np.abs(self.zb)) * self.cap[:, None] + \
            su * (np.abs(self.ga) + self.dga)
        on = G * np.where(np.isfinite(B), B, 0.0) + S_ub >= (1.0 - MARGIN) * Ls
        keep = np.repeat(on[:, :, None], self.E * 4, axis=2)                         # (P, G, E·4)
        if self.E == 2:          # rows at θ̇ = 0 only where the viscous terms are a noticeable share of the limit
            visc = np.abs(self.za) * self.a_ref + np.abs(self.zb) * self.cap[:, None] >= VISCOUS_SHARE * Ls
            keep[:, :, 4:] &= visc[:, :, None]
        keep = keep.reshape(keep.shape[0], -1)
        return keep & (self._rows[1] < UNUSED)

    def add_broken(self, beta, delta=None) -> bool:
        """After a solve: add every left-out row the profile β (grid points, scaled) breaks;
        True if any was added (solve again) — at most `MAX_ADD_ROUNDS` times per pass."""
        self.solves += 1
        if self.rounds >= MAX_ADD_ROUNDS:
            return False
        p, hh = self._rows[:2]
        value = np.einsum("pkc,pc->pk", p, self._row_variables(beta, delta)) - hh
        new = (value > BROKEN) & ~self.keep & (hh < UNUSED)
        if not new.any():
            return False
        self.keep |= new
        self.rounds += 1
        self._values = None
        return True

    def _jump_window(self) -> np.ndarray:
        """(P,) w_i of (C3): a point whose adjacent intervals last ≥ 2Δt_c is alone in any sample period;
        else several may share one, and with w = h/2 their jumps sum to at most Δt_c worth (h: the shortest
        adjacent interval's time at θ̇ ≤ √b̄, a lower bound of the real one)."""
        dt_c, cap = self.profile.dt, self.cap
        top = np.sqrt(np.maximum(cap[:-1], cap[1:]))
        dth = np.diff(self.theta)
        t_lo = np.where(top > 0, dth / np.where(top > 0, top, 1.0), np.inf)
        h = np.minimum(np.concatenate(([np.inf], t_lo)), np.concatenate((t_lo, [np.inf])))
        return np.where(h >= 2.0 * dt_c, dt_c, 0.5 * h)

    def _row_variables(self, beta, delta) -> np.ndarray:
        """(P, 3) the variables each point's rows are written on: z = D β over its window (`window_start`)."""
        win = window_start(self.theta.size)[:, None] + np.arange(3)[None, :]
        return (self._D * np.asarray(beta, float))[win]

    def _compute(self):
        """All rows (C3) with the jump and both sides' smooth rates merged: with ā = (a_{i−1} + a_i)/2 the
        smooth rate on either side is S(ā) ± c_a (a_i − a_{i−1})/2, so |J|/w + |S_side| ≤ G |a_i − a_{i−1}| +
        |S(ā)| with G = |g|/w + |c_a|/2 — four rows ±G(a_i − a_{i−1}) ± S(ā) ≤ L s per group and θ̇ end.
        Returns p (P, K_all, 3), h (P, K_all), the caps in β and G (P, groups) at θ̇ = √b̄."""
        theta, L, Bbar = self.theta, self.L, self.Bbar
        P = theta.size
        N = P - 1
        cap = self.cap
        su = np.sqrt(cap)[:, None]
        dth = np.diff(theta)
        w = self._jump_window()
        i = np.arange(P)
        jump_on = ((i > 0) | self.rest[0]) & ((i < N) | self.rest[1])      # none at a moving end
        Ls = self._row_bounds(w)
        out_p, out_h, G1 = [], [], None
        for e in range(self.E):                                          # θ̇ = √b̄, then θ̇ = 0
            s_e = su if e == 0 else 0.0 * su
            ca = s_e * self.al + self.za
            Ab = s_e * self.be + self.zb
            Ac = s_e * self.ga
            db, dc = s_e * self.dbe, s_e * self.dga                      # (C3'): the two sides' difference
            G = np.where(jump_on[:, None], np.abs(self.g) / w[:, None], 0.0) + 0.5 * np.abs(ca)
            if e == 0:
                G1 = G
            for s1 in (1.0, -1.0):
                for s2 in (1.0, -1.0):
                    c_next = s1 * G + 0.5 * s2 * ca                          # × a_i
                    c_prev = -s1 * G + 0.5 * s2 * ca                         # × a_{i−1}
                    # ends: a_{−1} = a_N = 0 at rest; at a moving end the missing a is the present one
                    if self.rest[0]:
                        c_prev[0] = 0.0
                    else:
                        c_next[0], c_prev[0] = c_next[0] + c_prev[0], 0.0
                    if self.rest[1]:
                        c_next[N] = 0.0
                    else:
                        c_prev[N], c_next[N] = c_prev[N] + c_next[N], 0.0
                    out_p.append((c_prev, c_next, s2 * Ab + db))
                    out_h.append(Ls - s2 * Ac - dc)
        # (P, G, E·4) ordered group-major, then to β: a_{i−1} = LB̄(β_i − β_{i−1})/(2Δσ_{i−1}), a_i likewise
        c_prev = np.stack([x[0] for x in out_p], axis=2).reshape(P, -1)
        c_next = np.stack([x[1] for x in out_p], axis=2).reshape(P, -1)
        c_b = np.stack([x[2] for x in out_p], axis=2).reshape(P, -1) * (L * L * Bbar)
        hh = np.stack(out_h, axis=2).reshape(P, -1)
        dsig = dth / (theta[-1] - theta[0])
        inv_prev = np.concatenate(([0.0], L * Bbar / (2.0 * dsig)))[:, None]
        inv_next = np.concatenate((L * Bbar / (2.0 * dsig), [0.0]))[:, None]
        c_prev, c_next = c_prev * inv_prev, c_next * inv_next
        off = i - window_start(P)
        p = np.zeros((P, c_b.shape[1], 3))
        p[i, :, off] = (-c_next + c_prev + c_b)[i]
        p[i[:-1], :, off[:-1] + 1] = c_next[:-1]
        p[i[1:], :, off[1:] - 1] = -c_prev[1:]
        # rows on z = D β (ControllerProblem (8)), D_i = 1 / (β expected at θ_i: the cap), each divided by its
        # largest coefficient
        cap_beta = np.where(np.isfinite(cap), cap / (L * L * Bbar), UNUSED)
        expect = np.minimum(cap_beta, 1e6)
        D = 1.0 / np.clip(expect, D_RANGE, 1.0)
        win = window_start(P)[:, None] + np.arange(3)[None, :]
        p = p / D[win][:, None, :]
        size = np.abs(p).max(axis=2)
        used = size > 1e-14 * np.maximum(np.abs(hh), 1.0)
        scale = np.where(used, size, 1.0)
        p = np.where(used[:, :, None], p / scale[:, :, None], 0.0)
        hh = np.where(used, hh / scale - H_SLACK, UNUSED)     # (the solver meets rows to ~1e-7 absolute)
        self._D = D
        return p, hh, cap_beta, G1


def controller_rows(profile, robot, path, theta, L: float, Bbar: float, law0, sd_start: float, sd_end: float,
                    tol: float, cls=None) -> ControllerRows:
    """The rate rows of the controller profile for one plan, first capped by the coarse reachability
    profile `law0`'s larger value on each coarse interval (or, without one, 4× the reference speed);
    `cls`: `ControllerRows` (default) or `controller_linear.LinearControllerRows`."""
    if law0 is not None:                       # the larger end of the coarse interval holding each point
        ct, cb = law0.theta, law0.b
        j = np.clip(np.searchsorted(ct, theta, side="right") - 1, 0, ct.size - 2)
        b_first = np.maximum(cb[j], cb[j + 1])
    else:
        b_first = np.full(theta.size, 4.0 * Bbar * L ** 2)
    return (cls or ControllerRows)(profile, robot, path, theta, L, Bbar, sd_start, sd_end, b_first, tol)
