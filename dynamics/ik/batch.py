"""Inverse kinematics of many targets or paths at once, Nicolato & Madrid's recursive sweeps (Section 5.1)
run side by side — one set of array operations for a joint's move in every problem — instead of one
problem after the other: `track_paths` (sample k of every path together; each sample still starts from
its own path's previous solution) and `solve_ik_batch` (independent targets, e.g. a cell's place poses).
Only the Python and numpy call overhead of a 3-D step, which dominates the one-problem loop, is shared.

Same method, same arithmetic: every array operation here is the one `nicolato._sweeps` applies to a
single problem, element by element (4×4 products, z × r, the paper's step eq. 21 or the exact sinusoid
step, the penalty eq. 23–24, the stall and slow tests), so each result is bit for bit `track_path`'s or
`solve_ik`'s (tests/test_ik_batch.py), on any CPU: both sides use only +, −, ×, ÷ and √ (correctly
rounded), the same libm calls (`_each`, not numpy's own SIMD arctan2, sin, cos) and the same BLAS matrix
products (numpy's matmul calls gemm / gemv once per matrix of a stack); dot products and norms of
3-vectors are written out (`common._dot3`), as BLAS's ddot fuses multiply-adds on some CPUs only. The few
problems the sweeps leave outside the tolerance are finished one by one, by the same Newton steps.
Covered: pose targets, no velocity bound (and the penalty with the paper's step only); anything else is
handed to `track_path` / `solve_ik` one by one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .common import (_EYE4, TWO_PI, IKError, IKResult, TrackResult, _as_q, _as_starts, _Chain, _end_pose, _norm3,
                     _on_limits, _parse_targets, _rot_angle, _target_array)
from ..checks import short_repr
from .dls import _dls_steps
from .nicolato import _prepared, _solve, _sweeps, _weight
from .tracking import SWEEPS_BEFORE_POLISH, _track_options, track_path


def track_paths(robot, paths, q0, frame: str | None = None, *, method: str = "recursive", dt: float | None = None,
                qd_max=None, penalty: bool = False, tol_pos: float = 1e-5, tol_rot: float | None = None,
                max_sweeps: int = 500, rot_weight: float = 0.2, step: str = "paper", newton_steps: int = 30,
                polish_after: int = SWEEPS_BEFORE_POLISH, gain: float = 100.0, q_min=None, q_max=None,
                predict: bool = False, stop_at_failure: bool = False) -> list[TrackResult]:
    """`track_path(robot, targets, q0, frame, ...)` for every array of targets in `paths` (a list, each
    (N_i, 4, 4) or (N_i, 3)), all from the same start `q0`: a list of `TrackResult`, equal to the one-path
    results (with ``stop_at_failure`` a path stops at its first sample not reached, the others go on). The
    options are `track_path`'s, checked once, in its words; poses with the paper's step and no velocity bound
    are tracked side by side, anything else path by path."""
    args = dict(method=method, dt=dt, qd_max=qd_max, penalty=penalty, tol_pos=tol_pos, tol_rot=tol_rot,
                max_sweeps=max_sweeps, rot_weight=rot_weight, step=step, newton_steps=newton_steps,
                polish_after=polish_after, gain=gain, q_min=q_min, q_max=q_max, predict=predict,
                stop_at_failure=stop_at_failure)
    tol_rot, lo, hi, vmax_dt = _track_options(robot, **args)
    q = _as_q(robot, q0)
    if isinstance(paths, np.ndarray) and paths.ndim in (2, 3) and paths.shape[1:] in ((3,), (4, 4)):
        raise IKError(f"paths: expected a list of paths, got one path of shape {paths.shape} (one path? pass [path])")
    if isinstance(paths, (str, bytes, dict)) or not isinstance(paths, Iterable) \
            or (isinstance(paths, np.ndarray) and paths.ndim == 0):
        raise IKError(f"paths: expected a list of paths (N, 3) or (N, 4, 4), got {short_repr(paths)}")
    paths = [_target_array(f"paths[{i}]", p) for i, p in enumerate(paths)]
    parsed = [_parse_targets(f"paths[{i}]", p) for i, p in enumerate(paths)]
    if method != "recursive" or step != "paper" or vmax_dt is not None or len(paths) < 2 \
            or any(p.ndim != 3 for p in paths):
        return [track_path(robot, p, q0, frame, **args) for p in paths]
    chain = _Chain(robot, frame)
    L2 = float(rot_weight) ** 2
    q = np.tile(_on_limits(chain, q, lo, hi), (len(paths), 1))
    lengths = np.array([len(p) for p in paths])
    out = [dict(q=np.empty((n, robot.n)), pe=np.zeros(n), re=np.zeros(n), sw=np.zeros(n, int), ns=np.zeros(n, int),
                ok=np.zeros(n, bool)) for n in lengths]
    first = min(int(polish_after), max_sweeps) if newton_steps > 0 else max_sweeps
    stopped = np.zeros(len(paths), bool)
    for k in range(int(lengths.max())):
        idx = np.flatnonzero((lengths > k) & ~stopped)
        if idx.size == 0:
            break
        if predict and k >= 2:
            start = np.clip(2.0 * q[idx] - np.array([out[b]["q"][k - 2] for b in idx]), lo, hi)
        else:
            start = q[idx].copy()
        p_d = np.array([parsed[b][k][0] for b in idx])
        R_d = np.array([parsed[b][k][1] for b in idx])
        Q, e_p, e_r, sweeps, _ = _sweeps_batch(chain, start.copy(), p_d, R_d, L2, (tol_pos, tol_rot), first,
                                               penalty, lo, hi)
        for i, b in enumerate(idx):
            qb, pe, re, sw, ns = Q[i], float(e_p[i]), float(e_r[i]), int(sweeps[i]), 0
            ok = pe <= tol_pos and re <= tol_rot
            if not ok and newton_steps > 0:          # `nicolato._solve`: the Newton polish, then the sweeps on
                qb, pe, re, ns, ok = _dls_steps(robot, chain, qb, p_d[i], R_d[i], None, tol_pos=tol_pos,
                                                tol_rot=tol_rot, max_steps=newton_steps, damping=1e-4, q_min=lo,
                                                q_max=hi)
                if not ok:
                    qb, pe, re, s2, _ = _sweeps(chain, qb, p_d[i], R_d[i], L2, tol_pos=tol_pos, tol_rot=tol_rot,
                                                max_sweeps=max(max_sweeps - sw, 0), step="paper", q_start=start[i],
                                                use_penalty=penalty, q_min=lo, q_max=hi)
                    sw += s2
                    ok = pe <= tol_pos and re <= tol_rot
            q[b] = qb
            o = out[b]
            o["q"][k], o["pe"][k], o["re"][k], o["sw"][k], o["ns"][k], o["ok"][k] = qb, pe, re, sw, ns, ok
            if stop_at_failure and not ok:            # as `track_path`: the rest of this path is not solved
                stopped[b] = True
                o["q"][k + 1:], o["pe"][k + 1:], o["re"][k + 1:] = qb, np.nan, np.nan
    return [TrackResult(o["q"], o["pe"], o["re"], o["sw"], o["ok"], o["ns"]) for o in out]


def solve_ik_batch(robot, targets, starts, frame: str | None = None, *, tol_pos: float = 1e-6, tol_rot: float = 1e-6,
                   max_sweeps: int = 500, rot_weight: float = 0.2, step: str = "exact", qd_max=None,
                   dt: float | None = None, penalty: bool = False, newton_steps: int = 30, newton_switch: float = 1e-3,
                   newton_slow: float | None = 0.9, damping: float = 1e-4, q_min=None, q_max=None,
                   polish_after: int | None = None) -> list[IKResult]:
    """`solve_ik(robot, targets[i], starts[i], frame, ...)` for every i, the sweeps side by side: a list of
    `IKResult`, equal to the one-by-one results (a velocity bound, the penalty, ``polish_after`` or a position
    target: solved one by one). ``targets``: a list of positions (3,) or poses (4, 4), or one array (k, 3) or
    (k, 4, 4); ``starts``: one start per target, (k, n). The options are `solve_ik`'s, checked once, in its words."""
    chain, lo, hi, vmax_dt = _prepared(robot, frame, step=step, tol_pos=tol_pos, tol_rot=tol_rot,
                                       max_sweeps=max_sweeps, rot_weight=rot_weight, qd_max=qd_max, dt=dt,
                                       penalty=penalty, newton_steps=newton_steps, newton_switch=newton_switch,
                                       newton_slow=newton_slow, damping=damping, q_min=q_min, q_max=q_max,
                                       polish_after=polish_after)
    parsed = _parse_targets("targets", targets)
    q = _on_limits(chain, _as_starts(robot, starts, len(parsed)), lo, hi)
    L2 = float(rot_weight) ** 2
    if vmax_dt is not None or penalty or polish_after is not None or len(parsed) < 2 \
            or any(R is None for _, R in parsed):
        return [_solve(chain, q[i].copy(), p, R, tol_pos=tol_pos, tol_rot=tol_rot, max_sweeps=max_sweeps, L2=L2,
                       step=step, vmax_dt=vmax_dt, penalty=penalty, newton_steps=newton_steps,
                       newton_switch=newton_switch, newton_slow=newton_slow, damping=damping, q_min=lo, q_max=hi,
                       polish_after=polish_after) for i, (p, R) in enumerate(parsed)]
    p_d, R_d = np.array([p for p, _ in parsed]), np.array([R for _, R in parsed])
    if newton_steps > 0:                       # `nicolato._solve`: sweeps to the switch radius or until slow
        tol, slow = (max(tol_pos, newton_switch), max(tol_rot, newton_switch)), newton_slow
    else:
        tol, slow = (tol_pos, tol_rot), None
    Q, e_p, e_r, sweeps, status = _sweeps_batch(chain, q.copy(), p_d, R_d, L2, tol, max_sweeps, False, lo, hi,
                                                step=step, slow_ratio=slow)
    out = []
    for i in range(len(parsed)):
        qi, pe, re, total, nsteps, st = Q[i], float(e_p[i]), float(e_r[i]), int(sweeps[i]), 0, status[i]
        ok = pe <= tol_pos and re <= tol_rot
        if not ok and newton_steps > 0:        # then the Newton steps, then the sweeps to the end
            qi, pe, re, nsteps, ok = _dls_steps(robot, chain, qi, p_d[i], R_d[i], None, tol_pos=tol_pos,
                                                tol_rot=tol_rot, max_steps=newton_steps, damping=damping, q_min=lo,
                                                q_max=hi)
            if not ok:
                qi, pe, re, s2, st = _sweeps(chain, qi, p_d[i], R_d[i], L2, tol_pos=tol_pos, tol_rot=tol_rot,
                                             max_sweeps=max(max_sweeps - total, 0), step=step, q_start=q[i],
                                             q_min=lo, q_max=hi)
                total += s2
                ok = pe <= tol_pos and re <= tol_rot
        out.append(IKResult(q=qi, success=bool(ok), pos_err=pe, rot_err=re, sweeps=total, newton_steps=nsteps,
                            status="converged" if ok else st))
    return out


