"""Joint paths of the moves: the pick posture, reachability of the slots and IK along a move
(Nicolato & Madrid's recursive IK, `dynamics.inverse_kinematics`)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from dynamics.inverse_kinematics import solve_ik, track_path
from toppra_app.errors import InputError

from .cartesian_path import CartesianPath, cartesian_path
from .cell import Cell, Slot, TCP_FRAME

class IKFailure(InputError):
    pass


def pick_posture(cell: Cell) -> np.ndarray:
    """Joint positions at the pick pose, from the preferred posture (the same every cycle)."""
    if cell.q_pick is None:
        res = solve_ik(cell.robot, cell.pick, cell.q_preferred, TCP_FRAME, rot_weight=cell.rot_weight)
        if not res.success:
            raise IKFailure(f"{cell.source}: pick.position: the pick pose is out of reach of {cell.robot_name} "
                            f"(IK error {res.pos_err:.3g} m, {math.degrees(res.rot_err):.3g}°)")
        cell.q_pick = res.q
    return cell.q_pick


def slot_ik(cell: Cell, slot: Slot, q_start=None):
    """IK of the place pose of one slot, from the pick posture (for reachability checks)."""
    q0 = pick_posture(cell) if q_start is None else q_start
    return solve_ik(cell.robot, slot.place, q0, TCP_FRAME, rot_weight=cell.rot_weight)


def check_reachable(cell: Cell) -> None:
    """IK of the pick pose and of every place pose (from the pick posture), within the joint limits."""
    pick_posture(cell)
    for s in cell.slots:
        res = slot_ik(cell, s)
        if not res.success:
            p = s.place[:3, 3]
            raise IKFailure(f"{cell.source}: pallet.position: box {s.index + 1} ({s.label}) at ({p[0]:.3f}, {p[1]:.3f}, "
                            f"{p[2]:.3f}) m is out of reach of {cell.robot_name} with the gripper pointing down "
                            f"(IK error {res.pos_err:.3g} m, {math.degrees(res.rot_err):.3g}°); move the pallet "
                            f"closer or use fewer rows/columns/layers")


@dataclass
class MoveGeometry:
    slot: Slot
    cart: CartesianPath
    q: np.ndarray            # (M, n) joint samples along the loaded move
    ik_time: float
    ik_sweeps: int
    ik_newton: int


def move_geometry(cell: Cell, slot: Slot) -> MoveGeometry:
    """IK along the loaded move's Cartesian path, starting from the pick posture."""
    cart = cartesian_path(cell, slot)
    t0 = time.perf_counter()
    tr = track_path(cell.robot, cart.poses, pick_posture(cell), TCP_FRAME, rot_weight=cell.rot_weight, predict=True)
    dt = time.perf_counter() - t0
    if not tr.all_success:
        k = int(np.flatnonzero(~tr.success)[0])
        p = cart.poses[k][:3, 3]
        raise IKFailure(f"{cell.source}: pattern: box {slot.label}: the path to the slot leaves the reach of "
                        f"{cell.robot_name} at ({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}) m "
                        f"(IK error {tr.pos_err[k]:.3g} m, {math.degrees(tr.rot_err[k]):.3g}°)")
    return MoveGeometry(slot, cart, tr.q, dt, int(tr.sweeps.sum()), int(tr.newton_steps.sum()))
