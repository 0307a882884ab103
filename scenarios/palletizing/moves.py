"""Joint paths of the moves: the pick and place postures (several starts × the box's symmetric yaws, the
best posture kept), reachability of the slots and IK along a move (Nicolato & Madrid's recursive IK,
`dynamics.inverse_kinematics`)."""

from __future__ import annotations

import dataclasses
import math
import pickle
import time
from dataclasses import dataclass

import numpy as np

from dynamics.inverse_kinematics import random_seeds, solve_ik_multistart
from toppra_app.errors import InputError

from .cartesian_path import CartesianPath, cartesian_path
from .cell import BoxType, Cell, Slot, TCP_FRAME, tool_down_pose, wrap_angle

RANDOM_STARTS = 8          # deterministic random starts tried when the current and home postures fail
RANDOM_SEED = 12           # of those starts (the same cell always gives the same postures)
LIMIT_MARGIN = 1e-3        # rad (m): pick and place postures and the tracked samples stay this far inside the
#                            joint limits. On a limit (xArm 7: joint6 of the pick posture at -1.69297 rad, the next
#                            samples held there) the joint spline through them dipped 2e-5 rad beyond it and the
#                            planner refused the reachable cell ("path leaves the position range")


def _pose_limits(cell: Cell) -> dict:
    """The joint limits for the pick and place postures and the tracking, shrunk by `LIMIT_MARGIN` (at most a
    quarter of a joint's range)."""
    lo, hi = np.asarray(cell.robot.q_min, float), np.asarray(cell.robot.q_max, float)
    m = np.minimum(LIMIT_MARGIN, 0.25 * np.where(np.isfinite(hi - lo), hi - lo, np.inf))
    return dict(q_min=lo + m, q_max=hi - m)


class IKFailure(InputError):
    pass


def symmetric_yaws(box: BoxType) -> tuple[float, ...]:
    """Turns about the vertical that leave a box's footprint unchanged: 0 and π, and ±π/2 too for a
    square footprint (length = width)."""
    L, W = float(box.size[0]), float(box.size[1])
    if abs(L - W) <= 1e-9 * max(L, W):
        return (0.0, 0.5 * math.pi, math.pi, -0.5 * math.pi)
    return (0.0, math.pi)


def _yaw(T) -> float:
    return math.atan2(T[1, 0], T[0, 0])


def _pose_text(T) -> str:
    p = T[:3, 3]
    return f"({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}) m, yaw {math.degrees(_yaw(T)):.1f}°"


def _unreachable(cell: Cell, field: str, who: str, pose, ms, hint: str) -> IKFailure:
    """One line: where, which box and move, the pose, and how close the best attempt came."""
    c = ms.closest
    yaws = len({t for t, *_ in ms.tried})
    starts = len({s for _, s, *_ in ms.tried})
    return IKFailure(f"{cell.source}: {field}: {who}: the pose {_pose_text(pose)} is out of reach of "
                     f"{cell.robot_name} with the gripper pointing down: closest {1e3 * c.pos_err:.1f} mm and "
                     f"{math.degrees(c.rot_err):.2f}° away after {ms.attempts} solves ({yaws} symmetric yaws × "
                     f"{starts} starts); {hint}")


def _solve_pose(cell: Cell, targets, current, first_stage=None, margin: bool = True):
    """Every target from the current posture; if none is reached, from the home (preferred) posture; then
    from `RANDOM_STARTS` deterministic random starts — the reached posture nearest to the current one.
    ``first_stage``: the solves from the current posture, when already made (`_from_current`). With ``margin`` the
    postures keep `LIMIT_MARGIN` inside the joint limits (`_pose_limits`); without, the robot's whole range (how
    close the robot can come to a pose, `_left_reach`)."""
    stages = [[current]]
    if not np.array_equal(current, cell.q_preferred):
        stages.append([cell.q_preferred])
    stages.append(random_seeds(cell.robot, RANDOM_STARTS, seed=RANDOM_SEED))
    return solve_ik_multistart(cell.robot, targets, stages, TCP_FRAME, reference=current,
                               rot_weight=cell.rot_weight, first_stage=first_stage,
                               **(_pose_limits(cell) if margin else {}))


