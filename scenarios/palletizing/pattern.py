"""The stacking pattern: the slots of every layer on the pallet, and the check that they fit."""

from __future__ import annotations

import math

import numpy as np

from toppra_app.errors import InputError

from .cell import Cell, Slot, wrap_angle, rot_z, tool_down_pose

def make_slots(cell: Cell) -> list[Slot]:
    """Box positions, layer by layer. In the layer frame boxes lie in ``columns`` along x (their long
    side) and ``rows`` along y, spaced by the box size plus ``gap``, centred on the pallet; with
    ``alternate`` every second layer is turned by 90° about the pallet's vertical axis."""
    slots = []
    z_top = 0.0
    pallet_yaw = math.atan2(cell.pallet_pose[1, 0], cell.pallet_pose[0, 0])
    for layer in range(cell.layers):
        box = cell.layer_boxes[layer]
        L, W, H = box.size
        z_top += H
        turn = (math.pi / 2) if (cell.alternate and layer % 2 == 1) else 0.0
        Rl = rot_z(turn)[:2, :2]
        half = np.abs(Rl) @ np.array([0.5 * L, 0.5 * W])            # footprint half extents, pallet axes
        for row in range(cell.rows):
            for col in range(cell.columns):
                local = np.array([(col - 0.5 * (cell.columns - 1)) * (L + cell.gap),
                                  (row - 0.5 * (cell.rows - 1)) * (W + cell.gap)])
                xy = Rl @ local                                      # in the pallet frame
                centre = cell.pallet_pose[:3, :3] @ np.array([xy[0], xy[1], z_top - 0.5 * H]) + cell.pallet_pose[:3, 3]
                top = centre + cell.pallet_pose[:3, :3] @ np.array([0.0, 0.0, 0.5 * H])
                yaw = _place_yaw(cell, wrap_angle(pallet_yaw + turn), top)
                slots.append(Slot(len(slots), layer, row, col, box, yaw, centre,
                                  (float(half[0]), float(half[1])), tool_down_pose(top, yaw), yaw))
    return slots


def _place_yaw(cell: Cell, yaw: float, top: np.ndarray) -> float:
    """The box footprint is the same for yaw and yaw + π; take the one that needs the least turn of the
    wrist: the tool yaw relative to the arm's azimuth (which joint 1 follows) should change least."""
    yaw_pick = math.atan2(cell.pick[1, 0], cell.pick[0, 0])
    d_az = wrap_angle(math.atan2(top[1], top[0]) - math.atan2(cell.pick[1, 3], cell.pick[0, 3]))
    cands = (yaw, wrap_angle(yaw + math.pi))
    return min(cands, key=lambda y: abs(wrap_angle(y - yaw_pick - d_az)))


def check_slots(cell: Cell) -> None:
    """Every box on the pallet and no two boxes of a layer overlapping (pallet-frame rectangles)."""
    Tinv = np.linalg.inv(cell.pallet_pose)
    hx, hy = 0.5 * cell.pallet_size
    by_layer = {}
    for s in cell.slots:
        c = (Tinv @ np.r_[s.centre, 1.0])[:2]
        fx, fy = s.footprint
        if abs(c[0]) + fx > hx + 1e-9 or abs(c[1]) + fy > hy + 1e-9:
            raise InputError(f"{cell.source}: pattern: box {s.label} ({2 * fx:.3f} × {2 * fy:.3f} m at "
                             f"({c[0]:+.3f}, {c[1]:+.3f}) on the pallet) does not fit on the pallet of size "
                             f"{cell.pallet_size.tolist()} (fewer rows/columns, a smaller gap or a larger pallet)")
        for other, oc in by_layer.get(s.layer, []):
            ox, oy = other.footprint
            if abs(c[0] - oc[0]) < fx + ox - 1e-9 and abs(c[1] - oc[1]) < fy + oy - 1e-9:
                raise InputError(f"{cell.source}: pattern: boxes {other.label} and {s.label} overlap")
        by_layer.setdefault(s.layer, []).append((s, c))
