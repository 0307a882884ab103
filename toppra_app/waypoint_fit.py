"""A cubic spline with few knots that passes within a tolerance of every waypoint (`JointPath.from_waypoints`
with ``tolerance=``).

Recorded or sampled paths (teach-in recordings, controller logs, dense IK output) carry noise. The cubic
spline *through* such waypoints turns it into curvature: with noise σ at waypoint spacing h its q″ is
~4σ/h² RMS (1e-4 rad on 3000 waypoints over θ ∈ [0, 1]: 3400 RMS, 2·10⁴ at most, against 4.5 for the
motion without noise), and the torque term m̃ θ̈ + c̃ θ̇², c̃ ∋ M q″, then caps the path speed at every
waypoint. The time-optimal motion along that path is slow (7.4× longer in that example) and jagged, and
planning it to 0.1 % would need several grid intervals per waypoint (docs/planner.md, "Recorded or noisy
waypoints").

The fit here replaces it by the least-squares cubic B-spline on K knot intervals placed at quantiles of the
waypoints' path parameters (each knot interval holds waypoints, the Schoenberg–Whitney condition), with the
first and last waypoints held exactly (the motion starts and ends where the robot is), K doubled from
`FIRST_KNOTS` until every waypoint lies within the tolerance of its joint, then bisected down to the fewest
knots that do. Each fit is one sparse banded least-squares solve (`BSpline.design_matrix`), milliseconds
for thousands of waypoints. Where even K = m / `MIN_POINTS_PER_KNOT` knot intervals miss a waypoint (the
tolerance is below the waypoints' scatter, or they trace more shape than that many knots can follow), no
smoother spline is offered: `fit_within` says how that fit missed, and the caller interpolates (with a
warning naming the waypoint).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.interpolate import BSpline, PPoly
from scipy.sparse.linalg import spsolve

FIRST_KNOTS = 4             # knot intervals of the first fit
MIN_POINTS_PER_KNOT = 3     # at most m / this knot intervals: a fit with more is all but the interpolation
MIN_WAYPOINTS = 8           # fewer waypoints are interpolated (nothing to smooth)
BISECT_STEPS = 4            # after doubling: knots within 1/16 of the doubling step from the fewest


def thinnable(path) -> bool:
    """Whether a path's waypoints are enough for `fit_within` to offer fewer knots (the plan warnings' hint to
    ``tolerance=``): at least `MIN_WAYPOINTS`, and `FIRST_KNOTS` knot intervals at most a third of them."""
    m = len(path.waypoints) if path.waypoints is not None else len(path.knots)
    return m >= MIN_WAYPOINTS and m // MIN_POINTS_PER_KNOT >= FIRST_KNOTS


def fit_within(s: np.ndarray, W: np.ndarray, tolerance: np.ndarray) -> tuple[BSpline | None, tuple | None]:
    """(the cubic B-spline on [s₀, s_end] with the fewest uniform-in-waypoints knot intervals (doubled, then
    bisected) whose values at `s` are within `tolerance` (n,) of `W` (m, n) in every joint and which passes
    through the first and last waypoints, None), or (None, (knot intervals, waypoint, joint, miss)) of the
    finest fit tried where no such spline has at most m / `MIN_POINTS_PER_KNOT` knot intervals ((None, None)
    for fewer than `MIN_WAYPOINTS` waypoints)."""
    m = s.size
    most = m // MIN_POINTS_PER_KNOT
    if m < MIN_WAYPOINTS or most < FIRST_KNOTS:
        return None, None
    Y = W / tolerance                      # every joint's tolerance is 1 here
    fits = {}

    def within(K):
        fits[K] = _least_squares(s, Y, K)
        return bool(np.max(np.abs(fits[K][1])) <= 1.0)

    K = FIRST_KNOTS
    while not within(K):
        if K >= most:
            res = np.abs(fits[K][1]) * tolerance
            i, j = np.unravel_index(int(np.argmax(res)), res.shape)
            return None, (K, int(i), int(j), float(res[i, j]))
        K = min(2 * K, most)
    lo, hi = K // 2, K                     # lo fails (or is below the first size), hi holds
    for _ in range(BISECT_STEPS):
        if hi - lo <= 1 or lo < FIRST_KNOTS:
            break
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if within(mid) else (mid, hi)
    t, c = fits[hi][0].t, fits[hi][0].c * tolerance
    c[0], c[-1] = W[0], W[-1]                          # exactly, not through the scaling
    spline, held = BSpline(t, c, 3), np.all(W == W[0], axis=0)
    return (_holding(spline, held, W[0]) if held.any() else spline), None


def _holding(spline: BSpline, held: np.ndarray, values: np.ndarray) -> PPoly:
    """`spline` as a piecewise polynomial whose `held` joints stay at `values` exactly. A joint the waypoints hold
    (a tree's torso or other arm while one arm moves) came out of the least-squares B-spline with q′ ~ 1e-15 of
    either sign (Σ c B′ᵢ with equal c is zero only up to rounding), and so with Coulomb friction F_c sign(q′)
    switching on and off along the path — torques up to F_c off on a joint at rest, where interpolated waypoints
    give q′ = 0 and no friction."""
    x = np.unique(spline.t)
    coeffs = np.stack([spline(x[:-1], 3 - k) / math.factorial(3 - k) for k in range(4)])   # Taylor at each left end
    coeffs[:, :, held] = 0.0
    coeffs[3][:, held] = values[held]
    return PPoly(coeffs, x)


def _least_squares(s: np.ndarray, Y: np.ndarray, K: int) -> tuple[BSpline, np.ndarray]:
    """(the least-squares cubic B-spline of Y (m, n) at s on K knot intervals, with its end coefficients fixed
    to the first and last rows of Y, and the residuals (m, n))."""
    m = s.size
    inner = s[np.round(np.linspace(0, m - 1, K + 1)[1:-1]).astype(int)]
    t = np.concatenate([[s[0]] * 4, inner, [s[-1]] * 4])
    A = BSpline.design_matrix(s, t, 3).tocsc()             # (m, K + 3), four non-zeros a row
    c = np.zeros((K + 3, Y.shape[1]))
    c[0], c[-1] = Y[0], Y[-1]                              # a clamped spline's end values
    rhs = Y - A[:, [0]] @ c[[0]] - A[:, [K + 2]] @ c[[K + 2]]
    inside = A[:, 1:K + 2]
    normal = (inside.T @ inside).tocsc()                   # banded (seven diagonals), positive definite
    c[1:K + 2] = np.asarray(spsolve(normal, inside.T @ rhs)).reshape(K + 1, -1)
    return BSpline(t, c, 3), A @ c - Y
