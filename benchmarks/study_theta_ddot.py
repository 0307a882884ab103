"""Design study: piecewise-CONSTANT θ̈ (today's time law) against piecewise-LINEAR, continuous θ̈ (collocation).

Both laws live on a grid θ_0 < … < θ_N (Δ_j = θ_{j+1} − θ_j, u = θ − θ_j ∈ [0, Δ_j]) with b = θ̇²:

* constant θ̈ — variables b_j; θ̈ = a_j = (b_{j+1} − b_j)/(2Δ_j) on interval j, b(u) = b_j + 2 a_j u (linear);
  duration of interval j is exactly 2Δ_j/(√b_j + √b_{j+1}); objective Σ_j 2Δ_j · inv_pos(√b_j + √b_{j+1})
  (DCP: inv_pos convex decreasing of a concave argument — the epigraph t_j ≥ 1/(x_j + x_{j+1}), x ≤ √b).
* linear θ̈ — variables b_i, a_i at grid points with b_{i+1} − b_i = Δ_i (a_i + a_{i+1}); on interval i
  θ̈(u) = a_i + (a_{i+1} − a_i) u/Δ_i,  b(u) = b_i + 2 a_i u + (a_{i+1} − a_i) u²/Δ_i.  ∫ du/√b(u) is convex
  in the variables (b(u) is linear in them); objective: 4-node Gauss–Legendre per interval of power(b, −½);
  at a rest end (b = 0) the substitution u = Δ v² (u = Δ(1 − v²) at the far end), ∫ du/√b = ∫ 2Δ v dv/√b,
  removes the 1/√u singularity before Gauss–Legendre in v.

Limits (rows scaled by their limit): |τ_k| ≤ τ_max,k with τ = m θ̈ + c b + d (`dynamics.path_coefficients`,
viscous friction set aside), b q′_k² ≤ q̇_max,k², |q′_k θ̈ + q″_k b| ≤ q̈_max,k where finite, b ≥ 0; imposed at
u/Δ = 0, ¼, ½, ¾, 1 of every interval (both one-sided θ̈ at grid points for the constant law; the linear law
is continuous so its f = 1 row is the next interval's f = 0). b_0 = 0, b_N = sd_end². Every solution is then
judged independently: duration by scipy quad of ∫ dθ/√b of the solved law (split at mid-interval, u = v²
substitution towards each end), limits on 201 points per interval with coefficients at those θ.

    python -m benchmarks.study_theta_ddot [--quick]   → table on stdout, /tmp/study_theta_ddot.json
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from scipy.integrate import quad

import dynamics
from toppra_app import JointPath

from .cases import robot, suite

GRIDS = (50, 100, 200, 400)
CHECK = np.array([0.0, 0.25, 0.5, 0.75, 1.0])          # constraint points per interval (fractions of Δ)
DENSE = np.linspace(0.0, 1.0, 201)                      # verification points per interval
_X, _W = np.polynomial.legendre.leggauss(4)
GL_X, GL_W = (_X + 1) / 2, _W / 2                       # 4-node Gauss–Legendre on [0, 1]
CASES = ["random-0", "random-1", "tiny-0"]              # per robot, plus EXTRA
EXTRA = ["ur5e/out-and-back-0", "iiwa7/end-speed-0", "ur5e+accel/accel-0", "iiwa7+accel/accel-0"]
NONUNIFORM = ["iiwa7/random-0", "ur5e/random-1", "ur10-urdf/random-0", "ur5e+accel/accel-0"]


# ------------------------------------------------------------------------------------------ the two laws
def law_maps(grid, law, F):
    """Sparse B, A (P × nz) with b = B z, θ̈ = A z at θ_j + F[j, k] Δ_j (F: (N, K) fractions, rows j-major).
    z = b_0..b_N (constant law) or b_0..b_N, a_0..a_N (linear law)."""
    N, K = F.shape
    D = np.diff(grid)[:, None] * np.ones((1, K))
    j = np.repeat(np.arange(N), K)
    f, D = F.ravel(), D.ravel()
    rows = np.arange(N * K)
    nb = N + 1
    if law == "const":
        nz = nb
        B = sp.coo_matrix((np.r_[1 - f, f], (np.r_[rows, rows], np.r_[j, j + 1])), shape=(N * K, nz))
        A = sp.coo_matrix((np.r_[-1 / (2 * D), 1 / (2 * D)], (np.r_[rows, rows], np.r_[j, j + 1])), shape=(N * K, nz))
    else:
        nz = 2 * nb
        u = f * D
        B = sp.coo_matrix((np.r_[np.ones_like(f), 2 * u - u * f, u * f],
                           (np.r_[rows, rows, rows], np.r_[j, nb + j, nb + j + 1])), shape=(N * K, nz))
        A = sp.coo_matrix((np.r_[1 - f, f], (np.r_[rows, rows], np.r_[nb + j, nb + j + 1])), shape=(N * K, nz))
    return B.tocsr(), A.tocsr()


def points(grid, F):
    return (grid[:-1, None] + F * np.diff(grid)[:, None]).ravel()


def coefficients(r, path, theta):
    e = path.evaluate(np.clip(theta, path.s_start, path.s_end))
    m, c, d = dynamics.path_coefficients(r, e.q, e.dq, e.ddq)
    return dict(m=m, c=c, d=d, dq=e.dq, ddq=e.ddq)


def limit_rows(r, co, B, A):
    """(G, lo, hi): lo ≤ G z ≤ hi for torque, velocity, acceleration (scaled to ±1) and b ≥ 0."""
    G, lo, hi = [B], [np.zeros(B.shape[0])], [np.full(B.shape[0], np.inf)]
    for k in np.flatnonzero(np.isfinite(r.tau_max)):
        t = r.tau_max[k]
        G.append(sp.diags(co["m"][:, k] / t) @ A + sp.diags(co["c"][:, k] / t) @ B)
        lo.append(-1 - co["d"][:, k] / t)
        hi.append(1 - co["d"][:, k] / t)
    if np.isfinite(r.qd_max).any():
        G.append(sp.diags(np.max((co["dq"] / r.qd_max) ** 2, axis=1)) @ B)
        lo.append(np.full(B.shape[0], -np.inf))
        hi.append(np.ones(B.shape[0]))
    for k in np.flatnonzero(np.isfinite(r.qdd_max)):
        G.append(sp.diags(co["dq"][:, k] / r.qdd_max[k]) @ A + sp.diags(co["ddq"][:, k] / r.qdd_max[k]) @ B)
        lo.append(-np.ones(B.shape[0]))
        hi.append(np.ones(B.shape[0]))
    return sp.vstack(G).tocsr(), np.concatenate(lo), np.concatenate(hi)


def b_scale(r, co):
    """A typical b (speed² admissible at zero θ̈), so the variables are O(1) even on 'tiny' paths."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cap = np.where(np.abs(co["c"]) > 0, (r.tau_max - np.abs(co["d"])) / np.abs(co["c"]), np.inf).min(axis=1)
        cap = np.minimum(cap, np.min((r.qd_max / np.abs(co["dq"])) ** 2, axis=1))
    cap = cap[np.isfinite(cap) & (cap > 0)]
    return float(np.median(cap)) if cap.size else 1.0


