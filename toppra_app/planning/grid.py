"""Where the grid points go: a first profile by reachability, then points uniform in (mostly) time.

With θ̈ constant per interval, an interval loses time in proportion to how fast the optimal θ̈ changes
across it *and* to how long the robot spends on it. Near a rest end the robot is slow: θ grows like t²,
so a grid uniform in θ puts one interval over the first tenth of a second that the optimum spends
accelerating, and the duration error concentrates there (measured on random Panda paths: +0.48 % at
N = 200 uniform, +0.08 % with points uniform in time). So the final grid is uniform in a blend of
time (weight 1 − `THETA_SHARE`) and θ (`THETA_SHARE`, so that fast stretches keep some points), with
the time taken from a quick reachability profile on a coarse grid (`socp.reachability`).

With θ̈ linear per interval (the default law) the blend has a third part, `PROFILE_SHARE`: the profile's
own variation, ∫ |d ln(θ̇² + `PROFILE_FLOOR` · max θ̇²)|. Where θ̇² swings by a large factor over a short,
fast stretch (a joint that carries the motion turning back while the others barely move: θ̇² rises 50×
and falls again within 3 % of θ, crossed in 20 ms) neither time nor θ puts points, and the quadratic θ̇²
of an interval cannot follow the swing (measured: 1.2 ms lost at each of four such places, +0.10 % in
all). With a share of 0.3 the 72 paths of the planner suite and of the families in planner.md ("Grid")
came within +0.057 % of converged (median +0.013 %), where they were within +0.10 % (median +0.026 %) —
none worse; 0.2–0.4 gave the same, 0.5 put one path at +0.28 %.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..path import JointPath
from ..socp.reachability import reachable_profile
from ..trajectory import TimeLaw
from ..errors import short_repr

DEFAULT_INTERVALS = 200           # intervals of the final grid (one compiled structure per process)
LINEAR_INTERVALS = 128            # ... with θ̈ linear per interval (planner.md "θ̈ linear per interval": with
                                  # the profile's share in the placement (`time_grid`) every duration of the
                                  # planner suite within +0.018 % of converged at 128 where most are 13–16 %
                                  # faster than at 160; before it: +0.06 % at 160, up to +0.1 % at 128)
LINEAR_GATE = 160 // 4            # θ̈ linear: paths of fewer spline segments take the sizes below (`intervals_for`)
DENSE_SHARE = 4                   # a path with ≥ N/4 spline segments may be "dense" (all stations on) ...
SMOOTH_SHARE = 3                  # ... unless it has at most N/3 and is smooth (`dense`)
ROUGH = 1.0                       # `roughness` above which many knots are noise (measured: 1e-4 rad noise on 200
                                  # samples 2.1–3.5, 80 IK samples of a palletizing move 0.3–0.8, smooth samples 0)
COARSE_INTERVALS = 100            # intervals of the reachability profile that places it
THETA_SHARE = 0.25                # weight of uniform-θ spacing in the blend (the rest: uniform time) ...
PROFILE_SHARE = 0.3               # ... θ̈ linear: this weight on the variation of ln θ̇² (`time_grid`), off time
PROFILE_FLOOR = 1e-3              # θ̇² below this share of its largest value counts as this (rest ends: finite)
ONTO_MIN = 0.05                   # `onto`: no interval shorter than this share of the one a point moves in
MAX_INTERVALS = 20_000            # documented bound (docs/planner.md): more would not fit the solver
MAX_AUTO_INTERVALS = 4096         # the default grid's largest size (refinement may go further, to MAX_INTERVALS),
                                  # unless the path has more knots than it holds (`intervals_for`)
PER_SEGMENT = 2                   # default intervals per spline segment on dense waypoint paths
PER_TURN = 26                     # θ̈ linear: at least this many intervals per stretch between `turns`, each a
                                  # motion of its own (8–50 random waypoints on four robots: +0.08 … +3.8 % from
                                  # converged at 160–200 intervals, +0.02 … +0.07 % now; 24: 9 of them +0.095 %,
                                  # 20: up to +0.14 %)
TURN_ANGLE = np.pi / 4            # a knot where the chords between waypoints turn by more is a turn
PER_CORNER = 64                   # θ̈ linear: this many more per `corners` (a turn between straight stretches:
                                  # a polyline densely sampled, as a joint-space planner's output) ...
STRAIGHT_ANGLE = np.pi / 36       # ... the knots either side of a corner turn by less (noisy samples: more)
CORNER_SHARE = 0.15               # ... and this weight in the blend (`time_grid`) on the spline segments on either
                                  # side of each (48 polylines of 3-6 vertices, 5-40 samples a segment, on four
                                  # robots: up to +0.19 % from converged at 128-200 intervals, now within +0.08 %)
PER_STOP = 64                     # ... and this many per stretch that ends where the path turns back (by more than
STOP_ANGLE = 17 * np.pi / 18      # this: a cusp, q′ → 0); 8 reversals: up to +0.38 % at 32 per stretch, +0.068 %
                                  # at 64 (2 reversals on 160 intervals: up to +0.22 %)
KNOT_SLIVER = 0.1                  # `with_knots`: a placed point closer to a knot than this share of its interval
                                   # goes (the grid is filled again): a 6e-6 interval beside a knot on a gantry
                                   # path left Clarabel without a solution for the controller's rate rows
# grid sizes for paths with more spline segments than DEFAULT_INTERVALS (each a compiled structure)
SIZES = (200, 256, 320, 400, 512, 640, 800, 1024, 1280, 1600, 2048, 2560, 3200, 4096, 5120, 6400, 8192, 10240,
         12800, 16384, 20000)
LINEAR_SIZES = (LINEAR_INTERVALS, 160) + tuple(k for k in SIZES if k <= MAX_AUTO_INTERVALS)   # θ̈ linear


def default_grid(path: JointPath, intervals: int) -> np.ndarray:
    """`intervals` + 1 points, half uniform in θ and half uniform in joint-space arc length."""
    s0, s1 = path.s_start, path.s_end
    fine = np.linspace(s0, s1, 4 * intervals + 1)
    speed = np.linalg.norm(path.dq(fine), axis=1)
    arc = np.concatenate(([0.0], np.cumsum(0.5 * (speed[1:] + speed[:-1]) * np.diff(fine))))
    w = arc / arc[-1] if arc[-1] > 0 else np.zeros_like(arc)
    cum = 0.5 * ((fine - s0) / (s1 - s0) + w)
    grid = np.interp(np.linspace(0.0, 1.0, intervals + 1), cum, fine)
    grid[0], grid[-1] = s0, s1
    return grid


def time_grid(law: TimeLaw, intervals: int, theta_share: float = THETA_SHARE,
              profile_share: float = 0.0, windows=()) -> np.ndarray:
    """`intervals` + 1 points uniform in theta_share·θ/L + profile_share·V/V_L + (rest)·t/T along `law`,
    V(θ) the variation of ln(θ̇² + `PROFILE_FLOOR` max θ̇²) up to θ; with `windows` ((lo, hi) in θ: `corners`)
    `CORNER_SHARE` of the weight spread evenly over them."""
    th = law.theta
    fine = np.linspace(th[0], th[-1], 8 * intervals + 1)
    _, _, t = law.at_theta(fine)                    # exact time law inside each coarse interval (t ∝ √θ at rest)
    t = np.maximum.accumulate(t)
    u = (fine - th[0]) / (th[-1] - th[0])
    corner_share = CORNER_SHARE if len(windows) else 0.0
    cum = theta_share * u + (1.0 - theta_share - profile_share - corner_share) * (t / t[-1] if t[-1] > 0 else u)
    if corner_share:                                # each window the same weight, uniform in θ inside it
        c = sum(np.clip((fine - lo) / (hi - lo), 0.0, 1.0) for lo, hi in windows)
        cum = cum + corner_share * c / c[-1]
    if profile_share > 0:
        b = np.maximum(law.b_at(fine), 0.0)
        v = np.concatenate(([0.0], np.cumsum(np.abs(np.diff(np.log(b + PROFILE_FLOOR * b.max()))))))
        cum = cum + profile_share * (v / v[-1] if v[-1] > 0 else u)
    grid = np.interp(np.linspace(0.0, 1.0, intervals + 1), cum, fine)
    grid[0], grid[-1] = th[0], th[-1]
    if (np.diff(grid) <= 0).any():                  # (flat stretches of cum: fall back to θ)
        grid = np.linspace(th[0], th[-1], intervals + 1)
    return grid


def with_knots(grid_of, knots: np.ndarray, intervals: int) -> np.ndarray:
    """`intervals` + 1 points that include every interior knot of the path's spline, the rest placed by
    `grid_of(k)` (k + 1 points). Between knots the path's second derivative is linear and the limits
    smooth; at a knot it bends, and on dense waypoint paths the worst torque sits there (measured on a
    200-waypoint Panda path with 1e-4 rad noise: +8 % over the wrist's limit between 8 check points per
    interval when knots were not grid points). A placed point within `KNOT_SLIVER` of its interval of a knot
    goes and the longest interval is halved instead: a sliver beside a knot follows nothing."""
    inner = np.asarray(knots, dtype=float)[1:-1]
    k = intervals - inner.size
    base = grid_of(max(k, 1))
    if inner.size and base.size > 2:                    # a placed point next to a knot would leave a sliver
        j = np.clip(np.searchsorted(base, inner), 1, base.size - 1)   # (base[j − 1] ≤ knot ≤ base[j])
        gap = base[j] - base[j - 1]
        near = np.where(inner - base[j - 1] <= base[j] - inner, j - 1, j)          # the nearer of the two
        close = np.abs(base[near] - inner) < KNOT_SLIVER * gap
        drop = near[close & (near > 0) & (near < base.size - 1)]
        base = np.delete(base, drop)
    grid = filled(np.union1d(base, inner), intervals)   # (knots that coincided with points)
    while grid.size - 1 > intervals:                    # (k < 1) merge the shortest non-knot interval
        d = np.diff(grid)
        movable = ~np.isin(grid[1:-1], inner)
        if not movable.any():
            break
        j = int(np.flatnonzero(movable)[np.argmin((d[:-1] + d[1:])[movable])])
        grid = np.delete(grid, j + 1)
    return grid


def filled(grid: np.ndarray, intervals: int) -> np.ndarray:
    """`grid` with its longest intervals halved until it has `intervals` (points that coincided when merged in)."""
    while grid.size - 1 < intervals:
        d = np.diff(grid)
        j = int(np.argmax(d))
        grid = np.insert(grid, j + 1, grid[j] + 0.5 * d[j])
    return grid


def onto(theta: np.ndarray, points, fixed=()) -> np.ndarray:
    """`theta` (P,) with, for each of `points` inside an interval, the nearer end of that interval moved onto it
    — or the other end where that one is a path end, in `fixed` (e.g. the spline's knots) or already moved; left
    inside where both are, or where the move would leave an interval shorter than `ONTO_MIN` of its length.
    The same number of points, in the same order."""
    theta = np.array(theta, dtype=float)
    pinned = np.isin(theta, np.asarray(fixed, dtype=float))
    pinned[[0, -1]] = True
    for p in np.sort(np.asarray(points, dtype=float)):
        j = int(np.clip(np.searchsorted(theta, p, side="right") - 1, 0, theta.size - 2))
        if not theta[j] < p < theta[j + 1]:
            pinned[theta == p] = True
            continue
        for i in sorted((j, j + 1), key=lambda i: abs(theta[i] - p)):
            if pinned[i]:                                # (the ends are)
                continue
            left, right = (theta[i - 1], theta[j + 1]) if i == j else (theta[j], theta[i + 1])
            if min(p - left, right - p) >= ONTO_MIN * (theta[j + 1] - theta[j]):
                theta[i], pinned[i] = p, True
                break
    return theta


def roughness(path: JointPath) -> float:
    """How much the spline's kinks at its knots bend the path: the median over interior knots of
    Δs·|Δq‴| (the jump of the third derivative times the knot spacing: the change of q″ it makes across a
    segment) over the median |q″| at the knots. Waypoints sampled from a smooth motion give ~0 (the
    jumps shrink with the spacing), noise of σ on samples h apart ~σ/h² against q″, > 1 where the noise
    dominates the path's bending."""
    k = np.asarray(path.knots, dtype=float)
    if k.size < 4:
        return 0.0
    jump = np.linalg.norm(np.diff(path(0.5 * (k[:-1] + k[1:]), 3), axis=0), axis=1)
    bend = np.median(np.linalg.norm(path(k, 2), axis=1))
    return float(np.median(0.5 * (k[2:] - k[:-2]) * jump) / bend) if bend > 0 else 0.0


def dense(path: JointPath, intervals: int) -> bool:
    """Whether the path plans as a dense waypoint path on a grid of `intervals` (refined for a 0.2 % gap
    estimate; every station on and θ̈ constant per interval where it does not plan θ̈ linear, `prepare`,
    `planner`): with at least a quarter as many spline segments as intervals, unless it has at most a third
    as many and is smooth (`roughness` ≤ `ROUGH`; docs/planner.md "Grid"). On 54 paths of 30–200 samples of
    smooth motions with 0, 1e-5 and 1e-4 rad noise, against 1600-interval plans: the dense pipeline from a
    quarter on ended up to +0.243 % from converged (median plan 106 ms), this rule within +0.076 % (69 ms).
    With more knots than a third of the grid too few points are left to place in time (79 segments on 160
    intervals: up to +0.41 %)."""
    segments = len(path.knots) - 1
    if segments < intervals / DENSE_SHARE:
        return False
    return segments > intervals / SMOOTH_SHARE or roughness(path) > ROUGH


def takes_knots(inner: int, intervals: int) -> bool:
    """Whether the default grid of `intervals` puts a point on each of the path's `inner` interior knots
    (`with_knots`): while they are at most three quarters of its intervals."""
    return inner <= intervals - intervals // 4


def turns(path: JointPath, angle: float = TURN_ANGLE) -> int:
    """How many interior knots the path turns at: where the chords to and from the neighbouring knots (in
    joint space) meet at more than `angle`. Random waypoints turn at almost every knot (each segment a
    motion of its own, whose speed rises and falls); samples of a smooth motion, noisy or not, at few. With
    `STOP_ANGLE`: the knots where it turns back (a cusp: the joint speeds stop while θ̇ need not)."""
    return int(np.sum(_turn_cosines(path) < np.cos(angle)))


def corners(path: JointPath, cos=None) -> list:
    """(lo, hi) in θ around each interior knot where the path turns (`TURN_ANGLE`) between two where it runs
    straight on (`STRAIGHT_ANGLE`): the spline segments on either side. A joint-space planner's polyline sampled densely turns there
    within a segment or so, and the optimal θ̇² rises and falls again inside it as the limiting joint changes
    (ur10: a bump of +40 % within 0.4 of a segment, one interval of the time-placed grid, +0.19 % in all);
    random waypoints turn at every knot (each segment a motion of its own: `PER_TURN`)."""
    cos = _turn_cosines(path) if cos is None else cos          # (`cos`: `_turn_cosines(path)`, when known)
    turn = (cos < np.cos(TURN_ANGLE)) & (cos >= np.cos(STOP_ANGLE))        # (stops: `PER_STOP`)
    straight = cos > np.cos(STRAIGHT_ANGLE)
    k = np.asarray(path.knots, dtype=float)
    return [(float(k[i]), float(k[i + 2])) for i in range(1, cos.size - 1)
            if turn[i] and straight[i - 1] and straight[i + 1]]


def _turn_cosines(path: JointPath) -> np.ndarray:
    """(knots − 2,) the cosine of the angle between the chords to and from each interior knot."""
    d = np.diff(path.q(np.asarray(path.knots, dtype=float)), axis=0)
    size = np.linalg.norm(d, axis=1)
    return np.einsum("ij,ij->i", d[:-1], d[1:]) / np.maximum(size[:-1] * size[1:], 1e-300)


def intervals_for(path: JointPath, linear: bool = False) -> int:
    """Default number of intervals: `DEFAULT_INTERVALS` (`LINEAR_INTERVALS` for plans with θ̈ linear per
    interval on a path that is not dense on them, at least `PER_TURN` per stretch between its `turns`
    (`PER_STOP` before a stop) — or on one that turns at most of its knots (random waypoints: not dense
    however many); a smooth path of many waypoints: the smallest size of `SIZES` it is not dense on,
    `dense`), or for other paths of many spline segments the next size of `SIZES` with at least
    `PER_SEGMENT` intervals per segment (one compiled structure per size). A dense waypoint path bends at
    every knot, and θ̈ constant per interval cannot follow it with fewer (measured on 200-waypoint paths
    with 1e-4 rad noise: +0.38 % at N = 200, +0.07 % at 400, +0.01 % at 800).
    Beyond `MAX_AUTO_INTERVALS` only as many as put a point on every knot (`takes_knots`): with
    2–3 knots inside an interval the limits peak at kinks no station follows, and repairs stall (10 000
    waypoints with 1e-4 rad noise on the iiwa 7: 1.6 % over the torque limit at 6400 intervals after two
    splits in 52 s; within 0.09 % at 16 384 with every knot, in about a minute)."""
    segments = max(len(path.knots) - 1, 1)
    cos = _turn_cosines(path) if linear else np.zeros(0)
    stretches, stops = int(np.sum(cos < np.cos(TURN_ANGLE))) + 1, int(np.sum(cos < np.cos(STOP_ANGLE)))
    turned = PER_TURN * stretches + (PER_STOP - PER_TURN) * stops if stretches > 1 else 0
    cornered = PER_CORNER * len(corners(path, cos)) if linear else 0
    turned += cornered
    if linear and (segments < LINEAR_GATE or roughness(path) <= ROUGH or 2 * stretches > segments):
        for n in LINEAR_SIZES:
            if n >= turned and not dense(path, n):      # the smallest size a smooth path is not dense on
                return n
    need = max(PER_SEGMENT * segments, turned if cornered else 0)   # (a polyline's corners read as rough)
    for n in SIZES:
        if n >= need or (n >= MAX_AUTO_INTERVALS and takes_knots(segments - 1, n)):
            return n
    return MAX_INTERVALS


def split_grid(theta: np.ndarray, bad: np.ndarray, knots=None) -> np.ndarray:
    """`theta` with the intervals marked `bad` (and their neighbours) halved — or, where `knots` (the
    path's spline knots) lie inside one, split at those knots instead: the limits have a kink at a knot
    (`samples.KnotSamples`), which a grid point there follows — then the longest intervals halved until the
    size is the next of `SIZES` (so the refined problem is a structure compiled once)."""
    bad = np.asarray(bad, bool).copy()
    bad[1:] |= bad[:-1].copy()
    bad[:-1] |= bad[1:].copy()
    at_knots, has = _knots_inside(theta, bad, knots)
    return to_size(np.union1d(theta, np.concatenate([0.5 * (theta[:-1] + theta[1:])[bad & ~has], at_knots])))


def _knots_inside(theta: np.ndarray, cut: np.ndarray, knots) -> tuple[np.ndarray, np.ndarray]:
    """(the path's `knots` strictly inside the intervals `cut` (N,) bool, (N,) bool: the intervals holding one)."""
    has = np.zeros(cut.size, bool)
    if knots is None:
        return np.zeros(0), has
    knots = np.asarray(knots, dtype=float)
    j = np.searchsorted(theta, knots, side="right") - 1
    inner = (j >= 0) & (j < cut.size) & ~np.isin(knots, theta)
    inner[inner] = cut[j[inner]]
    has[j[inner]] = True
    return knots[inner], has


def split_into(theta: np.ndarray, pieces: np.ndarray, knots=None) -> np.ndarray:
    """`theta` with interval j cut into `pieces[j]` equal parts — where the path's `knots` lie inside one, at
    those knots first (as `split_grid`), then its longest parts halved — filled to the next of `SIZES`: several
    halvings at once (`refine.pieces_for_gap`)."""
    pieces = np.asarray(pieces, int)
    at_knots, has = _knots_inside(theta, pieces > 1, knots)
    k = np.where(has, 1, pieces)                         # equal parts where no knot is inside
    first = np.repeat(np.arange(k.size), k - 1)
    step = np.arange(first.size) - np.repeat(np.cumsum(k - 1) - (k - 1), k - 1) + 1
    new = np.union1d(theta, theta[first] + np.diff(theta)[first] * step / k[first])
    new = np.union1d(new, at_knots)
    for i in np.flatnonzero(has):                        # at the knots, then the longest parts halved
        while np.sum((new > theta[i]) & (new <= theta[i + 1])) < pieces[i]:
            m = np.flatnonzero((new[:-1] >= theta[i]) & (new[1:] <= theta[i + 1]))
            m = m[np.argmax(np.diff(new)[m])]
            new = np.insert(new, m + 1, 0.5 * (new[m] + new[m + 1]))
    return to_size(new)


def to_size(new: np.ndarray) -> np.ndarray:
    """`new` with its longest intervals halved until its size is the next of `SIZES` (a structure compiled once)."""
    target = next((n for n in SIZES if n >= new.size - 1), MAX_INTERVALS)
    while new.size - 1 < target:
        k = min(target - (new.size - 1), new.size - 1)
        d = np.diff(new)
        longest = np.sort(np.argsort(-d, kind="stable")[:k])
        new = np.union1d(new, 0.5 * (new[longest] + new[longest + 1]))
    return new


def user_intervals(grid, spec) -> int | None:
    """The number of intervals of a grid the user sized or gave (`parse_grid`'s spec), None for the default."""
    if grid is None or isinstance(grid, str):
        return None
    return int(spec) if np.isscalar(spec) else int(np.size(spec)) - 1


def parse_grid(path: JointPath, grid) -> tuple[str, int | np.ndarray]:
    """("adaptive", N) or ("fixed", grid points) from the user's `grid` option; `InputError` otherwise."""
    if grid is None or (isinstance(grid, str) and grid == "adaptive"):
        return "adaptive", intervals_for(path)
    if isinstance(grid, (str, bytes, bool, np.bool_)):
        raise InputError(f"grid: expected 'adaptive', a number of intervals or grid points, got {short_repr(grid)}")
    if np.isscalar(grid):
        try:
            k = float(grid)
        except (TypeError, ValueError):
            raise InputError(f"grid: expected 'adaptive', a number of intervals or grid points, got {short_repr(grid)}") from None
        if not np.isfinite(k) or k != int(k):
            raise InputError(f"grid: expected a whole number of intervals, got {short_repr(grid)}")
        if not 2 <= k <= MAX_INTERVALS:
            raise InputError(f"grid: need 2 to {MAX_INTERVALS} intervals, got {int(k)}")
        return "adaptive", int(k)
    try:
        if np.iscomplexobj(grid) or isinstance(grid, dict):
            raise TypeError
        g = np.array(grid, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError("grid: expected a number of intervals or an increasing array of path parameters") from None
    if g.size < 3 or g.size > MAX_INTERVALS + 1 or not np.isfinite(g).all() or (np.diff(g) <= 0).any():
        raise InputError(f"grid: expected 3 to {MAX_INTERVALS + 1} finite, strictly increasing path parameters, got "
                         f"{short_repr(grid)}")
    tol = 1e-9 * max(abs(path.s_start), abs(path.s_end), path.s_end - path.s_start)
    if abs(g[0] - path.s_start) > tol or abs(g[-1] - path.s_end) > tol:
        raise InputError(f"grid: must start at {path.s_start:g} and end at {path.s_end:g} (the path's parameter "
                         f"interval), got [{g[0]:g}, {g[-1]:g}]")
    g[0], g[-1] = path.s_start, path.s_end
    return "fixed", g


def rest_to_rest_law(blocks, theta, b_ref) -> TimeLaw | None:
    """The reachability profile (`socp.reachability`) from rest to rest on grid `theta`, the blocks' √b
    terms on their tangent at `b_ref`, as a `TimeLaw`; None where it does not apply, has no motion or
    stops inside the path."""
    b = reachable_profile(linearised(blocks, b_ref), theta, 0.0, 0.0, turn_blocks=linearised(blocks, None))
    if b is None or not np.isfinite(b).all() or b.max() <= 0:
        return None
    try:
        return TimeLaw(theta, b)
    except ValueError:                                  # a stop inside the path
        return None


def linearised(blocks, b_ref):
    """The blocks with every √b term replaced by its tangent at b_ref (for estimates only); b_ref None: left
    out (the rows of the path's geometry and the other terms alone)."""
    out = []
    sq = None if b_ref is None else np.sqrt(np.maximum(np.asarray(b_ref, dtype=float), 1e-300))[:, None]
    for blk in blocks:
        if not (blk.uses_r and np.any(blk.C)):
            out.append(blk)
            continue
        shift = 0.0 if sq is None else 0.5 * blk.C * sq
        B = blk.B if sq is None else blk.B + 0.5 * blk.C / sq
        out.append(type(blk)(blk.kind, blk.joints, blk.A, B, np.zeros_like(blk.C),
                             blk.lo - shift, blk.hi - shift, blk.has_lo, blk.has_hi, blk.uses_a, False, blk.points,
                             blk.equality))
    return out
