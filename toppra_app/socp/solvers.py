"""The one solver fallback chain, used by the planner and the thermal cycle problem.

The requested solver first (Clarabel by default, with settings tuned for these well-scaled problems),
then fallbacks that cvxpy has installed: Clarabel with tighter tolerances and iterative refinement,
ECOS, SCS. The first *accurate* solution wins; an "optimal_inaccurate" one is kept and used only if no
later solver is accurate (with a warning). Infeasibility reported by the first solver is returned to the
caller to judge (`diagnose` decides whether the limits or the solver are to blame).
"""

from __future__ import annotations

import functools
import warnings

import cvxpy as cp
import numpy as np

from ..errors import InputError


class SolverError(RuntimeError):
    """No solver returned an accurate solution (and the problem was not shown infeasible)."""


@functools.lru_cache(maxsize=1)
def installed_solvers() -> frozenset:
    return frozenset(cp.installed_solvers())         # cvxpy probes every solver on each call (~4 ms)


# tolerances: the problems are normalised (rows ~1, speeds ~1, duration ~1), so 1e-6 gives durations to
# ~1e-6 relative; iterative refinement of the KKT solves roughly doubles the time per iteration and is
# only needed in the fallback for ill-conditioned problems; so is Clarabel's equilibration (rows scaled
# to coefficients ≤ 1 already): without it the solver is set up faster and takes ~1 iteration fewer
# (planner suite: plans 1–4 % faster, durations within 5e-7, the same solves)
FAST_CLARABEL = dict(tol_feas=1e-7, tol_gap_abs=1e-7, tol_gap_rel=1e-7, iterative_refinement_enable=False,
                     equilibrate_enable=False)
# the second try: iterative refinement on (Clarabel's default), more equilibration and iterations; tighter
# tolerances (1e-8) end "almost solved" (optimal_inaccurate) on the normalised problem and gain nothing
CAREFUL_CLARABEL = dict(max_iter=500, tol_feas=1e-7, tol_gap_abs=1e-7, tol_gap_rel=1e-7, equilibrate_max_iter=50)


# a time limit on each Clarabel and SCS try where the caller gives the problem's size (`solve_with_chain(size=)`:
# the station problem's row slots, N·R + P·K): `TIME_LIMIT_BASE` + `TIME_LIMIT_PER_ROW` × size seconds. The solves
# that succeed take far less: 10–30 ms on the default grids (~6 000 slots: limit 2.6 s); on 3208 intervals
# (115 000 slots: limit 13.5 s) 0.15–0.6 s for the linear program, 0.5–1.6 s for the time cones, 1.5 s for a
# 153-iteration θ̈-linear one — ≥ 8× below the limit. A problem Clarabel fails on is rarely one SCS solves to
# 1e-7; SCS ran its 50 000 iterations there for minutes (a puma560 out-and-back path on 3200 intervals: 317 s,
# 26 min unfinished with the other core busy; a plan 7.45× over a limit with only a warning). A try stopped by
# its limit is a failure, never the inaccurate candidate kept as a last resort
TIME_LIMIT_BASE = 2.0
TIME_LIMIT_PER_ROW = 1e-4


def time_limit(size: int | None) -> float | None:
    """Seconds a Clarabel or SCS try of a problem with `size` rows may take (None: no limit)."""
    return None if size is None else TIME_LIMIT_BASE + TIME_LIMIT_PER_ROW * float(size)


def limited(name: str, options: dict, limit: float | None) -> dict:
    """`options` with the solver's own time-limit setting (Clarabel, SCS), if `limit`."""
    key = {"CLARABEL": "time_limit", "SCS": "time_limit_secs"}.get(name)
    return options if limit is None or key is None else {**options, key: limit}


def solver_chain(solver: str | None, normalised: bool = True) -> list[tuple[str, dict]]:
    """[(solver name, options)] in the order they are tried; `InputError` for a solver cvxpy lacks.
    `normalised=False` (problems in physical units: `GeneralProblem`) starts with the careful settings, then the
    planner's (`FAST_CLARABEL`): where the careful try ended "insufficient progress" the other solved, where SCS
    next ran 28 s (an iiwa 7 energy-weighted plan at 500 N·m/s) and 250 s (a thermal cycle)."""
    installed = installed_solvers()
    if solver is not None and not isinstance(solver, str):
        raise InputError(f"solver: expected a cvxpy solver name such as 'CLARABEL', got {type(solver).__name__}")
    first = (solver or "CLARABEL").upper()
    if first not in installed:
        raise InputError(f"solver: {first} is not available in cvxpy (installed: {', '.join(sorted(installed))})")
    if first == "CLARABEL":
        chain = [(first, dict(FAST_CLARABEL if normalised else CAREFUL_CLARABEL))]
    else:
        chain = [(first, {})]
    if "CLARABEL" in installed and (normalised or first != "CLARABEL"):
        chain.append(("CLARABEL", dict(CAREFUL_CLARABEL)))
    elif first == "CLARABEL":
        chain.append(("CLARABEL", dict(FAST_CLARABEL)))
    for name, opts in (("ECOS", dict(max_iters=500)), ("SCS", dict(eps_abs=1e-7, eps_rel=1e-7, max_iters=50_000))):
        if name in installed and name != first:
            chain.append((name, opts))
    return chain