def solve(r, path, grid, law, sd_end, extra=None):
    """Solve one discretisation; returns the law's variables (unscaled) and solver statistics.
    `extra(z, s)`: optional further constraints on the scaled variables z (unscaled = z·s), e.g. the
    torque-rate rows of `benchmarks.study_rate_law`."""
    N = grid.size - 1
    Fc = np.tile(CHECK, (N, 1)) if law == "const" else np.tile(CHECK[:-1], (N, 1))
    th = points(grid, Fc)
    B, A = law_maps(grid, law, Fc)
    if law == "lin":                          # the last grid point (continuous law: one row there)
        last = lambda i: sp.csr_matrix(([1.0], ([0], [i])), shape=(1, 2 * N + 2))      # b_N, a_N
        B, A, th = sp.vstack([B, last(N)]), sp.vstack([A, last(2 * N + 1)]), np.r_[th, grid[-1]]
    co = coefficients(r, path, th)
    s = b_scale(r, co)
    G, lo, hi = limit_rows(r, co, B, A)
    nz = B.shape[1]
    z = cp.Variable(nz)
    bz = z[:N + 1]
    D = np.diff(grid)
    cons = [G[np.isfinite(hi)] @ z * s <= hi[np.isfinite(hi)], G[np.isfinite(lo)] @ z * s >= lo[np.isfinite(lo)],
            bz[0] == 0, bz[N] == sd_end ** 2 / s]
    if law == "const":
        obj = cp.sum(cp.multiply(2 * D, cp.inv_pos(cp.sqrt(bz[:-1]) + cp.sqrt(bz[1:]))))
    else:
        az = z[N + 1:]
        cons.append(bz[1:] - bz[:-1] == cp.multiply(D, az[:-1] + az[1:]))
        Fq = np.tile(GL_X, (N, 1))
        Wq = D[:, None] * np.tile(GL_W, (N, 1))
        Fq[0], Wq[0] = GL_X ** 2, 2 * D[0] * GL_X * GL_W           # rest start: u = Δ v²
        if sd_end == 0:
            Fq[-1], Wq[-1] = 1 - GL_X ** 2, 2 * D[-1] * GL_X * GL_W  # rest end: u = Δ (1 − v²)
        Bq, _ = law_maps(grid, law, Fq)
        obj = cp.sum(cp.multiply(Wq.ravel(), cp.power(Bq @ z, -0.5)))
    if extra is not None:
        cons += extra(z, s)
    prob = cp.Problem(cp.Minimize(obj / np.sqrt(s)), cons)
    t0 = time.perf_counter()
    try:
        prob.solve(solver="CLARABEL")
    except cp.error.SolverError:
        return dict(status="solver_error")
    wall = time.perf_counter() - t0
    if z.value is None:
        return dict(status=prob.status)
    zv = z.value * s
    out = dict(status=prob.status, b=zv[:N + 1], objective=float(prob.value), solve_s=prob.solver_stats.solve_time,
               iters=prob.solver_stats.num_iters, wall_s=wall, rows=int(G.shape[0]), vars=int(nz))
    out["a"] = zv[N + 1:] if law == "lin" else np.diff(zv) / (2 * D)
    return out


