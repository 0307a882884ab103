"""The limits' rows at the stations of every interval, scaled and packed into the Parameters of the
compiled `problem.StationProblem`.

The limits (`limits`) give canonical rows lo ≤ A θ̈ + B θ̇² + C θ̇ ≤ hi at path samples. The problem
enforces them at *stations* of every interval j of the grid θ_0 < … < θ_N, with θ̈_j constant on the
interval and θ̇² linear in θ there, or θ̈ linear and θ̇² quadratic (`linear`, (4′) of `problem`; the
exact time law, `trajectory`):

* "interpolation" (default): its two ends θ_j, θ_{j+1} and its middle θ_{j+½} (θ̇² = the mean of the
  ends'); the middle catches what the ends miss where a limit curve bends between grid points;
* "collocation": its left end only (and the last interval also its right end).

Scaling (so the problem is the same on s ∈ [0, 10⁻³] and s ∈ [0, 10³], for a tiny motion or a long one):
σ = (θ − θ_0)/L ∈ [0, 1], L = θ_N − θ_0, and β = σ̇²/B̄ with B̄ a reference squared speed (`reference_speed`),
so θ̈ = L B̄ α with α = dβ/dσ / 2, θ̇² = L² B̄ β and θ̇ = L √B̄ √β. Each row, one-sided (α' a + β' b + γ' √b ≤ h),
becomes u β_j + w β_{j+1} + g_l r_j + g_r r_{j+1} ≤ h with α_j = (β_{j+1} − β_j)/(2Δσ_j) substituted and
√β at a station bounded by the cone variables r ≤ √β: at an end by its r, in the middle by
(r_j + r_{j+1})/2 ≤ √β_{j+½} (concavity of √). That is conservative because in ≤ form γ' ≤ 0 (the convex
side of viscous friction; the other side is a tangent, `limits`). Every row is then divided by its
largest coefficient.

Only rows that can bind are packed (`facets`: the edges of each station's feasible (α, β) polygon, √β
terms taken at the tangent point for this choice only); `violated_rows` finds any left-out row that the
solution breaks, and the planner adds it and solves again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .anchors import anchors
from .facets import binding_rows
from .problem import UNUSED
from ..trajectory import inside

# weight λ of β_j (left end) at each station of an interval; θ = θ_j + (1 − λ) Δθ_j, θ̇² = λ β_j + (1 − λ) β_{j+1}
SCHEMES = {"interpolation": (1.0, 0.75, 0.5, 0.25, 0.0), "collocation": (1.0, 0.0)}
SLOT_SIZES = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
# `pack`: a row's coefficient below this × its largest is rounding and set to 0 (it moves the row by < 1e-9 of
# β, far below the solver's tolerance). At the turn of an out-and-back path every q′ is 0 up to rounding, so the
# turn's row on the interval after it read u β_j + 2e-15 u β_{j+1} ≤ h (puma560, 3200 intervals): the sweeps of
# the first reference (`reachability`) met its bound on β_j exactly and took β_{j+1} ≤ (h − u β_j)/w, rounding
# over w — θ̇² 0.52 → 0.26 after the turn; every row of the next interval then had slack > `planner.FAR_SLACK`
# there and was left out of the first solve, and that linear program was unbounded
ROUNDING = 1e-9


# the free stations (left half, right half): off until a refinement round places one on the worst point
# of the between-grid check in its half of an interval (their rows are then packed); the ends and the
# middle are always on. (With all five on from the start the problem has ~5/3 the rows and solves ~20 %
# slower, for the same durations to ~1e-5 on the planner benchmark suite.)
FREE = {"interpolation": (1, 3), "collocation": ()}


def stations_on(moved: np.ndarray, scheme: str) -> np.ndarray:
    """(N, S) bool: the stations whose rows are packed; `moved` (N, 2): free stations placed so far."""
    on = np.ones((moved.shape[0], len(SCHEMES[scheme])), bool)
    free = FREE[scheme]
    if free:
        on[:, list(free)] = moved[:, :len(free)]
    return on


def default_lams(N: int, scheme: str) -> np.ndarray:
    """(N, S) λ of every station of every interval, as the scheme places them."""
    return np.tile(np.asarray(SCHEMES[scheme], dtype=float), (N, 1))


def inner_columns(scheme: str) -> np.ndarray:
    lam = np.asarray(SCHEMES[scheme])
    return np.flatnonzero((lam > 0) & (lam < 1))


def station_thetas(theta: np.ndarray, lams: np.ndarray, scheme: str) -> np.ndarray:
    """Path parameters where the rows are evaluated: the grid points, then the inner stations interval by
    interval (θ = θ_j + (1 − λ) Δθ_j)."""
    theta = np.asarray(theta, dtype=float)
    lam = lams[:, inner_columns(scheme)]
    mids = theta[:-1, None] + (1.0 - lam) * np.diff(theta)[:, None]
    return np.concatenate([theta, mids.reshape(-1)])


def middles(b_st: np.ndarray, P: int, scheme: str) -> np.ndarray:
    """(N,) the values at the interval middles of a quantity given at the stations (`station_thetas`, the
    default λ): at the middle station, or (a scheme without one) the mean of the ends."""
    lam = list(SCHEMES[scheme])
    if 0.5 in lam:
        return np.asarray(b_st)[station_index(P, scheme)[:, lam.index(0.5)]]
    return 0.5 * (np.asarray(b_st)[:P - 1] + np.asarray(b_st)[1:P])


def station_index(P: int, scheme: str) -> np.ndarray:
    """(N, S) sample index of every station of every interval into `station_thetas`."""
    lam = np.asarray(SCHEMES[scheme])
    j = np.arange(P - 1)
    k = len(inner_columns(scheme))
    cols, m = [], 0
    for x in lam:
        if x == 1.0:
            cols.append(j)
        elif x == 0.0:
            cols.append(j + 1)
        else:
            cols.append(P + j * k + m)
            m += 1
    return np.stack(cols, axis=1)


@dataclass
class OneSided:
    """All rows as α a + β b + γ √b ≤ h at the station samples, arrays (Ps, R), in scaled units
    (a → α, b → β, √b → √β), and where each came from: (block index, row, side)."""
    al: np.ndarray
    be: np.ndarray
    ga: np.ndarray
    h: np.ndarray
    origin: list


def one_sided(blocks, L: float, Bbar: float) -> OneSided:
    """Stack the blocks' rows (values applied, no equality rows) one-sided and scaled."""
    al, be, ga, hh, origin = [], [], [], [], []
    for k, blk in enumerate(blocks):
        if blk.equality:
            continue
        absent = None if blk.points is None else ~np.asarray(blk.points, bool)
        for side, has, sign, bound in (("hi", blk.has_hi, 1.0, blk.hi), ("lo", blk.has_lo, -1.0, blk.lo)):
            rows = np.flatnonzero(has)
            if rows.size == 0:
                continue
            h = sign * bound[:, rows]
            if absent is not None:
                h = np.where(absent[:, None], np.inf, h)
            al.append(sign * blk.A[:, rows] * (L * Bbar))
            be.append(sign * blk.B[:, rows] * (L * L * Bbar))
            ga.append(sign * blk.C[:, rows] * (L * np.sqrt(Bbar)))
            hh.append(h)
            origin += [(k, int(r), side) for r in rows]
    if not origin:
        raise ValueError("no limit rows")
    out = OneSided(np.hstack(al), np.hstack(be), np.hstack(ga), np.hstack(hh), origin)
    if (out.ga > 1e-12 * (1.0 + np.abs(out.be))).any():
        raise ValueError("a row has a concave √b term on its ≤ side (not convex)")
    out.ga = np.minimum(out.ga, 0.0)
    return out


