"""The controller profile's rate rows when θ̈ is linear and continuous per interval (`time_law="linear"`,
`trajectory.TimeLaw` with d): no jumps of q̈ or τ at the grid points, so no staircase.

With ā_j = (b_{j+1} − b_j)/(2Δθ_j), d_j the change of θ̈ across interval j and a_i the (continuous)
θ̈ at grid point i, the torque changes at θ_i on the side σ of the interval j_σ (left: i − 1, right: i) at

    S_σ = θ̇ (m̃ θ̈′_σ + α a_i + β_σ b_i + γ_σ) + ζ_a a_i + ζ_b b_i,     θ̈′_σ = d_{j_σ}/Δθ_{j_σ}     (L1)

(α = m̃′ + 2c̃, β_σ = c̃′ and γ_σ = d̃′ one-sided: `limits.rates`, eq. (S) with the jerk term m̃ θ⃛ =
m̃ θ̈′ θ̇ added), and q̈ likewise with m̃ → q′, α → 3q″, β → q‴. Only the step from rest into the first
sample and back to rest after the last remains a jump, (C1) with a_{−1} = a_{N+1} = 0:

    |g_i a_i| / w_i + |S_σ| ≤ L s_i        (i = 0 or N at a rest end; elsewhere |S_σ| ≤ L s_i)          (L2)

As for the constant law (docs/controller.md) θ̇ is bounded by the cap √b̄_i, so each row holds at θ̇ =
√b̄_i and (with viscous terms) θ̇ = 0, and the rows are linear in (β_{i−1}, β_i, β_{i+1}, δ_{i−1}, δ_i):
a_i = ā_i − d_i/2 (a_N = ā_{N−1} + d_{N−1}/2). They are written on z = D β and δ in the slots of
`ControllerProblem(..., linear=True)`; the passes, caps (C4)–(C7) and the sampled check are those of
`ControllerRows`.
"""

from __future__ import annotations

import numpy as np

from ..socp.controller_problem import window_start
from ..socp.problem import UNUSED
from .controller import D_RANGE, H_SLACK, MARGIN, VISCOUS_SHARE, ControllerRows