# ------------------------------------------------------------------------------------------ verification
def b_poly(grid, law, sol):
    """Per interval the coefficients of b(f) = β0 + β1 f + β2 f² (f = u/Δ) and θ̈(f) = α0 + α1 f."""
    D, b, a = np.diff(grid), np.maximum(sol["b"], 0), sol["a"]      # clip solver noise (b ~ −1e-12)
    if law == "const":
        return np.c_[b[:-1], b[1:] - b[:-1], 0 * D], np.c_[a, 0 * a]
    return np.c_[b[:-1], 2 * a[:-1] * D, (a[1:] - a[:-1]) * D], np.c_[a[:-1], a[1:] - a[:-1]]


def interval_times(grid, law, sol):
    """Δ_j ∫_0^1 df/√b(f) per interval by adaptive quadrature, halves with f = v² / f = 1 − v² (zeros of b at
    the interval ends are then harmless); inf where b ≤ 0 inside an interval."""
    beta, _ = b_poly(grid, law, sol)
    D, out, floor = np.diff(grid), [], 1e-12 * np.max(sol["b"])       # floor: solver noise near b = 0
    for Dj, (c0, c1, c2) in zip(D, beta):
        def g(v, sgn):
            f = v * v if sgn > 0 else 1 - v * v
            return 2 * v / np.sqrt(max(c0 + c1 * f + c2 * f * f, floor))
        lo = quad(g, 0, np.sqrt(0.5), args=(1,), epsabs=0, epsrel=1e-12, limit=200)[0]
        hi = quad(g, 0, np.sqrt(0.5), args=(-1,), epsabs=0, epsrel=1e-12, limit=200)[0]
        out.append(Dj * (lo + hi))
    return np.array(out)