def _transforms(chain: _Chain, k: int, qk: np.ndarray) -> np.ndarray:
    """`_Chain.joint_transform` of joint k at every value of qk (B,): (B, 4, 4)."""
    if chain.prismatic[k]:
        return _EYE4 + qk[:, None, None] * chain._K[k]
    return (_EYE4 + _each(math.sin, qk)[:, None, None] * chain._K[k]
            + (1.0 - _each(math.cos, qk))[:, None, None] * chain._K2[k])


def _tails(chain: _Chain, q: np.ndarray) -> list:
    """`_Chain.tails` of every row of q (B, n): per chain joint (B, 4, 4)."""
    m = len(chain.joints)
    S = [None] * m
    T = _transforms(chain, m - 1, q[:, chain.joints[m - 1]]) @ chain.T_end
    S[m - 1] = T
    for k in range(m - 1, 0, -1):
        T = _transforms(chain, k - 1, q[:, chain.joints[k - 1]]) @ (chain.P[k] @ T)
        S[k - 1] = T
    return S


def _each(f, *xs: np.ndarray) -> np.ndarray:
    """The `math` function f (libm, as the one-problem code calls it) of every element of xs. Not numpy's
    ufunc: numpy has its own SIMD loops (its arctan2 on AVX-512 CPUs differs from libm's in the last bit)."""
    return np.array(list(map(f, *map(np.ndarray.tolist, xs))), dtype=float)


