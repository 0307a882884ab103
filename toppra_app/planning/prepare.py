"""Once per planner: the grid, the scales of the path parameter and squared speed, and the path at the stations.

`prepare` is step 1 of a plan (`planning.planner`): a function of the robot without payload, the path, the
limits and the grid options only, returning a plain `Setup` record that every plan on the planner reads and
none changes (a plan copies `lams` and `moved` before repairing them):

1. a coarse grid (`grid.COARSE_INTERVALS`, or the fixed grid the user gave), where the path must stay inside
   the joint ranges and every point must be holdable at rest (`diagnose`);
2. a rest-to-rest reachability profile on it (`grid.rest_to_rest_law`), which places the final grid mostly
   uniform in time, the spline's knots among them (`grid.time_grid`, `grid.with_knots`);
3. grid points moved to where the optimum switches, or the grid refined by the predicted room where the plan
   would refine it anyway (`placement.relocated`) — not on plans θ̈ linear on the default grid;
4. the scale L of θ and B̄ of b = θ̇², the between-grid check's sub-samples, the joint-speed caps between
   stations (`speed_caps`), and the path and reference speed b_ref at the stations (the free stations off:
   a repair places them where the check asks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InfeasiblePathError
from ..limits.joint import JointVelocityLimit, viscous_speed
from ..limits.rows import PathData, at_flip, tangent_point
from ..socp import stations as st
from ..socp.scaling import path_scale
from ..trajectory import TimeLaw
from ..samples import SubSamples, flip_joints
from . import diagnose, refine
from .grid import (COARSE_INTERVALS, PROFILE_SHARE, corners, default_grid, dense, filled, intervals_for, linearised,
                   rest_to_rest_law, split_grid, takes_knots, time_grid, with_knots)
from .layers import FLIP_LAYER_SHARE, FLIP_LAYERS, end_layers, flip_layers, on_coulomb_flips, rest_layers, riding_flips
from .options import REFINE_MAX_INTERVALS, REFINE_SHARE
from .placement import holding, relocated

CAP_WITHIN = 2.0                   # speed caps where the bound on θ̇² is within this factor of the coarse profile
CAP_SUBSTEPS_LINEAR = 16           # speed caps at this many sub-samples per interval with θ̈ linear (else the
                                   # check's): θ̇² bends inside an interval, and between caps 1/8 apart the
                                   # joint speed rose up to 0.65 tol over them (0.17 tol at 1/16)
DENSE_LINEAR_MAX = 2048           # `prepare(dense_linear=True)`: dense paths whose default grid has up to this many
                                  # intervals plan θ̈ linear (3000 noisy waypoints on 4096: a zero-speed solution) ...
DENSE_REFINE_MAX = 4096           # ... and are refined up to this many (1000 noisy waypoints, 2048 → 4096)
BULGE_SHARE = 0.5                  # θ̈ linear: the bulge of θ̇² above its chord between two caps ≤ this × tol × cap
FLIP_SIDE = 1e-2                   # Coulomb flips: stations at this share of an interval beside a grid point on one (1e-3: rows
                                   # so alike the first solve's vertex was ill-defined; pruned and unpruned plans
                                   # of the built-in Panda 1e-4 apart, 7e-10 now; the friction study the same)


@dataclass(frozen=True)
class Setup:
    """What every plan on one planner starts from (arrays not to be changed in place)."""
    theta: np.ndarray              # the grid, P points
    L: float                       # θ_end − θ_start
    Bbar: float                    # scale of b: the coarse profile's top speed (or the velocity limits') / L²
    law: TimeLaw | None            # the coarse rest-to-rest reachability profile (None: stops inside, or none)
    all_stations: bool             # every station on from the start (dense waypoint paths, `dense_linear` aside)
    dense: bool                    # a dense waypoint path (`grid.dense`)
    dense_constant: bool           # ... planned θ̈ constant per interval (`dense_linear` aside)
    sub: SubSamples                # the between-grid check's sub-samples
    lams: np.ndarray               # (P − 1, stations) the stations' positions inside the intervals
    moved: np.ndarray              # (P − 1, 2) free stations already switched on
    ths: np.ndarray                # θ at the stations
    data: PathData                 # the path at the stations (its coefficients for the planner's robot)
    b_ref: np.ndarray              # b at the stations on the coarse profile (`reference_b`)
    caps: tuple | None             # speed caps between the stations (`speed_caps`)


def limit_blocks(limits, data, b_ref, scales) -> list:
    """The row blocks of every limit that has rows on `data` (`Limit.rows`)."""
    return [blk for blk in (lim.rows(data, b_ref=b_ref, scales=scales) for lim in limits) if blk is not None]


def reference_b(law, Bbar: float, L: float, ths) -> np.ndarray:
    """b at the stations on the coarse reachability profile (tangent point of viscous rows, pruning)."""
    ref = np.interp(ths, law.theta, law.b) if law is not None else np.full(ths.size, Bbar * L * L)
    return tangent_point(ref)


def tangent_points(b_ref, data, law, sd_start: float, sd_end: float) -> np.ndarray:
    """The first tangent points of viscous friction for one plan: `b_ref` (at the stations of `data`, the
    coarse profile's) at most where the friction alone takes the torque margin of the plan's robot
    (`limits.joint.viscous_speed`: above it no profile fits the tangent rows), and raised to the boundary
    speeds' θ̇² from each moving end up to where the rest-to-rest profile `law` (the coarse one) first
    reaches it: that profile is ~0 at the ends, and a tangent of √b there over-states the friction at θ̇ = sd
    100–1000× (a Panda URDF path refused sd_end = 0.96 × its speed limit; the friction allows 2×)."""
    out, ths = np.minimum(b_ref, viscous_speed(data)), data.theta
    for sd, first in ((sd_start, True), (sd_end, False)):
        b = float(sd) ** 2
        if b <= 0.0:
            continue
        if law is None:
            near = np.ones(out.size, bool)
        else:
            above = np.flatnonzero(law.b >= b)
            edge = law.theta[above[0] if first else above[-1]] if above.size else law.theta[-1 if first else 0]
            near = ths <= edge if first else ths >= edge
        out[near] = np.maximum(out[near], b)
    return out


def at_stations(robot, path, theta, lams, scheme: str, old=None) -> tuple[np.ndarray, PathData]:
    """(θ at the stations, the path data there). With `old` = (θ, path data) of some samples on the same
    path and robot, the stations at those θ keep their data and only the others are evaluated: after a
    repair moved a few stations (`refine.repaired`), or on a grid relocated from the one the data was for."""
    ths = st.station_thetas(theta, lams, scheme)
    if old is None:
        S = path.evaluate(ths)
        return ths, PathData(robot, ths, S.q, S.dq, S.ddq)
    order = np.argsort(old[0], kind="stable")
    known = old[0][order]
    pos = np.minimum(np.searchsorted(known, ths), known.size - 1)
    found = known[pos] == ths
    src, new = order[pos[found]], ~found
    data = old[1]
    if not new.any():
        return ths, data.take(src)
    S = path.evaluate(ths[new])
    fresh = PathData(robot, ths[new], S.q, S.dq, S.ddq)

    def merged(x, y):
        out = np.empty((ths.size,) + x.shape[1:])
        out[found], out[new] = x[src], y
        return out
    coeffs = [merged(x, y) for x, y in zip(data.coefficients, fresh.coefficients)]
    return ths, PathData(robot, ths, merged(data.q, S.q), merged(data.dq, S.dq), merged(data.ddq, S.ddq),
                         type(data.coefficients)(*coeffs))


def speed_caps(robot, limits, sub, law, scale_b: float, tol: float, skip, near: bool = False) -> tuple | None:
    """(u (Q,), cap (N, Q), bulge (N,)): the joint-speed bound b ≤ min_k (q̇_max,k / q′_k)² (× (1 + tol/2)²,
    the share of the stations inside intervals, `refine.base_scales`) in units of β = b/scale_b, at the
    sub-samples u of `sub` inside the intervals except those in `skip` (where a station always stands),
    for `socp.stations.with_speed_caps`; and for θ̈ linear per interval the most θ̇² may bulge above its
    chord between two neighbouring caps, `BULGE_SHARE` × tol × the interval's smallest cap (with the caps
    (1 + tol/2)² and the joint speed's own bend, measured ≤ 0.08 tol, the speed then stays within tol).
    Off (inf) where the coarse reachability profile `law`, which no feasible profile exceeds by much,
    stays below half the bound (`near`, for θ̈ linear: its largest value over neighbouring grid points —
    near rest it lags a profile whose θ̇² may curve up inside an interval; with the constant law that put
    more caps on a dense path and its controller solve ended inaccurate); anything left out that a plan
    still breaks, the check finds and `refine` repairs. None without joint-speed limits."""
    if not any(isinstance(lim, JointVelocityLimit) for lim in limits) or not np.isfinite(robot.qd_max).any():
        return None
    inner = (sub.u > 0) & (sub.u < 1) & ~np.isin(np.round(sub.u, 12), np.round(skip, 12))
    if not inner.any():
        return None
    N, S1 = sub.theta.shape
    data = PathData(robot, sub.theta.reshape(-1), sub.q, sub.dq, sub.ddq)      # (no dynamics: b_max uses q′)
    bmax = JointVelocityLimit().b_max(data).reshape(N, S1)[:, inner]
    cap = bmax * (1.0 + refine.INNER_SLACK * tol) ** 2 / scale_b
    if law is not None:
        b = np.maximum(law.b, np.maximum(np.r_[law.b[1:], law.b[-1]], np.r_[law.b[0], law.b[:-1]])) if near else law.b
        cap = np.where(bmax <= CAP_WITHIN * np.interp(sub.theta[:, inner], law.theta, b), cap, np.inf)
    bulge = BULGE_SHARE * tol * cap.min(axis=1)
    return sub.u[inner], cap, bulge


def flip_sides(robot, sub: SubSamples, scheme: str) -> tuple[np.ndarray, np.ndarray]:
    """(λ (N, S), moved (N, 2)): the scheme's stations, and at every grid point on a Coulomb flip (`at_flip`)
    the free stations of the two intervals beside it moved to `FLIP_SIDE` of their length from it. θ̈ may jump
    at a grid point, as the optimum's does at a flip (the friction torque jumps by 2 F_c); the rows there take
    each side's friction with that side's θ̈ (the flip's own row: `limits.joint`). `sub`: the check's
    sub-samples of the grid, whose first of each interval is its grid point."""
    N = sub.theta_grid.size - 1
    lams, moved = st.default_lams(N, scheme), np.zeros((N, 2), bool)
    joints = flip_joints(robot)
    if not joints.any() or not st.FREE[scheme] or N < 2:
        return lams, moved
    dq, ddq = (x.reshape(N, sub.u.size, -1)[1:, 0] for x in (sub.dq, sub.ddq))    # the inner grid points
    p = 1 + np.flatnonzero(at_flip(dq, ddq)[:, joints].any(axis=1))             # those on a flip
    left, right = st.FREE[scheme]
    lams[p - 1, right], moved[p - 1, 1] = FLIP_SIDE, True            # λ: the station at 1 − λ of the interval
    lams[p, left], moved[p, 0] = 1.0 - FLIP_SIDE, True
    return lams, moved


def set_up(planner, refine_above: float, dense_refine_above: float) -> None:
    """`prepare` for a `TimeOptimalPlanner` (its `_prepare`, under its lock), the fields its attributes (`law`,
    `data`, `b_ref`, `lams`, `moved` as law0, data0, … : where every plan starts); its `gap_target`, where the
    user gave none, `dense_refine_above` on a dense path, else `refine_above`."""
    gap = planner.estimates_gap                  # (no rates: the grid's points at known bends, `layers`)
    try:
        s = prepare(planner.robot, planner.path, planner.limits, grid_mode=planner.grid_mode,
                    grid_spec=planner.grid_spec, scheme=planner.scheme, substeps=planner.substeps, tol=planner.tol,
                    check_positions=planner.check_position_limits, relocate=planner.relocate,
                    gap_target=refine_above if planner.gap_target is None else planner.gap_target,
                    linear=planner.linear, may_refine=planner.auto_grid and planner.max_splits > 0 and gap,
                    with_layers=gap, dense_linear=planner.linear and planner.auto_grid and gap,
                    dense_stations=not planner.rated)
    except InfeasiblePathError as exc:           # the limit held against is the profile's, not the data sheet's
        c = planner.controller                   # (torque_headroom 0.3: "tau_max = 52.8 N·m" on a 176 N·m joint)
        if c is None or c.torque_headroom == 1.0 or "the torque limit of joint" not in str(exc):
            raise
        raise InfeasiblePathError(f"{exc}; tau_max there is controller.torque_headroom = {c.torque_headroom:g} × the "
                                  f"robot's", argument=exc.argument) from None
    for name in Setup.__dataclass_fields__:
        value = getattr(s, name)
        if isinstance(value, np.ndarray):          # shared by every plan (`planner.grid`): read-only, as a robot's
            value.flags.writeable = False
        setattr(planner, name + "0" if name in ("law", "data", "b_ref", "lams", "moved") else name, value)
    if planner.gap_target is None:
        planner.gap_target = dense_refine_above if s.dense else refine_above


def prepare(robot, path, limits, *, grid_mode: str, grid_spec, scheme: str, substeps: int, tol: float,
            check_positions: bool, relocate: bool, gap_target: float, may_refine: bool, linear: bool,
            dense_linear: bool = False, with_layers: bool = True, dense_stations: bool = True) -> Setup:
    """The grid and stations of a planner (`grid_mode`, `grid_spec` from `grid.parse_grid`); `may_refine`:
    the planner may refine its default grid for the gap estimate (`options.estimates_gap`); `linear`: its
    plans have θ̈ linear per interval where the path is not dense (speed caps closer together);
    `dense_linear`: θ̈ linear on the default grid, estimating the gap (not a controller profile's rates or an
    energy term) — dense paths plan like others, and the grid takes the profile's variation into account;
    `with_layers`: points where a run-up from rest ends and beside flips a joint rides its torque limit into
    (`layers.rest_layers`, `riding_flips`) — not for a controller profile's rates, whose θ̈ ramps (their rows
    over such short intervals left Clarabel with a numerical error and SCS with its time limit: 0.45 → 3.7 s);
    `dense_stations=False`: a dense path keeps stations off until a repair moves them, as other paths (a
    controller profile's rate rows, whose cone problems with every station on were ill-conditioned)."""
    coarse = grid_spec if grid_mode == "fixed" else default_grid(path, COARSE_INTERVALS)
    S = path.evaluate(coarse)
    if check_positions:
        sub = SubSamples.build(path, coarse, 4, knots=False)
        diagnose.check_positions(robot, sub.theta.reshape(-1), sub.q)
    data = PathData(robot, coarse, S.q, S.dq, S.ddq)
    diagnose.check_holdable(robot, coarse, data.coefficients.d, data.dq)
    vel = JointVelocityLimit().b_max(data)
    b_ref = np.fmin(vel, viscous_speed(data))        # (tangent point of viscous friction: `viscous_speed`)
    b_ref = np.where(np.isfinite(b_ref), b_ref, 1.0)
    # (no law: stops inside the path or no profile; the grid is then placed by θ and arc length)
    blocks = [blk.at(None) for blk in limit_blocks(limits, data, b_ref, None)]
    law = rest_to_rest_law(blocks, coarse, b_ref)
    diagnose.check_time_scale(robot, coarse, law)
    layers, riding = np.empty(0), np.empty(0)
    if grid_mode == "fixed":
        theta = coarse
    else:
        share = PROFILE_SHARE if dense_linear else 0.0    # (plain θ̈-linear plans: `grid.time_grid`)
        windows = corners(path) if dense_linear else ()       # (θ̈-linear default grids: `grid.corners`)
        place = (lambda k: time_grid(law, k, profile_share=share, windows=windows)) if law is not None \
            else (lambda k: default_grid(path, k))
        knots = takes_knots(len(path.knots) - 2, grid_spec)
        placed = (lambda k: with_knots(place, path.knots, k)) if knots else place
        theta = placed(grid_spec)
        if law is not None and grid_spec > 8 and with_layers:   # points where the optimum bends (`layers`), placed with
            layers = rest_layers(linearised(blocks, None), law, theta)      # as many fewer: the same size, a
            riding = riding_flips(robot, path, law, int(FLIP_LAYER_SHARE * grid_spec) // (2 * FLIP_LAYERS))
            extra = layers.size + 2 * FLIP_LAYERS * riding.size             # compiled structure
            if extra:
                theta = np.union1d(placed(grid_spec - extra), layers)
    # dense waypoint paths: limits bend inside most intervals, every station on (3000 waypoints: 31 s, not 57);
    # with `dense_linear`, where their default grid has up to DENSE_LINEAR_MAX intervals, they plan as other
    # paths, θ̈ linear (`planner`) — judged by the default grid, so the finer grids split from it (`finer`) too
    default = intervals_for(path, linear=True) if dense_linear else theta.size - 1
    dense_path = dense(path, default)
    dense_constant = dense_path and not (dense_linear and default <= DENSE_LINEAR_MAX)     # plans θ̈ constant
    all_stations = dense_constant and dense_stations
    stations0 = None
    # not for plans θ̈ linear on the default grid (`dense_linear`): on the planner suite relocation took them
    # from +0.019 % to +0.010 % from converged (median), worst +0.051 → +0.045 %, and cost ~3.5 ms of a ~28 ms
    # plan; on the 450 paths of the families, hunt and friction studies the worst gaps stayed below +0.1 %
    # (+0.071, +0.083, +0.095 % without it; +0.069, +0.076, +0.095 % with it), 2–5 % more solves (nineteenth
    # session)
    if law is not None and grid_mode != "fixed" and not all_stations and relocate and not dense_linear:
        # start on the grid refined by the predicted room only where the plan's gap estimate could ask
        # for it: not with rate limits, a controller profile's rates or an energy term (no estimate), nor
        # with θ̈ linear per interval (the prediction is the constant law's loss, which it mostly avoids)
        larger = (lambda room: split_grid(theta, holding(room, REFINE_SHARE))) if may_refine and not linear \
            and theta.size - 1 < REFINE_MAX_INTERVALS else None
        # the path data at the stations of this grid: the prediction's check points, and the plan's stations
        # after it wherever the relocation leaves them
        stations0 = at_stations(robot, path, theta, st.default_lams(theta.size - 1, "interpolation"),
                                "interpolation")
        theta = relocated(robot, path, theta, law, stations0[1], lambda d, br: limit_blocks(limits, d, br, None),
                          gap_target, larger, np.union1d(path.knots, layers))
    if grid_mode != "fixed":
        theta = end_layers(robot, theta) if with_layers else theta
        size = theta.size - 1 + 2 * FLIP_LAYERS * riding.size   # (a flip layer that met a point: split the longest)
        theta = filled(flip_layers(on_coulomb_flips(robot, path, theta), riding), size)
    top = law.b.max() if law is not None else np.nanmax(np.where(np.isfinite(vel), vel, np.nan), initial=np.nan)
    L, Bbar = path_scale(theta, [top])                   # (the normalised variables, docs/planner.md)
    sub = SubSamples.build(path, theta, substeps)
    lams, moved = flip_sides(robot, sub, scheme)
    ths, data = at_stations(robot, path, theta, lams, scheme, stations0 if scheme == "interpolation" else None)
    caps = None
    if scheme == "interpolation":      # between the stations always on: the middle, or all five on dense paths
        lam = np.asarray(st.SCHEMES[scheme])
        lin = linear and not dense_constant
        at = SubSamples.build(path, theta, CAP_SUBSTEPS_LINEAR, knots=False) if lin else sub
        caps = speed_caps(robot, limits, at, law, L * L * Bbar, tol, lam if all_stations else lam[[0, 2, 4]], lin)
    return Setup(theta=theta, L=L, Bbar=Bbar, law=law, all_stations=all_stations, dense=dense_path,
                 dense_constant=dense_constant, sub=sub,
                 lams=lams, moved=moved,
                 ths=ths, data=data, b_ref=reference_b(law, Bbar, L, ths), caps=caps)