def solve_with_chain(solve, solver: str | None, normalised: bool = True, what: str = "the time-optimal problem",
                     clarabel: dict | None = None, probe: dict | None = None, probed=None, first_only: bool = False,
                     size: int | None = None, inaccurate: list | None = None):
    """Try `solve(name, options) -> (status, x, wall, compile_s)` down the chain.

    Returns (status, x, solver name, wall seconds, compile seconds); status is "infeasible" when the
    first solver said so (the caller decides what that means). Raises `SolverError` when no solver gave
    a usable solution. `clarabel`: options added to every Clarabel try; `probe`: options (on top) of a
    cheaper first Clarabel try whose result is used only if it is "optimal" — anything else goes on to
    the chain as if the probe had not been made (its infeasibility is not trusted); `probed(ok)` is told
    whether it was. `first_only`: the first solver of the chain only, and status "failed" (x None) unless it
    ends "optimal" — for a problem with rows left out, which the caller then solves again with every row (a
    reduced problem whose solver failed went on to SCS, 9 s, before that). `size`: the problem's rows, for each
    Clarabel and SCS try's time limit (`time_limit`; a try that reaches it is a failure). `inaccurate`: a list
    that takes the warning about an "optimal_inaccurate" solution instead of `warnings` (for a caller that warns
    only if that solution becomes its result)."""
    failures, candidate = [], None
    wall_all = compile_all = 0.0
    limit = time_limit(size)
    chain = [(name, limited(name, {**opts, **(clarabel or {})} if name == "CLARABEL" else opts, limit))
             for name, opts in solver_chain(solver, normalised)]
    chain = chain[:1] if first_only else chain
    if probe is not None and chain[0][0] == "CLARABEL":
        try:
            status, x, wall, compile_s = solve("CLARABEL", {**chain[0][1], **probe})
        except (cp.error.SolverError, SolverError):
            status, x, wall, compile_s = "error", None, 0.0, 0.0
        wall_all, compile_all = wall, compile_s
        ok = status == cp.OPTIMAL and x is not None and np.isfinite(x).all()
        if probed is not None:
            probed(bool(ok))
        if ok:
            return status, x, "CLARABEL", wall_all, compile_all
    for name, options in chain:
        if candidate is not None and name not in ("CLARABEL", "ECOS"):
            break
        try:
            status, x, wall, compile_s = solve(name, options)
        except (cp.error.SolverError, SolverError) as exc:     # a failed or unsupported solver: try the next
            failures.append(f"{name}: {exc}")
            continue
        wall_all += wall
        compile_all += compile_s
        ok = x is not None and np.isfinite(x).all()
        if status == cp.OPTIMAL and ok:
            return status, x, name, wall_all, compile_all
        if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE) and not failures and not first_only:
            return "infeasible", None, name, wall_all, compile_all
        if limit is not None and wall - compile_s >= limit:      # (Clarabel "user_limit", SCS "optimal_inaccurate")
            failures.append(f"{name}: stopped by its time limit ({limit:.3g} s)")
            continue
        failures.append(f"{name}: {status}")
        if status == cp.OPTIMAL_INACCURATE and ok and candidate is None:
            candidate = (status, x, name)
    if first_only:
        return "failed", None, chain[0][0], wall_all, compile_all
    if candidate is not None:
        message = f"{what} solved only inaccurately ({'; '.join(failures)}); the between-grid check still applies"
        if inaccurate is None:
            warnings.warn(message, RuntimeWarning, stacklevel=3)
        else:
            inaccurate.append(message)
        return (*candidate, wall_all, compile_all)
    raise SolverError(f"{what} could not be solved ({'; '.join(failures)}); "
                      f"try another grid (grid=...) or solver (solver=...)")