def _rot_angles(Ra: np.ndarray, Rb: np.ndarray) -> np.ndarray:
    """`common._rot_angle` of every pair (B, 3, 3): the squares by Python's ** as there (libm's pow, which
    is not always x·x)."""
    M = Ra.transpose(0, 2, 1) @ Rb
    a, b, c = (M[:, 2, 1] - M[:, 1, 2]).tolist(), (M[:, 0, 2] - M[:, 2, 0]).tolist(), (M[:, 1, 0] - M[:, 0, 1]).tolist()
    s = np.array([0.5 * math.sqrt(x ** 2 + y ** 2 + z ** 2) for x, y, z in zip(a, b, c)])
    return _each(math.atan2, s, 0.5 * (M[:, 0, 0] + M[:, 1, 1] + M[:, 2, 2] - 1.0))


def _rot_logs(R: np.ndarray) -> np.ndarray:
    """`common._rot_log` of every rotation (B, 3, 3); the rare near-zero angles by `_rot_log` itself."""
    from .common import _rot_log
    x, y, z = 0.5 * (R[:, 2, 1] - R[:, 1, 2]), 0.5 * (R[:, 0, 2] - R[:, 2, 0]), 0.5 * (R[:, 1, 0] - R[:, 0, 1])
    s = np.sqrt(x * x + y * y + z * z)
    small = s < 1e-9
    f = _each(math.atan2, s, 0.5 * (R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2] - 1.0)) / np.where(small, 1.0, s)
    out = np.stack([x * f, y * f, z * f], axis=1)
    for i in np.flatnonzero(small):
        out[i] = _rot_log(R[i])
    return out


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot product of (B, 3) arrays, rounded as `common._dot3`."""
    return a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2]


def _sinusoid(z, o, p, R, p_d, R_d, L2: float):
    """(k₁, k₂) of the exact step's h(Δ) = k₀ + k₁ cos Δ + k₂ sin Δ (`nicolato._step_problem`), row-wise."""
    r = p - o
    u = np.stack([z[:, 1] * r[:, 2] - z[:, 2] * r[:, 1], z[:, 2] * r[:, 0] - z[:, 0] * r[:, 2],
                  z[:, 0] * r[:, 1] - z[:, 1] * r[:, 0]], axis=1)
    d = p_d - o
    k1 = -2.0 * _dot(d, r - _dot(z, r)[:, None] * z)
    k2 = -2.0 * _dot(d, u)
    M = R @ R_d.transpose(0, 2, 1)
    zMz = _dot((z[:, None, :] @ M)[:, 0, :], z)
    Ao = (M[:, 0, 0] + M[:, 1, 1] + M[:, 2, 2]) - zMz
    Bo = (z[:, 0] * (M[:, 1, 2] - M[:, 2, 1]) + z[:, 1] * (M[:, 2, 0] - M[:, 0, 2])
          + z[:, 2] * (M[:, 0, 1] - M[:, 1, 0]))
    return k1 - L2 * Ao, k2 - L2 * Bo