def _from_current(cell: Cell, targets, current) -> list:
    """`_solve_pose`'s first stage — every target from the current posture — for many targets at once
    (`dynamics.ik.batch.solve_ik_batch`: the same results, the sweeps side by side)."""
    from dynamics.ik.batch import solve_ik_batch
    return solve_ik_batch(cell.robot, targets, [current] * len(targets), TCP_FRAME, rot_weight=cell.rot_weight,
                          **_pose_limits(cell))


def pick_posture(cell: Cell, solved: dict | None = None) -> np.ndarray:
    """Joint positions at the pick pose (the same every cycle): from the preferred posture, then from
    random starts (`_solve_pose`), towards the pick pose and the pick pose turned by π (the box and the
    conveyor are symmetric under a half turn); the reached posture nearest to the preferred one is kept.
    A turned pick becomes the cell's pick pose (`Cell.grasp_turn` = π: the payload is then seen turned).
    ``solved``: a dict kept by the caller over many cells; a cell whose robot, pick pose, preferred posture
    and rot_weight equal an earlier one's takes that one's posture (the solves are deterministic: the same
    result) — a batch's sweep variants of one robot and conveyor were solved again each, ~37 ms a variant."""
    if cell.q_pick is None:
        key = None if solved is None else pickle.dumps((cell.robot, cell.pick, cell.q_preferred, cell.rot_weight))
        if key in (solved or {}):
            cell.q_pick, cell.pick, cell.grasp_turn, cell.pose_ik["pick"] = (x.copy() if isinstance(x, np.ndarray)
                                                                               else x for x in solved[key])
            return cell.q_pick
        yaw = _yaw(cell.pick)
        targets = [cell.pick, tool_down_pose(cell.pick[:3, 3], wrap_angle(yaw + math.pi))]
        ms = _solve_pose(cell, targets, cell.q_preferred, _from_current(cell, targets, cell.q_preferred))
        cell.pose_ik["pick"] = ms
        if not ms.success:
            raise _unreachable(cell, "pick.position", "every box, loaded move, pick", cell.pick, ms,
                               "move the pick position closer to the robot")
        if ms.target == 1:
            cell.pick = targets[1]
            cell.grasp_turn = math.pi
        cell.q_pick = ms.best.q
        if key is not None:
            solved[key] = (cell.q_pick.copy(), cell.pick.copy(), cell.grasp_turn, ms)
    return cell.q_pick


def _place_targets(slot: Slot) -> list:
    return [tool_down_pose(slot.place[:3, 3], wrap_angle(slot.yaw + d)) for d in symmetric_yaws(slot.box)]


def place_posture(cell: Cell, slot: Slot, first_stage=None) -> tuple[Slot, np.ndarray]:
    """The slot (its place yaw possibly turned by the box's symmetry) and the joint positions at its place
    pose: from the pick posture (the previous one), the preferred (home) posture, then random starts
    (`_solve_pose`), towards every symmetric yaw; the reached posture nearest to the pick posture is kept
    and the slot in ``cell.slots`` replaced when its yaw changed. Raises `IKFailure` (box, move, pose,
    closest distance). ``first_stage``: its solves from the pick posture, when already made."""
    if slot.index in cell.q_place:
        return cell.slots[slot.index], cell.q_place[slot.index]
    q_pick = pick_posture(cell)
    targets = _place_targets(slot)
    ms = _solve_pose(cell, targets, q_pick, first_stage)
    cell.pose_ik[slot.index] = ms
    if not ms.success:
        raise _unreachable(cell, "pallet.position", f"box {slot.index + 1} ({slot.label}), loaded move, place",
                           slot.place, ms, "move the pallet closer or use fewer rows/columns/layers")
    if ms.target != 0:
        T = targets[ms.target]
        slot = dataclasses.replace(slot, yaw=_yaw(T), place=T)
        cell.slots[slot.index] = slot
    cell.q_place[slot.index] = ms.best.q
    return slot, ms.best.q


def slot_ik(cell: Cell, slot: Slot):
    """The pose IK of one slot's place pose (`place_posture`): the `MultiStartResult`."""
    place_posture(cell, slot)
    return cell.pose_ik[slot.index]


