"""Cartesian paths of the tool: lift, transfer (a swing about the base axis or a line), descent, joined
by tangent-continuous cubic Bézier blends, with the tool turning about the vertical during the transfer."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .cell import Cell, Slot, wrap_angle, tool_down_pose


def _dense_line(a, b, step):
    m = max(2, int(math.ceil(np.linalg.norm(b - a) / step)) + 1)
    t = np.linspace(0.0, 1.0, m)[:, None]
    return a + t * (b - a)


def _dense_swing(a, b, step):
    """Horizontal transfer from a to b (same z) as a swing about the base's vertical axis: radius and
    azimuth interpolated linearly (an Archimedean arc), so the tool keeps away from the robot's base.
    Falls back to a straight line when either end is (nearly) on the axis."""
    ra, rb = math.hypot(a[0], a[1]), math.hypot(b[0], b[1])
    if min(ra, rb) < 0.05:
        return _dense_line(a, b, step)
    pa, pb = math.atan2(a[1], a[0]), math.atan2(b[1], b[0])
    dphi = wrap_angle(pb - pa)
    est = abs(dphi) * 0.5 * (ra + rb) + abs(rb - ra)
    m = max(2, int(math.ceil(est / step)) + 1)
    t = np.linspace(0.0, 1.0, m)
    r = ra + t * (rb - ra)
    phi = pa + t * dphi
    pts = np.stack([r * np.cos(phi), r * np.sin(phi), a[2] + t * (b[2] - a[2])], axis=1)
    pts[0], pts[-1] = a, b
    return pts


def _arc_length(pts):
    return np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(pts, axis=0), axis=1))))


def _blend_corners(pieces, radius, step):
    """Join dense pieces (each (m, 3), consecutive pieces share an end point) and round every joint
    between two pieces with a cubic Bézier from the point at arc length b before it to the point b after
    it, tangent to both (handles (2/3)·b, which is the quadratic Bézier with its control point at the
    corner when both sides are straight). b ≤ radius and ≤ half of each adjoining piece."""
    lens = [float(_arc_length(p)[-1]) for p in pieces]
    pts = pieces[0]
    for k in range(1, len(pieces)):
        pts = np.vstack([pts, pieces[k][1:]])
    s = _arc_length(pts)
    corners = np.cumsum(lens)[:-1]
    out_pts, out_s = pts, s
    # last corner first: a blend shortens the path only after the arc length where it starts, so the
    # corners before it keep their arc-length positions
    for k in range(len(corners) - 1, -1, -1):
        b = min(radius, 0.5 * lens[k], 0.5 * lens[k + 1])
        if b <= 1e-6:
            continue
        s_cur = _arc_length(out_pts)
        sc_cur = corners[k]
        interp = lambda sv: np.array([np.interp(sv, s_cur, out_pts[:, i]) for i in range(3)])  # noqa: E731
        A, B = interp(sc_cur - b), interp(sc_cur + b)
        tA = interp(sc_cur - b) - interp(sc_cur - b - min(1e-4, b / 4))
        tB = interp(sc_cur + b + min(1e-4, b / 4)) - interp(sc_cur + b)
        tA /= np.linalg.norm(tA)
        tB /= np.linalg.norm(tB)
        h = 2.0 / 3.0 * b
        m = max(8, int(math.ceil(2 * b / step)) + 1)
        t = np.linspace(0.0, 1.0, m)[:, None]
        C1, C2 = A + h * tA, B - h * tB
        bez = (1 - t) ** 3 * A + 3 * (1 - t) ** 2 * t * C1 + 3 * (1 - t) * t * t * C2 + t ** 3 * B
        before = out_pts[s_cur < sc_cur - b]
        after = out_pts[s_cur > sc_cur + b]
        out_pts = np.vstack([before, bez, after])
        out_s = _arc_length(out_pts)
    return out_pts, out_s


@dataclass
class CartesianPath:
    poses: np.ndarray        # (M, 4, 4) TCP poses
    u: np.ndarray            # (M,) normalised path parameter in [0, 1] (arc length)
    length: float            # m
    waypoints: np.ndarray    # corner points (pick, lifted, above place, place) (4, 3)
    mid: np.ndarray | None = None   # (M − 1, 4, 4) TCP poses of the path halfway (in arc length) between samples


def cartesian_path(cell: Cell, slot: Slot, samples: int | None = None) -> CartesianPath:
    """Pick → lift → transfer → descend → place for one slot, sampled at ``samples`` poses uniform in
    arc length. Lift and descent are vertical; the transfer is horizontal at the higher of pick and place
    plus approach height and clearance, either a swing about the base axis ("arc", default) or a straight
    line ("line"); the corners are blended. The tool yaw follows the arm's azimuth and turns the rest of
    the way (to the slot's yaw) with a smooth step over the transfer."""
    M = samples or cell.samples
    p0 = cell.pick[:3, 3]
    p3 = slot.place[:3, 3]
    z_safe = max(p0[2], p3[2]) + cell.approach_height + cell.clearance
    p1 = np.array([p0[0], p0[1], z_safe])
    p2 = np.array([p3[0], p3[1], z_safe])
    step = 1e-3
    transfer = _dense_swing(p1, p2, step) if cell.transfer == "arc" else _dense_line(p1, p2, step)
    pieces = [_dense_line(p0, p1, step), transfer, _dense_line(p2, p3, step)]
    lens = [float(_arc_length(p)[-1]) for p in pieces]
    pts, s = _blend_corners(pieces, cell.blend_radius, step)
    total = float(s[-1])
    su = np.linspace(0.0, total, M)
    sm = 0.5 * (su[1:] + su[:-1])                      # halfway between samples: where the spline is judged
    pos = np.stack([np.interp(su, s, pts[:, k]) for k in range(3)], axis=1)
    pos[0], pos[-1] = p0, p3
    pos_m = np.stack([np.interp(sm, s, pts[:, k]) for k in range(3)], axis=1)
    # yaw = pick yaw + change of azimuth + smooth step of the remaining turn over the transfer
    az = np.unwrap(np.arctan2(pos[:, 1], pos[:, 0]))
    yaw0 = math.atan2(cell.pick[1, 0], cell.pick[0, 0])
    rest = wrap_angle(slot.yaw - yaw0 - (az[-1] - az[0]))
    b1 = min(cell.blend_radius, 0.5 * lens[0], 0.5 * lens[1])
    b2 = min(cell.blend_radius, 0.5 * lens[1], 0.5 * lens[2])
    s_a, s_b = (lens[0] - b1) / (lens[0] + lens[1] + lens[2]) * total, total - (lens[2] - b2) / sum(lens) * total

    def yaw_at(sv, daz):
        x = np.clip((sv - s_a) / max(s_b - s_a, 1e-12), 0.0, 1.0)
        return yaw0 + daz + rest * (x * x * (3.0 - 2.0 * x))

    yaw = yaw_at(su, az - az[0])
    poses = np.stack([tool_down_pose(pos[k], yaw[k]) for k in range(M)])
    poses[0] = cell.pick
    poses[-1] = slot.place
    both = np.empty((2 * M - 1, 3))                    # samples and midpoints in turn: one unwrapped azimuth
    both[0::2], both[1::2] = pos, pos_m
    az_b = np.unwrap(np.arctan2(both[:, 1], both[:, 0]))
    yaw_m = yaw_at(sm, az_b[1::2] - az_b[0])
    mid = np.stack([tool_down_pose(pos_m[k], yaw_m[k]) for k in range(M - 1)])
    return CartesianPath(poses, su / total, total, np.array([p0, p1, p2, p3]), mid)