def _sinusoid_mins(k1, k2, lo, hi) -> np.ndarray:
    """`nicolato._sinusoid_min` row-wise: the minimiser nearest to 0 inside [lo, hi], else the better end."""
    star = _each(math.atan2, -k2, -k1)
    best = np.full(len(star), np.nan)
    for cand in (star, star - TWO_PI, star + TWO_PI):            # in this order; a later one only if nearer
        take = (lo <= cand) & (cand <= hi) & (np.isnan(best) | (np.abs(cand) < np.abs(best)))
        best = np.where(take, cand, best)
    out = np.flatnonzero(np.isnan(best))                          # no minimiser inside: the better end
    if out.size:
        a, b, l, h = k1[out], k2[out], lo[out], hi[out]
        best[out] = np.where(a * _each(math.cos, l) + b * _each(math.sin, l)
                             <= a * _each(math.cos, h) + b * _each(math.sin, h), l, h)
    flat = (np.abs(k1) < 1e-300) & (np.abs(k2) < 1e-300)           # hypot(k₁, k₂) < 1e-300 needs both
    if flat.any():
        flat &= _each(math.hypot, k1, k2) < 1e-300
        best = np.where(flat, np.where((lo <= 0.0) & (0.0 <= hi), 0.0, np.where(np.abs(lo) < np.abs(hi), lo, hi)), best)
    return best