def on_tangent(rows: OneSided, beta_ref: np.ndarray) -> OneSided:
    """`rows` with their √β terms on the tangent at `beta_ref` (β at the station samples),
    √β ≈ √β_ref/2 + β/(2√β_ref): linear rows (with γ' ≤ 0, optimistic by γ'(√β_ref/2 + β/(2√β_ref) − √β))."""
    sq = np.sqrt(np.maximum(beta_ref, 1e-12))[:, None]
    return OneSided(rows.al, rows.be + 0.5 * rows.ga / sq, np.zeros_like(rows.ga), rows.h - 0.5 * rows.ga * sq,
                    rows.origin)


def binding(rows: OneSided, beta_ref: np.ndarray, last: dict | None = None) -> np.ndarray:
    """(Ps, R) bool: rows that can bind at each station sample (√β taken on its tangent at beta_ref).
    Each sample's answer depends on its own rows only: with `last` (a dict this call fills) the samples
    whose rows equal those of the previous call are not tested again (a repair changes a few)."""
    finite = np.isfinite(rows.h)
    lin = on_tangent(rows, beta_ref)
    h = np.where(finite, lin.h, 1e300)
    if last and last["h"].shape == h.shape:
        new = ((lin.al != last["al"]) | (lin.be != last["be"]) | (h != last["h"])).any(axis=1)
        keep = last["keep"].copy()
        keep[new] = binding_rows(lin.al[new], lin.be[new], h[new]) & finite[new]
    else:
        keep = binding_rows(lin.al, lin.be, h) & finite
    if last is not None:
        last.update(al=lin.al, be=lin.be, h=h, keep=keep)
    return keep


