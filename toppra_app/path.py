"""Joint-space geometric paths q(θ) with their first and second derivatives q′, q″.

A `JointPath` wraps a scipy piecewise polynomial (usually a `CubicSpline` through waypoints) and
evaluates q, q′ = dq/dθ and q″ = d²q/dθ² at any θ, vectorised over θ. The path parameter runs over
``[s_start, s_end]`` (``[0, 1]`` by default for waypoints); the time law θ(t) is the planner's job.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from scipy.interpolate import CubicHermiteSpline, CubicSpline, PPoly

from .checks import reals
from .errors import InputError, short_repr
from .limits.rows import per_joint_positive
from .waypoint_fit import fit_within


class PathSamples(NamedTuple):
    """q, q′, q″ at path parameters theta, each (N, n)."""
    theta: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray


DUPLICATE = 1e-9                   # waypoints this close (relative to max(1, |w|)) to the previous one are merged


class DuplicateWaypointWarning(UserWarning):
    """Consecutive identical waypoints were merged."""


class WaypointFitWarning(UserWarning):
    """No spline with fewer knots than a third of the waypoints stays within ``tolerance``: interpolated."""


def _domain(spline) -> tuple[float, float]:
    """Parameter interval of a scipy spline-like object."""
    if hasattr(spline, "x") and np.ndim(spline.x) == 1:          # PPoly, CubicSpline, Akima, Pchip
        x = np.asarray(spline.x, dtype=float)
        return float(x[0]), float(x[-1])
    if hasattr(spline, "t") and hasattr(spline, "k"):            # BSpline
        t, k = np.asarray(spline.t, dtype=float), int(spline.k)
        return float(t[k]), float(t[-k - 1])
    if hasattr(spline, "path_interval"):      # toppra's geometric paths (SplineInterpolator)
        raise InputError("path: a toppra path is not a scipy spline; JointPath.from_waypoints(waypoints, s=ss, "
                         "bc_type=...) is the cubic spline of toppra's SplineInterpolator(ss, waypoints, bc_type=...)")
    raise InputError("path: expected a scipy spline (CubicSpline, PPoly or BSpline) with a parameter interval")


class JointPath:
    """A joint-space path q(θ), θ ∈ [s_start, s_end], from a scipy spline.

    ``JointPath(spline)`` accepts any scipy piecewise polynomial or B-spline whose values are
    vectors of joint positions (``spline(θ)`` of shape (..., n)) and that can be differentiated
    (``spline(θ, nu)``). Use `from_waypoints` to interpolate waypoints.
    """

    def __init__(self, spline, *, waypoints=None, knots=None, tolerance=None):
        if not callable(spline):
            raise InputError(f"path: expected a scipy spline, got {type(spline).__name__}")
        self.spline = spline
        self.s_start, self.s_end = _domain(spline)
        if not (np.isfinite(self.s_start) and np.isfinite(self.s_end) and self.s_end > self.s_start):
            raise InputError(f"path: parameter interval [{self.s_start}, {self.s_end}] must be finite and increasing")
        try:
            probe = np.asarray(spline(np.array([self.s_start]), 2), dtype=float)
        except Exception as exc:                                   # noqa: BLE001 - any scipy failure
            raise InputError(f"path: the spline cannot be evaluated with derivatives ({exc})") from None
        if probe.ndim == 0 or probe.shape[0] != 1:   # (numpy's "cannot reshape array of size 112 into shape (16,1)")
            raise InputError(f"path: the spline must take the path parameter along its first axis (scipy's axis=0): "
                             f"at 1 parameter it gives values of shape {probe.shape}, not (1, joints)")
        self.dof = 1 if probe.ndim == 1 else int(np.prod(probe.shape[1:]))
        if knots is None:
            knots = getattr(spline, "x", None)
            if knots is None or np.ndim(knots) != 1:
                knots = np.unique(np.clip(np.asarray(getattr(spline, "t", [self.s_start, self.s_end])),
                                          self.s_start, self.s_end))
        self.knots = np.asarray(knots, dtype=float)
        self.waypoints = None if waypoints is None else np.asarray(waypoints, dtype=float)
        self.tolerance = tolerance            # (n,): fitted within it of the waypoints (`from_waypoints`); None
        probe_all = self.q(np.linspace(self.s_start, self.s_end, 16))
        if not np.isfinite(probe_all).all():
            raise InputError("path: the spline gives non-finite joint positions")

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_spline(cls, spline) -> "JointPath":
        """Wrap an existing scipy spline (CubicSpline, PPoly, BSpline, ...)."""
        return cls(spline)

    @classmethod
    def from_waypoints(cls, waypoints, s=None, bc_type="not-a-knot", tolerance=None) -> "JointPath":
        """Cubic spline through ``waypoints`` (m, n) at path parameters ``s`` (default uniform on [0, 1]).

        With ``tolerance`` (a number or one per joint, in the waypoints' units), a cubic spline with as
        few knots as it takes to pass within it of every waypoint (and exactly through the first and
        last; `toppra_app.waypoint_fit`; ``bc_type`` is then unused): for recorded or dense noisy
        waypoints, whose noise would otherwise become curvature that slows the motion (docs/planner.md).
        Where no such spline has fewer knot intervals than a third of the waypoints, the waypoints are
        interpolated, with a `WaypointFitWarning`.

        Consecutive duplicate waypoints (equal to `DUPLICATE` × max(1, |w|)) are merged, with a warning; two
        waypoints give a straight line. Raises `InputError` (a ValueError) naming the field for NaN, too few
        waypoints, a non-increasing ``s`` or a tolerance that is not positive and finite.
        """
        W = reals(waypoints, "waypoints", "an (m, n) array of real numbers")
        if W.ndim == 1:
            W = W[:, None]
        if W.ndim != 2 or W.shape[1] == 0:
            raise InputError(f"waypoints: expected an (m, n) array (one row per waypoint), got shape {W.shape}")
        bad = np.argwhere(~np.isfinite(W))
        if bad.size:
            raise InputError(f"waypoints: row {bad[0][0]}, joint {bad[0][1]}: not a finite number ({W[tuple(bad[0])]})")
        if W.shape[0] < 2:
            raise InputError(f"waypoints: need at least 2 waypoints, got {W.shape[0]}")
        tol = None if tolerance is None else per_joint_positive(tolerance, W.shape[1], "tolerance",
                                                                allow_inf=False)
        if s is None:
            S = None
        else:
            S = reals(s, "s", "one number per waypoint")
            if sum(d > 1 for d in S.shape) > 1:     # (a 2-D s was flattened: [[0, 1], [2, 3]] taken for four
                raise InputError(f"s: expected a 1-D array, one number per waypoint, got shape {S.shape}")  # values)
            S = S.reshape(-1)
            if S.shape[0] != W.shape[0]:
                raise InputError(f"s: expected {W.shape[0]} values (one per waypoint), got {S.shape[0]}")
            if not np.isfinite(S).all():
                raise InputError(f"s: value {int(np.flatnonzero(~np.isfinite(S))[0])} is not a finite number")
            with np.errstate(over="ignore"):
                steps, span = np.diff(S), S[-1] - S[0]
            if not (np.isfinite(steps).all() and np.isfinite(span)):   # (scipy's "dydx" error, blamed on bc_type)
                raise InputError(f"s: the span from {S[0]:g} to {S[-1]:g} overflows a double; use a smaller scale")
            if (steps <= 0).any():
                k = int(np.flatnonzero(steps <= 0)[0])
                raise InputError(f"s: must be strictly increasing, but s[{k + 1}] = {S[k + 1]} <= s[{k}] = {S[k]}")
        # merge consecutive duplicates — also near ones: one 1e-11 rad from the previous waypoint was a point of its
        # own on the uniform s, a near-stop there, and a path 10 % slower than with the exact duplicate
        scale = max(1.0, float(np.abs(W).max()))
        same = np.all(np.abs(np.diff(W, axis=0)) <= DUPLICATE * scale, axis=1)
        if same.any():
            keep = np.concatenate(([True], ~same))
            dups = np.flatnonzero(same) + 1
            listed = ", ".join(str(k) for k in dups[:5]) + (f", … ({dups.size} in all)" if dups.size > 5 else "")
            warnings.warn(f"waypoints: {'waypoint' if dups.size == 1 else 'waypoints'} {listed} (counted from 0) "
                          f"{'repeats' if dups.size == 1 else 'repeat'} the previous one (to {DUPLICATE:g} in every "
                          f"joint) and {'was' if dups.size == 1 else 'were'} merged", DuplicateWaypointWarning,
                          stacklevel=2)
            moved = float(np.abs(W - W[0]).max())
            W = W[keep]
            if S is not None:
                # keep the s of the last of each run at the end, so the path still spans [s0, s_end]
                last = S[-1]
                S = S[keep]
                S[-1] = last
            if W.shape[0] < 2:
                raise InputError("waypoints: all waypoints are identical, the path has zero length" if moved == 0 else
                                 f"waypoints: each waypoint repeats the previous one to {DUPLICATE * scale:.3g} in "
                                 f"every joint (the largest move from the first is {moved:.3g}), so they were merged "
                                 f"into one and the path has zero length; a smaller motion than that cannot be planned")
        if S is None:
            S = np.linspace(0.0, 1.0, W.shape[0])
        if W.shape[0] == 2:
            # straight line: q(θ) = w0 + (θ − s0) (w1 − w0) / (s1 − s0)
            slope = (W[1] - W[0]) / (S[1] - S[0])
            coeffs = np.zeros((4, 1, W.shape[1]))
            coeffs[2, 0] = slope
            coeffs[3, 0] = W[0]
            spline = PPoly(coeffs, S)
        else:
            fitted, miss = (None, None) if tol is None else fit_within(S, W, tol)
            if fitted is not None:
                return cls(fitted, waypoints=W, tolerance=tol)
            if miss is not None:
                K, i, j, d = miss
                warnings.warn(f"tolerance: no cubic spline with at most {K} knot intervals (a third of the "
                              f"{W.shape[0]} waypoints) passes within {_short(tol)} of them all (that fit misses "
                              f"waypoint {i}, joint {j} by {d:.3g}); interpolating them", WaypointFitWarning,
                              stacklevel=2)
            try:
                with np.errstate(all="ignore"):     # (an s the spline overflows on is named below)
                    spline = _parabola(S, W) if W.shape[0] == 3 and isinstance(bc_type, str) and \
                        bc_type == "not-a-knot" else CubicSpline(S, W, axis=0, bc_type=bc_type)
            except ValueError as exc:
                raise InputError(f"bc_type: {exc}") from None
            except TypeError:               # (bc_type=None, 5, an object: scipy's TypeError leaked)
                raise InputError(f"bc_type: expected 'not-a-knot', 'clamped', 'natural', 'periodic' or a pair "
                                 f"((order, value), (order, value)) as scipy's CubicSpline, got {short_repr(bc_type)}") \
                    from None
        with np.errstate(all="ignore"):         # (else "path: ... non-finite joint positions", naming no argument)
            finite = np.isfinite(spline.c).all() and np.isfinite(spline(np.linspace(S[0], S[-1], 16))).all()
        if not finite:
            raise InputError(f"s: on [{S[0]:g}, {S[-1]:g}] with steps down to {np.diff(S).min():g} the cubic "
                             f"spline overflows a double; rescale s (any scale of s plans the same motion)")
        return cls(spline, waypoints=W, knots=S)

    # ------------------------------------------------------------------ evaluation
    def _eval(self, theta, order: int) -> np.ndarray:
        th = np.asarray(theta, dtype=float)
        scalar = th.ndim == 0
        th1 = np.atleast_1d(th).reshape(-1)
        out = np.asarray(self.spline(th1, order) if order else self.spline(th1), dtype=float)
        out = out.reshape(th1.shape[0], self.dof)
        return out[0] if scalar else out

    def __call__(self, theta, order: int = 0) -> np.ndarray:
        """q (order 0), q′ (1), q″ (2) or q‴ (3) at theta: shape (n,) for a scalar, (N, n) for an array."""
        if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or not 0 <= order <= 3:
            raise InputError(f"order: expected 0, 1, 2 or 3, got {short_repr(order)}")   # (1.5 and True read as 1)
        return self._eval(theta, int(order))

    def q(self, theta) -> np.ndarray:
        return self._eval(theta, 0)

    def dq(self, theta) -> np.ndarray:
        return self._eval(theta, 1)

    def ddq(self, theta) -> np.ndarray:
        return self._eval(theta, 2)

    def evaluate(self, theta) -> PathSamples:
        """(theta, q, q′, q″) at an array of path parameters."""
        th = np.atleast_1d(np.asarray(theta, dtype=float)).reshape(-1)
        return PathSamples(th, self._eval(th, 0), self._eval(th, 1), self._eval(th, 2))

    @property
    def n(self) -> int:
        return self.dof

    @property
    def length(self) -> float:
        """Length of the parameter interval, s_end − s_start."""
        return self.s_end - self.s_start

    def joint_arc_length(self, samples: int = 2001) -> np.ndarray:
        """Cumulative joint-space arc length ∫|q′| dθ at `samples` uniform parameters (for grids)."""
        th = np.linspace(self.s_start, self.s_end, samples)
        speed = np.linalg.norm(self.dq(th), axis=1)
        return np.concatenate(([0.0], np.cumsum(0.5 * (speed[1:] + speed[:-1]) * np.diff(th))))

    def __repr__(self) -> str:
        return f"JointPath(dof={self.dof}, s=[{self.s_start:g}, {self.s_end:g}], knots={len(self.knots)})"


def _parabola(S: np.ndarray, W: np.ndarray) -> CubicHermiteSpline:
    """The not-a-knot cubic spline through three waypoints (the parabola through them), equal to scipy's
    `CubicSpline(S, W, axis=0)` to the last bit. Its knot slopes s_0, s_1, s_2 solve the 3×3 system scipy solves
    (with chord slopes m_k and widths h_k: s_0 + s_1 = 2 m_0 and s_1 + s_2 = 2 m_1, the parabola's, and
    h_1 s_0 + 2 (h_0 + h_1) s_1 + h_0 s_2 = 3 (h_0 m_1 + h_1 m_0), continuity of q″ at the middle knot), by
    `numpy.linalg.solve` rather than `scipy.linalg.solve`: with scipy 1.17 that call on a 3×3 woke scipy's
    OpenBLAS threads, 5–8 ms on a 2-core machine with the other core busy, and the threads' spinning then
    slowed the rest of the plan by ~1.5× (a 3-waypoint plan 40 ms instead of 25)."""
    h = np.diff(S)
    m = np.diff(W, axis=0) / h[:, None]
    A = np.array([[1.0, 1.0, 0.0], [h[1], 2.0 * (h[0] + h[1]), h[0]], [0.0, 1.0, 1.0]])
    rhs = np.stack([2.0 * m[0], 3.0 * (h[0] * m[1] + h[1] * m[0]), 2.0 * m[1]])
    return CubicHermiteSpline(S, W, np.linalg.solve(A, rhs), axis=0)


def _short(tol: np.ndarray) -> str:
    return f"{tol[0]:g}" if np.all(tol == tol[0]) else "[" + ", ".join(f"{x:g}" for x in tol) + "]"


def as_joint_path(path) -> JointPath:
    """A `JointPath` from a JointPath, a scipy spline, or an (m, n) waypoint array."""
    if isinstance(path, JointPath):
        return path
    if path is None or isinstance(path, (str, bytes, dict)):   # (named "waypoints", not the argument given)
        raise InputError(f"path: expected a JointPath, a scipy spline or an (m, n) waypoint array, got "
                         f"{short_repr(path)}")
    if callable(path):
        return JointPath(path)
    return JointPath.from_waypoints(path)
