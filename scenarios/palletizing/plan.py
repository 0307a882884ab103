"""Planning the pallet: one box at a time (`plan_box`: loaded move, optional empty-gripper comparison,
return move), and the whole pallet (`plan_pallet`)."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np

from dynamics.forward_kinematics import frame_pose
from toppra_app.errors import InfeasiblePathError

from .cartesian_path import CartesianPath
from .cell import Cell, Slot, TCP_FRAME
from .moves import MoveGeometry, move_geometries, move_geometry, pick_posture
from .results import MoveResult, NominalCheck, PalletReport

def _path_deviation(cell: Cell, path, cart: CartesianPath) -> tuple[float, float]:
    """Largest TCP distance (m) and tool turn (rad) between the joint spline and the Cartesian path halfway
    between IK samples (the path's own poses there, `CartesianPath.mid`) — the interpolation error of the spline.
    The chord between two samples stood in for the path: on the arc and the blends its sagitta (~0.5 mm at 80
    samples) was reported for a spline that kept within 0.06 mm of the path; the orientation was not reported."""
    um = 0.5 * (cart.u[1:] + cart.u[:-1])
    T = frame_pose(cell.robot, path.q(um), TCP_FRAME)
    cos = 0.5 * (np.einsum("kij,kij->k", T[:, :3, :3], cart.mid[:, :3, :3]) - 1.0)    # tr(R_pathᵀ R) = 1 + 2 cos φ
    return (float(np.linalg.norm(T[:, :3, 3] - cart.mid[:, :3, 3], axis=1).max()),
            float(np.arccos(np.clip(cos, -1.0, 1.0)).max()))


def select_boxes(cell: Cell, quick: bool = False, boxes=None) -> list[int]:
    """Slot indices to plan: all (default), the ones given, or with ``quick`` the first box of every layer."""
    if boxes is not None:
        return list(boxes)
    if quick:
        seen, out = set(), []
        for s in cell.slots:
            if s.layer not in seen:
                seen.add(s.layer)
                out.append(s.index)
        return out
    return [s.index for s in cell.slots]


@contextlib.contextmanager
def _move_context(cell: Cell, slot: Slot, move: str):
    """Planner errors name the cell file, the box and the move they happened in (same exception class), as the
    IK and collision errors do (they named neither the file nor the box number: "box L1R1C1, loaded move: ...")."""
    try:
        yield
    except InfeasiblePathError as exc:
        raise type(exc)(f"{cell.source}: box {slot.index + 1} ({slot.label}), {move}: {exc}") from None


@dataclass
class BoxPlans:
    """The plans of one box: its loaded and return moves, the nominal check and wall times (s)."""
    moves: list                  # [loaded, return] MoveResult
    check: NominalCheck | None
    ik_s: float
    plan_s: float
    reference_s: float           # plans without the cell's options (comparison)
    collision_s: float = 0.0     # checking both moves for collisions


def plan_box(cell: Cell, b: int, first_index: int = 0, *, nominal: bool = True, planner_options=None,
             geometry: MoveGeometry | None = None, check_collisions: bool = True) -> BoxPlans:
    """Plan the two moves of box `b` (slot index): the loaded move with the box merged into the model and
    the empty return move along the same Cartesian path backwards; with ``nominal`` also the loaded path
    planned for the empty gripper (re-using the compiled problem, only the payload changes) and executed
    with the box, to show what ignoring the payload would demand.

    On a frictionless robot without rate limits the return move is the nominal plan played backwards
    (`TimeOptimalPlan.reversed`: the same optimum, checked again) instead of a third plan. ``geometry``: the
    loaded move's joint path when already made (`move_geometries`), else its IK is run here. Without
    ``check_collisions`` the caller checks the moves (`collisions.check_move`) and sets their clearance."""
    from dynamics.motor_torques import motor_torques
    from toppra_app.path import JointPath
    from toppra_app.planner import TimeOptimalPlanner
    base_opts = dict(planner_options or {})
    opts = {**base_opts, **cell.planner_options()}
    compare = opts != base_opts or cell.reference_robot is not None
    reference_robot = cell.reference_robot or cell.robot
    t_ref = 0.0

    def unlimited(p, payload):
        nonlocal t_ref
        if not compare:
            return None
        t0 = time.perf_counter()
        plan = TimeOptimalPlanner(reference_robot, p, grid=cell.grid, gap_target=cell.gap_target, **base_opts).plan(payload=payload)
        t_ref += time.perf_counter() - t0
        return plan

    slot = cell.slots[b]
    t0 = time.perf_counter()
    geo = move_geometry(cell, slot) if geometry is None else geometry
    slot = geo.slot                                        # its place yaw as the pose IK chose it
    t_ik = time.perf_counter() - t0 if geometry is None else geometry.ik_time
    load = slot.box.payload(cell.grasp_turn)
    path = JointPath.from_waypoints(geo.q, s=geo.cart.u)
    t0 = time.perf_counter()
    with _move_context(cell, slot, "loaded move"):
        planner = TimeOptimalPlanner(cell.robot, path, grid=cell.grid, gap_target=cell.gap_target, **opts)
        plan = planner.plan(payload=load)
    dt_plan = time.perf_counter() - t0
    t_plan = dt_plan
    loaded = MoveResult(first_index, b, "loaded", slot, load, path, plan, dt_plan, plan.reused_problem, geo.cart,
                        geo.ik_time, *_path_deviation(cell, path, geo.cart), unlimited(path, load),
                        ik_counts=dict(samples=len(geo.q), sweeps=geo.ik_sweeps, polished=geo.ik_polished,
                                       newton_steps=geo.ik_newton))
    check = nominal_plan = None
    if nominal:
        t0 = time.perf_counter()
        with _move_context(cell, slot, "loaded move planned without the box"):
            nominal_plan = planner.plan(payload=None)
        dt_replan = time.perf_counter() - t0
        t_plan += dt_replan
        if np.isfinite(cell.robot.tau_max).any():       # (no torque limit: nothing to compare; it read "0.0 %")
            smp = nominal_plan.sample(1e-3)
            loaded_robot = cell.robot.with_payload(load)
            tau = motor_torques(loaded_robot, smp.q, smp.qd, smp.qdd, nominal_plan.path.dq(smp.s))   # (as `sample`)
            ratio = np.abs(tau) / cell.robot.tau_max
            k = int(np.unravel_index(np.argmax(ratio), ratio.shape)[1])
            check = NominalCheck(b, slot.label, slot.box.name, load.mass, float(nominal_plan.duration),
                                 float(plan.duration), float(ratio.max()), cell.robot.joint_names[k],
                                 dt_replan, bool(nominal_plan.reused_problem))
    # empty return: the same Cartesian path backwards (joint path reversed: ends at the pick posture)
    rcart = CartesianPath(geo.cart.poses[::-1].copy(), 1.0 - geo.cart.u[::-1], geo.cart.length, geo.cart.waypoints[::-1],
                          geo.cart.mid[::-1].copy())
    rpath = JointPath.from_waypoints(geo.q[::-1], s=rcart.u)
    t0 = time.perf_counter()
    with _move_context(cell, slot, "return move"):
        if nominal_plan is not None and nominal_plan.reversible:
            rplan = nominal_plan.reversed(rpath)
        else:
            rplan = TimeOptimalPlanner(cell.robot, rpath, grid=cell.grid, gap_target=cell.gap_target, **opts).plan(payload=None)
    dt_plan = time.perf_counter() - t0
    t_plan += dt_plan
    ret = MoveResult(first_index + 1, b, "return", slot, None, rpath, rplan, dt_plan, rplan.reused_problem, rcart,
                     0.0, *_path_deviation(cell, rpath, rcart), unlimited(rpath, None))
    t_col = 0.0
    if cell.check_collisions and check_collisions:         # every move against the pallet, stack and conveyor
        from .collisions import check_move
        t0 = time.perf_counter()
        for m in (loaded, ret):
            m.clearance = check_move(cell, m, m.plan.sample(1e-3))
        t_col = time.perf_counter() - t0
    return BoxPlans([loaded, ret], check, t_ik, t_plan, t_ref, t_col)


def plan_pallet(cell: Cell, *, quick: bool = False, boxes=None, progress=None, planner_options=None,
                nominal: bool = True, on_move=None, geometries=None, check_collisions: bool = True) -> PalletReport:
    """Plan every move of the pallet (or a subset) box by box (`plan_box`): the loaded move, the empty
    return move and, with ``nominal``, the loaded path planned for the empty gripper and executed with the
    box. ``progress(done, total, label)`` and ``on_move(MoveResult)`` are called after every move.

    With optional planner options in the cell (``[limits]``: TCP speed, collaborative energy;
    ``[motion] energy_weight``) every move is planned with them and, for comparison, once more without
    them (`MoveResult.unlimited_duration`, summary ``cell_options``: the effect on the cycle time).
    ``geometries``: the chosen boxes' loaded joint paths (`move_geometries`), when already made;
    ``check_collisions=False``: the caller checks the moves for collisions (in ``on_move``, say)."""
    opts = {**dict(planner_options or {}), **cell.planner_options()}
    compare = opts != dict(planner_options or {}) or cell.reference_robot is not None
    chosen = select_boxes(cell, quick, boxes)
    total_moves = 2 * len(chosen)
    moves, checks = [], []
    t_all = time.perf_counter()
    t_ik = t_plan = t_ref = t_col = 0.0
    pick_posture(cell)
    if geometries is None:                                  # every loaded path's IK at once
        geometries = move_geometries(cell, [cell.slots[b] for b in chosen])
    if [g.slot.index for g in geometries] != list(chosen):
        raise ValueError("geometries: expected the joint paths of the chosen boxes, in order")
    for b, geo in zip(chosen, geometries):
        box = plan_box(cell, b, len(moves), nominal=nominal, planner_options=planner_options, geometry=geo,
                       check_collisions=check_collisions)
        t_ik, t_plan, t_ref, t_col = t_ik + box.ik_s, t_plan + box.plan_s, t_ref + box.reference_s, t_col + box.collision_s
        if box.check is not None:
            checks.append(box.check)
        for m in box.moves:
            for plan in (m.plan, m.reference_plan):
                if plan is not None:
                    plan.planner = None         # keep the plan's data, not its planner's caches (flat memory)
            moves.append(m)
            if on_move:
                on_move(m)
            if progress:
                progress(len(moves), total_moves, m.label)
    thermal = None
    if cell.tau_rms is not None and cell.thermal_box in chosen:
        from toppra_app.objectives.thermal import plan_cycle_with_rms_limit
        ms = [m for m in moves if m.box == cell.thermal_box]
        t0 = time.perf_counter()
        try:
            thermal = plan_cycle_with_rms_limit(cell.robot, [m.path for m in ms], cell.tau_rms, payloads=[
                m.payload for m in ms], grid=cell.grid, gap_target=cell.gap_target, **opts)
        except InfeasiblePathError as exc:    # named as the cell file's other errors (a rating below the hold:
            where = f"thermal.{exc}" if exc.argument == "tau_rms" else \
                f"thermal: box {cell.thermal_box + 1}'s cycle: {exc}"                  # "tau_rms: joint ...")
            raise InfeasiblePathError(f"{cell.source}: {where}", argument=exc.argument) from None
        t_plan += time.perf_counter() - t0
    seconds = dict(ik_s=t_ik, planning_s=t_plan, collisions_s=t_col, total_s=time.perf_counter() - t_all)
    if compare:
        seconds["planning_without_cell_options_s"] = t_ref
    if thermal is not None:
        seconds["thermal_s"] = thermal.seconds
    return PalletReport(cell, moves, checks, seconds, chosen, thermal)