def worst_violation(r, path, grid, law, sol, per=DENSE):
    """Worst |value|/limit over torque, velocity, acceleration on `per` points per interval; and min b."""
    N = grid.size - 1
    F = np.tile(per, (N, 1))
    beta, alpha = b_poly(grid, law, sol)
    b = beta[:, :1] + beta[:, 1:2] * F + beta[:, 2:] * F ** 2
    a = alpha[:, :1] + alpha[:, 1:] * F
    co = coefficients(r, path, points(grid, F))
    b, a = b.ravel(), a.ravel()
    bp = np.maximum(b, 0)[:, None]
    w = dict(torque=np.max(np.abs(co["m"] * a[:, None] + co["c"] * bp + co["d"]) / r.tau_max),
             velocity=np.max(np.sqrt(bp) * np.abs(co["dq"]) / r.qd_max))
    if np.isfinite(r.qdd_max).any():
        w["acceleration"] = np.max(np.abs(co["dq"] * a[:, None] + co["ddq"] * bp) / r.qdd_max)
    kind = max(w, key=w.get)
    return float(w[kind]), kind, float(b.min() / max(b.max(), 1e-300))


def checkerboard(a_lin, a_const):
    """Alternating sign changes of a_{i+1} − a_i (significant ones), longest alternating run, TV ratio."""
    d = np.diff(a_lin)
    d = d[np.abs(d) > 1e-6 * np.max(np.abs(a_lin))]
    alt = np.sign(d[1:]) != np.sign(d[:-1])
    run, best = 0, 0
    for x in alt:
        run = run + 1 if x else 0
        best = max(best, run)
    dc = np.diff(a_const)
    dc = dc[np.abs(dc) > 1e-6 * np.max(np.abs(a_const))]
    return dict(sign_changes=int(alt.sum()), const_sign_changes=int((np.sign(dc[1:]) != np.sign(dc[:-1])).sum()),
                longest_alternating=int(best),
                tv_ratio=float(np.abs(np.diff(a_lin)).sum() / max(np.abs(np.diff(a_const)).sum(), 1e-300)))


def time_grid(grid, sol, N):
    """N intervals at equal time steps of a constant-θ̈ solution (θ(t) inverted exactly per interval)."""
    b, a, D = sol["b"], sol["a"], np.diff(grid)
    sq = np.sqrt(np.maximum(b, 0))
    t = np.r_[0, np.cumsum(2 * D / (sq[:-1] + sq[1:]))]
    T = np.linspace(0, t[-1], N + 1)[1:-1]
    j = np.clip(np.searchsorted(t, T, side="right") - 1, 0, D.size - 1)
    tau = T - t[j]
    return np.r_[grid[0], grid[j] + sq[j] * tau + 0.5 * a[j] * tau ** 2, grid[-1]]


# ------------------------------------------------------------------------------------------ driver
def graded(path, n, levels=10):
    """Reference grid: n uniform intervals, the two end intervals graded geometrically (Δ 2^-k, k ≤ levels):
    a rest end followed by a velocity limit reached within u ≪ Δ is a corner no polynomial b(u) resolves."""
    g = np.linspace(path.s_start, path.s_end, n + 1)
    h = (g[1] - g[0]) * 2.0 ** -np.arange(1, levels + 1)
    return np.unique(np.r_[g, g[0] + h, g[-1] - h])


def run_one(r, path, grid, law, sd_end, dense=DENSE):
    sol = solve(r, path, grid, law, sd_end)
    if "b" not in sol:
        return dict(status=sol["status"], duration=np.nan), None
    worst, kind, bmin = worst_violation(r, path, grid, law, sol, dense)
    dt = interval_times(grid, law, sol)
    sol["t"] = np.r_[0, np.cumsum(dt)]
    row = dict(status=sol["status"], N=grid.size - 1, duration=float(dt.sum()), objective=sol["objective"],
               worst=worst, worst_kind=kind, b_min_rel=bmin, solve_ms=1e3 * sol["solve_s"], iters=sol["iters"],
               wall_ms=1e3 * sol["wall_s"], rows=sol["rows"], vars=sol["vars"])
    return row, sol