def slot_count(keep: np.ndarray) -> int:
    need = int(keep.sum(axis=1).max(initial=1))
    for k in SLOT_SIZES:
        if k >= need:
            return k
    return need


def pack(rows: OneSided, keep: np.ndarray, theta: np.ndarray, lams: np.ndarray, scheme: str, K: int,
         on: np.ndarray | None = None, linear: bool = False) -> dict:
    """The Parameter values of `StationProblem(N, S·K)`: u, w, gl, gr, h (N·S·K,), span (N,); the rows of
    stations that are not `on` (N, S) stay unused slots. `linear` (θ̈ linear per interval, (4′) of
    `problem`): also v (N·S·K,), the coefficient of δ_j — at λ′ = 1 − λ of the interval θ̈ = ᾱ_j +
    δ_j (λ′ − ½) and β = λ β_j + (1 − λ) β_{j+1} − δ_j Δσ_j λ′ (1 − λ′) — and dsig (N,)."""
    P = theta.size
    if K > keep.shape[1]:                                               # more slots than rows: pad
        extra = K - keep.shape[1]
        pad = lambda x, v: np.pad(x, ((0, 0), (0, extra)), constant_values=v)   # noqa: E731
        rows = OneSided(pad(rows.al, 0.0), pad(rows.be, 0.0), pad(rows.ga, 0.0), pad(rows.h, np.inf), rows.origin)
        keep = pad(keep, False)
    idx = station_index(P, scheme)                                      # (N, S)
    dsig = np.diff(theta) / (theta[-1] - theta[0])
    order = np.argsort(~keep, axis=1, kind="stable")[:, :K]             # kept columns first
    count = keep.sum(axis=1)
    cols = order[idx]                                                   # (N, S, K)
    valid = np.arange(K)[None, None, :] < count[idx][:, :, None]
    if scheme == "collocation":
        valid[:-1, -1, :] = False                                       # right end only on the last interval
    if on is not None:
        valid &= on[:, :, None]
    pick = (idx[:, :, None], cols)
    al, be, ga, h = rows.al[pick], rows.be[pick], rows.ga[pick], rows.h[pick]
    inv = (0.5 / dsig)[:, None, None]
    lj = lams[:, :, None]
    u = -al * inv + be * lj
    w = al * inv + be * (1.0 - lj)
    gl, gr = ga * lj, ga * (1.0 - lj)
    v = al * (0.5 - lj) - be * dsig[:, None, None] * lj * (1.0 - lj) if linear else np.zeros_like(u)
    scale = np.maximum.reduce([np.abs(u), np.abs(w), np.abs(gl), np.abs(gr), np.abs(v)])
    valid &= (scale > 0) | (h < 0)
    scale = np.where(scale > 0, scale, 1.0)
    out = {}
    for name, x in (("u", u), ("w", w), ("gl", gl), ("gr", gr)) + ((("v", v),) if linear else ()):
        x = x / scale                                   # (a coefficient that is rounding next to the row's 1: 0)
        out[name] = np.where(valid & (np.abs(x) > ROUNDING), x, 0.0).reshape(-1)
    out["h"] = np.where(valid, h / scale, UNUSED).reshape(-1)
    out["span"] = 2.0 * np.sqrt(2.0 * dsig)
    if linear:                                         # (2′) of `problem`: two halves of Δσ_j
        out["dsig"] = dsig
        out["span"] = 2.0 * np.sqrt(dsig)
    return out