class LinearControllerRows(ControllerRows):
    """`ControllerRows` for the linear law: rows (L1)–(L2), per point, group, side, θ̇ end and sign."""

    # a third pass moved the duration by ≤ 0.06 % on the benchmark suite's paths (it can also lengthen it:
    # the caps move), for a third more solves
    SETTLED_AFTER = 2

    def _compute(self):
        theta, L, Bbar, cap = self.theta, self.L, self.Bbar, self.cap
        P = theta.size
        N = P - 1
        su = np.sqrt(cap)[:, None]
        dsig = np.diff(theta) / (theta[-1] - theta[0])
        w = self._jump_window()
        i = np.arange(P)
        jump = np.zeros(P, bool)
        jump[0], jump[N] = self.rest[0], self.rest[1]
        Ls = self._row_bounds(w)
        G_ = len(self.groups)
        LB = L * Bbar
        inv = 0.5 / dsig                                                   # ā_j = L B̄ inv_j (β_{j+1} − β_j)
        # a_i on (β_{i−1}, β_i, β_{i+1}, δ_{i−1}, δ_i) / (L B̄): interval i's form, interval N − 1's at i = N
        A = np.zeros((P, 5))
        A[:N, 1], A[:N, 2], A[:N, 4] = -inv, inv, -0.5
        A[N, 0], A[N, 1], A[N, 3] = -inv[-1], inv[-1], 0.5
        A *= LB
        coef, hh = [], []
        for e in range(self.E):                                            # θ̇ = √b̄, then θ̇ = 0
            s_e = su if e == 0 else 0.0 * su
            ca = s_e * self.al + self.za                                   # × a_i   (P, G)
            for side in (0, 1):                                            # left (interval i − 1), right (i)
                on = (i >= 1) if side == 0 else (i <= N - 1)
                cb = s_e * self.be_sides[side] + self.zb                   # × b_i
                cc = s_e * self.ga_sides[side]                             # constant
                # θ̈′ = d_j/Δθ_j = B̄ δ_j/Δσ_j on δ_{i−1} (left) or δ_i (right); the missing side's is unused
                dj = np.concatenate(([1.0], dsig)) if side == 0 else np.concatenate((dsig, [1.0]))
                cd = s_e * self.g * (Bbar / dj)[:, None]
                G = np.where(jump[:, None], np.abs(self.g) / w[:, None], 0.0)
                for s1 in (1.0, -1.0):
                    for s2 in (1.0, -1.0):
                        c = np.zeros((P, G_, 5))
                        c += (s2 * ca + s1 * G)[:, :, None] * A[:, None, :]
                        c[:, :, 1] += s2 * cb * (L * L * Bbar)
                        c[:, :, 3 + side] += s2 * cd
                        used = on & ((s1 > 0) | jump)                      # without a jump s1 duplicates
                        coef.append(np.where(used[:, None, None], c, 0.0))
                        hh.append(np.where(used[:, None], Ls - s2 * cc, UNUSED))
        c = np.stack(coef, axis=2).reshape(P, -1, 5)                       # (P, G·E·8, 5), group-major
        hh = np.stack(hh, axis=2).reshape(P, -1)
        # columns: (β_{i−1}, β_i, β_{i+1}) → the window c_i = clip(i − 1, 0, N − 2) of z, δ_{i−1}, δ_i → of δ
        off = i - window_start(P)
        p = np.zeros((P, c.shape[1], 5))
        for m in range(3):
            k = off + m - 1                                                # β_{i−1+m} at window position k
            ok = (k >= 0) & (k <= 2)
            p[i[ok], :, k[ok]] += c[ok, :, m]
        for m in range(2):
            k = off + m - 1                                                # δ_{i−1+m} at δ window position
            ok = (k >= 0) & (k <= 1) & (i - 1 + m >= 0) & (i - 1 + m <= N - 1)
            p[i[ok], :, 3 + k[ok]] += c[ok, :, 3 + m]
        cap_beta = np.where(np.isfinite(cap), cap / (L * L * Bbar), UNUSED)
        D = 1.0 / np.clip(np.minimum(cap_beta, 1e6), D_RANGE, 1.0)
        win = window_start(P)[:, None] + np.arange(3)[None, :]
        p[:, :, :3] = p[:, :, :3] / D[win][:, None, :]
        size = np.abs(p).max(axis=2)
        used = (size > 1e-14 * np.maximum(np.abs(hh), 1.0)) & (hh < UNUSED)
        scale = np.where(used, size, 1.0)
        p = np.where(used[:, :, None], p / scale[:, :, None], 0.0)
        hh = np.where(used, hh / scale - H_SLACK, UNUSED)
        self._D = D
        Gk = np.abs(self.g)                                               # `_initial_keep`: θ⃛ term per group
        return p, hh, cap_beta, Gk

    def _initial_keep(self, G: np.ndarray) -> np.ndarray:
        """Group k at θ_i can bind only if |g_k| B_i + S̄_k ≥ (1 − MARGIN) L_k s_i, B_i = min_k L_k s_i/|g_k|
        the θ⃛ at which the tightest group's jerk term alone reaches its limit, S̄_k a bound of the rest
        (as `ControllerRows._initial_keep`); all its sides, ends and signs are then packed."""
        Ls = self._scale()
        B = np.min(np.where(G > 0, Ls / np.where(G > 0, G, 1.0), np.inf), axis=1, keepdims=True)
        su = np.sqrt(self.cap)[:, None]
        beta = np.maximum(np.abs(self.be_sides[0]), np.abs(self.be_sides[1]))
        gamma = np.maximum(np.abs(self.ga_sides[0]), np.abs(self.ga_sides[1]))
        S_ub = (su * np.abs(self.al) + np.abs(self.za)) * self.a_ref + (su * beta + np.abs(self.zb)) * \
            self.cap[:, None] + su * gamma
        on = G * np.where(np.isfinite(B), B, 0.0) + S_ub >= (1.0 - MARGIN) * Ls
        per = self._rows[1].shape[1] // len(self.groups)
        keep = np.repeat(on[:, :, None], per, axis=2)
        if self.E == 2:
            visc = np.abs(self.za) * self.a_ref + np.abs(self.zb) * self.cap[:, None] >= VISCOUS_SHARE * Ls
            keep[:, :, per // 2:] &= visc[:, :, None]
        keep = keep.reshape(keep.shape[0], -1)
        return keep & (self._rows[1] < UNUSED)

    def _row_variables(self, beta, delta) -> np.ndarray:
        """(P, 5): z = D β over each point's window (`ControllerRows._row_variables`) and δ of its two
        intervals (`ControllerProblem`)."""
        dwin = window_start(self.theta.size)[:, None] + np.arange(2)[None, :]
        return np.concatenate([super()._row_variables(beta, None), np.asarray(delta, float)[dwin]], axis=1)

    def _lost(self, law) -> np.ndarray:
        """As `ControllerRows._lost`, with the linear law's node θ̈ and jerk terms."""
        theta, b = self.theta, np.maximum(law.b, 0.0)
        a = law.sdd_grid[:, None]
        slope = law.d / np.diff(theta)
        su, sd = np.sqrt(self.cap)[:, None], np.sqrt(b)[:, None]
        Ls = self._scale()
        lost = np.zeros_like(Ls)
        for side, sl in ((0, np.concatenate(([0.0], slope))), (1, np.concatenate((slope, [0.0])))):
            smooth = self.g * sl[:, None] + self.al * a + self.be_sides[side] * b[:, None] + self.ga_sides[side]
            value = np.abs(su * smooth + self.za * a + self.zb * b[:, None])
            near = value >= (1.0 - MARGIN) * Ls
            lost = np.maximum(lost, np.where(near, np.maximum(su - sd, 0.0) * np.abs(smooth) / Ls, 0.0))
        return lost.max(axis=1, initial=0.0)