def study_case(case, grids, ref_n, ref_law, nonuniform: bool, out=print) -> dict:
    r = robot(case.robot)
    path = JointPath.from_waypoints(case.waypoints)
    uni = lambda N: np.linspace(path.s_start, path.s_end, N + 1)
    res = dict(case=case.name, family=case.family, viscous_set_aside=bool(np.any(r.viscous > 0)),
               accel_limits=bool(np.isfinite(r.qdd_max).any()), runs={})
    refs = {}
    for law in ("const", "lin"):                           # both references, on graded grids, checked on 21/interval
        for levels in (10, 6, 3):                          # Clarabel can fail on the finest grading: coarsen it
            g = graded(path, ref_n[law], levels)
            res[f"ref_{law}"], sol = run_one(r, path, g, law, case.sd_end, np.linspace(0, 1, 21))
            if sol is not None:
                break
        res[f"ref_{law}"]["levels"], refs[law] = levels, (g, sol)
    res["ref_agreement"] = res["ref_const"]["duration"] / res["ref_lin"]["duration"] - 1
    if refs["const"][1] is not None:                       # third: linear law on the const reference's equal-time grid
        g = time_grid(*refs["const"], ref_n["lin"])
        res["ref_lint"], sol = run_one(r, path, g, "lin", case.sd_end, np.linspace(0, 1, 21))
        refs["lint"] = (g, sol)
    if ref_law == "min":                                   # all are inner approximations: the shortest is closest
        ref_law = min([k for k in ("const", "lin", "lint") if k in refs],
                      key=lambda k: np.nan_to_num(res[f"ref_{k}"]["duration"], nan=np.inf))
    g_ref, s_ref = refs[ref_law]
    ref, res["reference_law"] = res[f"ref_{ref_law}"]["duration"], ref_law
    res["reference"] = ref
    t_ref = lambda th: np.interp(th, g_ref, s_ref["t"])    # exact at points of the reference grid
    sols = {}
    for N in grids:
        g = uni(N)
        for law in ("const", "lin"):
            row, sol = run_one(r, path, g, law, case.sd_end)
            row["gap"] = row["duration"] / ref - 1
            if sol is not None:                 # time lost in the outer 10 % of θ at each end vs in the middle 80 %
                k, t = N // 10, sol["t"]
                row["end_gap"] = (t[k] - t_ref(g[k]) + t[-1] - t[N - k] - ref + t_ref(g[N - k])) / ref
                row["mid_gap"] = row["gap"] - row["end_gap"]
            res["runs"][f"{law}{N}"], sols[law, N] = row, sol
        if sols["lin", N] is not None and sols["const", N] is not None:
            res["runs"][f"lin{N}"]["checkerboard"] = checkerboard(sols["lin", N]["a"], sols["const", N]["a"])
        c, l = res["runs"][f"const{N}"], res["runs"][f"lin{N}"]
        out(f"  {case.name:26s} N={N:4d} gap% const {100 * c['gap']:+.4f} lin {100 * l['gap']:+.4f}  middle "
            f"{100 * c.get('mid_gap', np.nan):+.4f} {100 * l.get('mid_gap', np.nan):+.4f}  worst "
            f"{c.get('worst', np.nan):.4f} {l.get('worst', np.nan):.4f}  ms {c.get('solve_ms', np.nan):.0f} "
            f"{l.get('solve_ms', np.nan):.0f}")
    if nonuniform and sols.get(("const", max(grids))) is not None:
        for N in [n for n in grids if n < max(grids)]:
            g = time_grid(uni(max(grids)), sols["const", max(grids)], N)
            for law in ("const", "lin"):
                row, _ = run_one(r, path, g, law, case.sd_end)
                row["gap"] = row["duration"] / ref - 1
                res["runs"][f"{law}{N}t"] = row
            out(f"  {case.name:26s} N={N:4d} TIME grid gap% const {100 * res['runs'][f'const{N}t']['gap']:+.4f} "
                f"lin {100 * res['runs'][f'lin{N}t']['gap']:+.4f}")
    return res