def check_reachable(cell: Cell) -> None:
    """The pick posture and every place posture (several starts × symmetric yaws), within the joint limits;
    the solves from the pick posture for all slots at once (`_from_current`), slot by slot after that."""
    q_pick = pick_posture(cell)
    todo = [s for s in cell.slots if s.index not in cell.q_place]
    targets = [_place_targets(s) for s in todo]
    solved = _from_current(cell, [T for ts in targets for T in ts], q_pick) if todo else []
    for s, ts in zip(todo, targets):
        place_posture(cell, s, solved[:len(ts)])
        solved = solved[len(ts):]


@dataclass
class MoveGeometry:
    slot: Slot
    cart: CartesianPath
    q: np.ndarray            # (M, n) joint samples along the loaded move
    ik_time: float
    ik_sweeps: int           # recursive sweeps over the move
    ik_newton: int           # Newton polish steps over the move
    ik_polished: int = 0     # samples the sweeps left outside the tolerance (polished)


def move_geometry(cell: Cell, slot: Slot) -> MoveGeometry:
    """IK along the loaded move's Cartesian path (to the slot's place pose as `place_posture` chose it),
    starting from the pick posture: the recursive sweeps with the velocity penalty near the position
    limits (eq. 23–24), a Newton polish where they fall short of the tolerance."""
    return move_geometries(cell, [slot])[0]


def move_geometries(cell: Cell, slots) -> list[MoveGeometry]:
    """`move_geometry` of several slots, their paths' IK run side by side (`dynamics.ik.batch.track_paths`:
    the same joint samples, one set of array operations per sample for all paths); each move's IK time
    is its share of the whole."""
    from dynamics.ik.batch import track_paths
    t0 = time.perf_counter()
    slots = [place_posture(cell, s)[0] for s in slots]
    carts = [cartesian_path(cell, s) for s in slots]
    tracks = track_paths(cell.robot, [c.poses for c in carts], pick_posture(cell), TCP_FRAME,
                         rot_weight=cell.rot_weight, predict=True, penalty=True, stop_at_failure=True,
                         **_pose_limits(cell))
    dt = (time.perf_counter() - t0) / max(len(slots), 1)
    out = []
    for slot, cart, tr in zip(slots, carts, tracks):
        if not tr.all_success:
            raise _left_reach(cell, slot, cart, tr)
        out.append(MoveGeometry(slot, cart, tr.q, dt, tr.total_sweeps, int(tr.newton_steps.sum()), tr.polished))
    return out


def _left_reach(cell: Cell, slot, cart, tr) -> IKFailure:
    """The first sample of a tracked path not reached, and how close the robot comes to its pose: the tracking's
    own attempt starts from the previous samples extrapolated (`predict`), which past the reach can cross a
    singularity into a far posture (a UR5e line out of reach: 78.8 mm and 90° where 6.5 mm is possible), so
    the pose is also solved from the previous sample's posture, the home posture and random starts
    (`_solve_pose`) and the nearer attempt (least √h, eq. 10) is named."""
    k = int(np.flatnonzero(~tr.success)[0])
    ms = _solve_pose(cell, [cart.poses[k]], tr.q[k - 1] if k else pick_posture(cell), margin=False)   # the robot's reach
    L2 = float(cell.rot_weight) ** 2
    pe, re = min((tr.pos_err[k], tr.rot_err[k]), (ms.closest.pos_err, ms.closest.rot_err),
                 key=lambda e: e[0] ** 2 + L2 * e[1] ** 2)
    where = (f"{cell.source}: pattern: box {slot.index + 1} ({slot.label}), loaded move: the path to the slot")
    if ms.success:                 # reachable, but not continuously from the samples before it
        return IKFailure(f"{where} cannot be followed by {cell.robot_name} past sample {k} of {len(tr.success)}: "
                         f"the pose {_pose_text(cart.poses[k])} is reached only in another posture (a joint "
                         f"limit or a singularity on the way); move the pallet or the pick")
    return IKFailure(f"{where} leaves the reach of {cell.robot_name} at sample {k + 1} of {len(tr.success)}, the "
                     f"pose {_pose_text(cart.poses[k])}: closest {1e3 * pe:.1f} mm and {math.degrees(re):.2f}° away "
                     f"({ms.attempts} more solves from other starts); move the pallet or the pick closer")