def with_speed_caps(values: dict, caps, theta: np.ndarray, linear: bool) -> dict:
    """`values` with Q more row slots per interval (after the stations' S·K): θ̇² ≤ cap at fractions u_q of
    every interval, `caps` = (u (Q,), cap (N, Q) in units of β, ≥ `UNUSED` or inf: off, bulge (N,)). θ̇²
    there is (1 − u) β_j + u β_{j+1} (− δ_j Δσ_j u (1 − u), θ̈ linear), so the rows are exact wherever the
    speed is capped — a joint-speed limit bounds θ̇² alone, b ≤ min_k (q̇_max,k / q′_k)², and that curve
    may bend between stations (`planning.prepare.speed_caps` places them on sub-samples between the
    stations, so the check finds no speed over the limit there). With θ̈ linear one more slot per interval
    bounds how far θ̇² bulges above its chord between two neighbouring caps h apart (in u), which is
    −δ_j Δσ_j h²/4 for this quadratic: −δ_j Δσ_j h²/4 ≤ bulge_j, on in the intervals with a cap. None:
    `values` unchanged."""
    if caps is None:
        return values
    u, cap, bulge = caps
    N = theta.size - 1
    dsig = np.diff(theta) / (theta[-1] - theta[0])
    uu = np.broadcast_to(u, cap.shape)
    on = np.isfinite(cap) & (cap < UNUSED)
    v = -dsig[:, None] * u * (1.0 - u)
    scale = np.maximum(np.maximum(1.0 - uu, uu), np.abs(v) if linear else 0.0)
    new = {"u": (1.0 - uu) / scale, "w": uu / scale, "gl": np.zeros(cap.shape), "gr": np.zeros(cap.shape),
           "v": v / scale, "h": np.where(on, cap / scale, UNUSED)}
    if linear:                           # (scaled to −ε_j ≤ 4 bulge_j / h² on the solver's ε_j = δ_j Δσ_j)
        h = np.min(np.diff(np.concatenate([[0.0], u, [1.0]])))
        row = on.any(axis=1) & np.isfinite(bulge)
        extra = {"u": 0.0, "w": 0.0, "gl": 0.0, "gr": 0.0, "v": -dsig,
                 "h": np.where(row, 4.0 * np.where(row, bulge, 0.0) / (h * h), UNUSED)}
        new = {k: np.hstack([x, np.broadcast_to(np.asarray(extra[k], float), (N,))[:, None]]) for k, x in new.items()}
        on = np.hstack([on, row[:, None]])
    out = dict(values)
    for key, x in new.items():
        if key in values:
            out[key] = np.hstack([np.asarray(values[key]).reshape(N, -1), np.where(on | (key == "h"), x, 0.0)]
                                 ).reshape(-1)
    return out