def _sweeps_batch(chain: _Chain, q: np.ndarray, p_d, R_d, L2: float, tol, max_sweeps: int, use_penalty: bool,
                  q_min, q_max, step: str = "paper", slow_ratio: float | None = None):
    """`nicolato._sweeps` (no velocity bound) of every row of q (B, n) towards its pose (p_d (B, 3),
    R_d (B, 3, 3)): (q, position errors, rotation errors, sweeps). A row leaves the batch when converged;
    the others end as `_sweeps` does (stalled, slow, or after `max_sweeps`), with the error of their end
    pose computed anew (`_end_pose`)."""
    tol_pos, tol_rot = tol
    B = q.shape[0]
    e_p, e_r = np.zeros(B), np.zeros(B)
    sweeps, stall = np.zeros(B, int), np.zeros(B, int)
    prev_h = np.full(B, np.inf)
    status = np.full(B, "max_iterations", dtype=object)
    act = np.arange(B)                         # rows still sweeping
    ended = []                                 # rows stopped short of the tolerance (stalled / max_sweeps)
    m = len(chain.joints)
    n_sweep = 0
    while act.size:
        qa, pa, Ra = q[act], p_d[act], R_d[act]
        tails = _tails(chain, qa)
        Tw = np.broadcast_to(_EYE4, (act.size, 4, 4))
        moved = np.zeros(act.size)
        for k in range(m):
            j = chain.joints[k]
            F = Tw @ chain.P[k]
            z = F[:, :3, :3] @ chain.axes[k]
            Te = F @ tails[k]
            if n_sweep == 0 and k == 0:                       # already there: 0 sweeps
                e0 = pa - Te[:, :3, 3]
                ep0 = np.sqrt(_dot(e0, e0))
                er0 = _rot_angles(Ra, Te[:, :3, :3])
                there = (ep0 <= tol_pos) & (er0 <= tol_rot)
                e_p[act[there]], e_r[act[there]] = ep0[there], er0[there]
                status[act[there]] = "converged"
                if max_sweeps <= 0:
                    ended += act[~there].tolist()
                if there.any() or max_sweeps <= 0:
                    keep = ~there if max_sweeps > 0 else np.zeros(act.size, bool)
                    act, qa, pa, Ra = act[keep], qa[keep], pa[keep], Ra[keep]
                    tails, Tw, moved, F, z, Te = ([t[keep] for t in tails], Tw[keep], moved[keep], F[keep], z[keep],
                                                  Te[keep])
                    if not act.size:
                        break
            lo, hi = q_min[j] - qa[:, j], q_max[j] - qa[:, j]           # `_limits_interval`
            clamp = lo > hi
            if clamp.any():
                lo = np.where(clamp, np.minimum(np.maximum(0.0, lo), hi), lo)
                hi = np.where(clamp, lo, hi)
            p, R = Te[:, :3, 3], Te[:, :3, :3]
            if chain.prismatic[k]:                            # `_step_problem`
                x = _dot(pa - p, z)
            elif step == "exact":
                x = None
                k1, k2 = _sinusoid(z, F[:, :3, 3], p, R, pa, Ra, L2)
            else:
                r = p - F[:, :3, 3]
                u = np.stack([z[:, 1] * r[:, 2] - z[:, 2] * r[:, 1], z[:, 2] * r[:, 0] - z[:, 0] * r[:, 2],
                              z[:, 0] * r[:, 1] - z[:, 1] * r[:, 0]], axis=1)
                k0 = _dot(u, u)
                k1 = -2.0 * _dot(pa - p, u)
                phi = _rot_logs(Ra @ R.transpose(0, 2, 1))
                k0 = k0 + L2
                k1 = k1 + -2.0 * L2 * _dot(phi, z)
                tiny = k0 <= 1e-300
                x = np.where(tiny, 0.0, -k1 / (2.0 * np.where(tiny, 1.0, k0)))
            if x is None:                                     # the exact step: `_sinusoid_min` on [lo, hi]
                if use_penalty and np.isfinite(q_min[j]) and np.isfinite(q_max[j]):
                    raise NotImplementedError("the velocity penalty with the exact step")   # not batched
                delta = _sinusoid_mins(k1, k2, lo, hi)
            elif use_penalty and np.isfinite(q_min[j]) and np.isfinite(q_max[j]):
                free = np.minimum(np.maximum(x, -math.pi), math.pi) if not chain.prismatic[k] else x
                towards = (qa[:, j] - 0.5 * (q_min[j] + q_max[j])) * free > 0
                if q_max[j] > q_min[j]:
                    w = np.minimum(np.maximum(4.0 * (q_max[j] - qa[:, j]) * (qa[:, j] - q_min[j])
                                              / ((q_max[j] - q_min[j]) * (q_max[j] - q_min[j])), 0.0), 1.0)
                else:
                    w = np.full(act.size, _weight(0.0, q_min[j], q_max[j]))
                inside = (lo <= free) & (free <= hi)
                delta = np.where(towards, np.minimum(np.maximum(free * w, lo), hi),
                                 np.where(inside, free, np.minimum(np.maximum(x, lo), hi)))
            else:
                delta = np.minimum(np.maximum(x, lo), hi)
            nonzero = delta != 0.0
            qa[:, j] = np.where(nonzero, qa[:, j] + delta, qa[:, j])
            moved = np.where(nonzero, np.maximum(moved, np.abs(delta)), moved)
            Tw = F @ _transforms(chain, k, qa[:, j])
        if not act.size:
            break
        q[act] = qa
        n_sweep += 1
        sweeps[act] = n_sweep
        Te = Tw @ chain.T_end
        e = pa - Te[:, :3, 3]
        ep = np.sqrt(_dot(e, e))
        er = _rot_angles(Ra, Te[:, :3, :3])
        done = (ep <= tol_pos) & (er <= tol_rot)
        e_p[act[done]], e_r[act[done]] = ep[done], er[done]
        status[act[done]] = "converged"
        h = ep * ep + L2 * 2.0 * (1.0 - _each(math.cos, er))
        ph = prev_h[act]
        stalls = (moved < 1e-15) | (h >= ph * (1.0 - 1e-12))
        stall[act] = np.where(stalls, stall[act] + 1, 0)
        stalled = ~done & stalls & (stall[act] >= 3)
        status[act[stalled]] = "stalled"
        stop = stalled | (~done & (n_sweep >= max_sweeps))
        if slow_ratio is not None and n_sweep >= 5:           # h shrinks by less than 1 − slow_ratio
            slow = ~done & ~stalled & (h > slow_ratio * ph)
            status[act[slow]] = "slow"
            stop |= slow
        prev_h[act] = h
        ended += act[stop].tolist()
        act = act[~done & ~stop]
    for i in ended:                                           # the end pose anew, as `_sweeps` does
        Te = _end_pose(chain, q[i])
        e_p[i] = _norm3(p_d[i] - Te[:3, 3])
        e_r[i] = _rot_angle(R_d[i], Te[:3, :3])
    return q, e_p, e_r, sweeps, status