def summary(results, grids, suffix="", key="gap"):
    """Median and worst |value| over cases per law and N; order = slope of log median |gap| vs log N."""
    out = {}
    for law in ("const", "lin"):
        for N in grids:
            g = [x["runs"][f"{law}{N}{suffix}"].get(key, np.nan) for x in results if f"{law}{N}{suffix}" in x["runs"]]
            if g:
                out[f"{law}{N}{suffix}"] = dict(median=float(np.nanmedian(g)), worst=float(np.nanmax(np.abs(g))))
        y = [out[f"{law}{N}{suffix}"]["median"] for N in grids if f"{law}{N}{suffix}" in out]
        if len(y) == len(grids) and len(y) > 1 and min(np.abs(y)) > 0:
            out[f"order_{law}{suffix}"] = float(-np.polyfit(np.log(grids), np.log(np.abs(y)), 1)[0])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 cases, N = 50, 100, 200, references on N = 800")
    ap.add_argument("--ref", choices=("min", "const", "lin"), default="min", help="reference: constant law "
                    "N=3200 or linear law N=1600, both with graded ends, or (default) the shortest of these and the "
                    "linear law N=1600 on the equal-time grid of the constant one")
    ap.add_argument("--cases", help="comma-separated case names (default: the study's 16)")
    ap.add_argument("--append", action="store_true", help="merge into an existing JSON (runs split < 5 min)")
    ap.add_argument("--json", default="/tmp/study_theta_ddot.json")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    names = [f"{rb}/{c}" for rb in ("panda-urdf", "ur10-urdf", "iiwa7", "ur5e") for c in CASES] + EXTRA
    grids, ref_n = GRIDS, dict(const=3200, lin=1600)
    if args.quick:
        names, grids, ref_n = ["iiwa7/random-0", "ur5e/tiny-0", "ur5e+accel/accel-0"], (50, 100, 200), \
            dict(const=800, lin=800)
    names = args.cases.split(",") if args.cases else names
    cases = {c.name: c for c in suite(None)}
    results = []
    if args.append:
        with open(args.json) as fh:
            results = [x for x in json.load(fh)["results"] if x["case"] not in names]
    for name in names:
        if name not in cases:
            print(f"  {name}: not available, skipped")
            continue
        t0 = time.perf_counter()
        results.append(x := study_case(cases[name], grids, ref_n, args.ref, name in NONUNIFORM))
        print(f"  {name:26s} references const {ref_n['const']} / lin {ref_n['lin']} agree to "
              f"{100 * x['ref_agreement']:+.5f} %  ({time.perf_counter() - t0:.0f} s)"
              + ("  [viscous friction set aside]" if x["viscous_set_aside"] else ""))
    summ = {"gap": summary(results, grids), "mid_gap": summary(results, grids, key="mid_gap"),
            "time_grid": summary(results, [n for n in grids if n < max(grids)], "t")}
    for key in ("gap", "mid_gap"):
        print(f"\nper N: {key} % vs reference ({args.ref}), median / worst |.| over {len(results)} cases")
        sm = summ[key]
        for N in grids:
            c, l = sm[f"const{N}"], sm[f"lin{N}"]
            print(f"  N={N:4d}  const {100 * c['median']:+.4f} / {100 * c['worst']:.4f}   "
                  f"lin {100 * l['median']:+.4f} / {100 * l['worst']:.4f}")
        print(f"  order: const {sm.get('order_const', np.nan):.2f}  lin {sm.get('order_lin', np.nan):.2f}")
    with open(args.json, "w") as fh:
        json.dump(dict(reference=args.ref, ref_n=ref_n, grids=list(grids), results=results, summary=summ), fh,
                  indent=1, default=float)


if __name__ == "__main__":
    main()