def slack(values: dict, beta: np.ndarray, delta: np.ndarray | None) -> np.ndarray:
    """(N·R,) h − (u β_j + w β_{j+1} + g_l √β_j + g_r √β_{j+1} + v δ_j) of every row slot of `values` for the
    profile β (grid points) and δ (θ̈ linear, else None); inf for unused slots."""
    N = beta.size - 1
    R = values["u"].size // N
    j = np.repeat(np.arange(N), R)
    root = np.sqrt(np.maximum(beta, 0.0))
    lhs = values["u"] * beta[j] + values["w"] * beta[j + 1] + values["gl"] * root[j] + values["gr"] * root[j + 1]
    if delta is not None and "v" in values:
        lhs = lhs + values["v"] * delta[j]
    return np.where(values["h"] < UNUSED, values["h"] - lhs, np.inf)


def delta_of(beta: np.ndarray, beta_mid: np.ndarray | None, dsig: np.ndarray) -> np.ndarray | None:
    """δ (θ̈ linear, the solver's normalised change of θ̈ per interval) of a profile given by β at the grid
    points and β(½) at the interval middles: β(½)_j = (β_j + β_{j+1})/2 − δ_j Δσ_j/4; None for None."""
    return None if beta_mid is None else 4.0 * (0.5 * (beta[:-1] + beta[1:]) - beta_mid) / dsig


def without(values: dict, rows: np.ndarray) -> dict:
    """`values` with the row slots `rows` (bool, N·R) unused, but for the anchors among them (`anchors`): without
    them a tangent solve with far rows left out was sometimes "dual infeasible" (the suite's iiwa7/random-1:
    β_99 rising with ε_98, ε_99, every row pressing on them left out) and solved again with every row, a wasted
    solve of 8–43 ms (also four of `study_families`' 168 plans; Clarabel takes longer to give up than to
    solve). With them none of those fails, and the other plans are unchanged."""
    out = dict(values)
    out["h"] = np.where(rows & ~anchors(values, rows), UNUSED, values["h"])
    return out


def with_ends(values: dict, ends: np.ndarray, N: int) -> dict:
    """`values` with the boundary values β_0, β_N = `ends` (fixed by (5) of `problem`) taken into the
    bounds of the first and last intervals' rows, and those rows divided again by their largest remaining
    coefficient; a row left with none (or with only rounding, < 1e-9 of the 1 it had) bounds the end value
    alone: unused where the end meets it, infeasible where it does not. A fixed β multiplied by a large
    coefficient only amplifies the solver's tolerance on (5): at a rest end the viscous tangent
    √b ≤ √b_ref/2 + b/(2√b_ref) has b_ref → 0, so its coefficient on β_0 dwarfs the row's others, and the
    ~1e-7 error of β_0 = 0 moved the first interval's θ̈ by 3 % (a torque 2 % over the limit at θ_0, which
    no repair could lower)."""
    out = {k: (np.array(v, dtype=float) if k in ("u", "w", "gl", "gr", "v", "h") else v) for k, v in values.items()}
    out["ends"] = np.asarray(ends, dtype=float)
    R = out["u"].size // N
    keys = [x for x in ("u", "w", "gl", "gr", "v") if x in out]
    for j, k, fixed, root in ((0, 0, "u", "gl"), (N - 1, 1, "w", "gr")):
        s = slice(j * R, (j + 1) * R)
        used = out["h"][s] < UNUSED
        h = out["h"][s] - out[fixed][s] * out["ends"][k] - out[root][s] * np.sqrt(max(out["ends"][k], 0.0))
        out[fixed][s], out[root][s] = 0.0, 0.0
        scale = np.max([np.abs(out[x][s]) for x in keys], axis=0)
        ok = used & (scale > 1e-9)
        for x in keys:
            out[x][s] = np.where(ok, out[x][s] / np.where(ok, scale, 1.0), np.where(used, 0.0, out[x][s]))
        alone = np.where(h >= 0, UNUSED, h)                      # (0 ≤ h: held by the end; else infeasible)
        out["h"][s] = np.where(ok, h / np.where(ok, scale, 1.0), np.where(used, alone, out["h"][s]))
    return out


def packed(blocks, L: float, Bbar: float, theta: np.ndarray, lams: np.ndarray, scheme: str, on: np.ndarray,
           beta_ref: np.ndarray | None = None, force: np.ndarray | None = None, linear: bool = False, caps=None,
           ends: np.ndarray | None = None, convex_at: np.ndarray | None = None, last: dict | None = None):
    """The rows of `blocks` one-sided and scaled (`one_sided`), those kept that can bind at `beta_ref`
    (`binding`; every finite row when it is None) or are `force`d, and packed (`pack`), with the speed caps
    `caps` (`with_speed_caps`) after them and the boundary values `ends` (β_0, β_N; `with_ends`) taken in:
    (rows, keep, values); the row slots per interval are `values["u"].size // N`. `convex_at` (β at the
    station samples): the √β terms (the convex side of viscous friction) on their tangent there as well
    (`on_tangent`; `refine.tangent_gap(convex=True)` measures its optimism), so the rows are linear and the
    tangent objective's problem needs no cones. `last`: the `binding` test's record from the previous call
    on this grid (a dict, filled here)."""
    rows = one_sided(blocks, L, Bbar)
    if convex_at is not None and rows.ga.any():
        rows = on_tangent(rows, convex_at)
    keep = binding(rows, beta_ref, last) if beta_ref is not None else np.isfinite(rows.h)
    if force is not None:
        keep |= force
    K = slot_count(keep)
    values = with_speed_caps(pack(rows, keep, theta, lams, scheme, K, on, linear), caps, theta, linear)
    return rows, keep, (values if ends is None else with_ends(values, ends, theta.size - 1))


def violated_rows(rows: OneSided, keep: np.ndarray, beta: np.ndarray, theta: np.ndarray, lams: np.ndarray,
                  scheme: str, tol: float = 1e-7, on: np.ndarray | None = None, delta=None) -> np.ndarray:
    """(Ps, R) bool: left-out rows that the profile β (grid points; with `delta`, θ̈ linear per interval)
    breaks at some station that is `on`, by more than `tol` relative to the row's terms."""
    P = theta.size
    idx = station_index(P, scheme)
    dsig = np.diff(theta) / (theta[-1] - theta[0])
    beta = np.maximum(beta, 0.0)
    a = ((beta[1:] - beta[:-1]) / (2.0 * dsig))[:, None]                 # (N, 1)
    d = np.zeros_like(a) if delta is None else np.asarray(delta, dtype=float)[:, None]
    bs, a = inside(beta[:-1, None], beta[1:, None], a, d, dsig[:, None], 1.0 - lams)      # (N, S) at the stations
    a = np.broadcast_to(a, bs.shape)
    out = np.zeros(keep.shape, bool)
    S = lams.shape[1]
    for s in range(S):
        p = idx[:, s]
        al, be, ga, h = rows.al[p], rows.be[p], rows.ga[p], rows.h[p]
        terms = (al * a[:, s, None], be * bs[:, s, None], ga * np.sqrt(bs[:, s, None]))
        value = terms[0] + terms[1] + terms[2] - h
        size = np.abs(terms[0]) + np.abs(terms[1]) + np.abs(terms[2]) + np.where(np.isfinite(h), np.abs(h), 0.0)
        bad = (value > tol * np.maximum(size, 1e-12)) & ~keep[p]
        if scheme == "collocation" and s == S - 1:
            bad[:-1] = False
        if on is not None:
            bad &= on[:, s, None]
        np.logical_or.at(out, p, bad)
    return out
