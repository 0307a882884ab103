"""What planning a pallet produced: per move, the nominal-model check and the pallet report (summary)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dynamics.model import RobotModel
from dynamics.payload import RigidBodyInertia

from .cartesian_path import CartesianPath
from .cell import Cell, Slot, TCP_FRAME

@dataclass
class MoveResult:
    index: int                   # move number (0-based, in execution order)
    box: int                     # box number (slot index)
    kind: str                    # "loaded" | "return"
    slot: Slot
    payload: RigidBodyInertia | None
    path: object                 # toppra_app.JointPath
    plan: object                 # toppra_app.planner.TimeOptimalPlan
    plan_seconds: float          # wall time of this plan (problem build/compile + solves + checks)
    reused_problem: bool         # the compiled cvxpy problem was reused (same layout as an earlier move)
    cart: CartesianPath
    ik_seconds: float = 0.0
    path_error: float = 0.0      # max TCP deviation of the joint spline from the Cartesian path (m)
    path_rotation_error: float = 0.0   # and of its orientation (rad), both halfway between IK samples
    reference_plan: object | None = None   # the same move without the cell's optional planner options
    clearance: object | None = None        # collisions.Clearance: the closest approach (None: not checked)
    ik_counts: dict | None = None          # loaded move: IK samples, recursive sweeps, polished samples, Newton steps

    @property
    def duration(self) -> float:
        return float(self.plan.duration)

    @property
    def unlimited_duration(self) -> float | None:
        """Duration of the same move without the cell's optional limits and objective (s)."""
        return None if self.reference_plan is None else float(self.reference_plan.duration)

    @property
    def label(self) -> str:
        return f"box{self.box + 1:02d}_{self.kind}"

    def summary(self, robot: RobotModel) -> dict:
        from toppra_app.verify import worst_summary
        report = self.plan.limit_report()
        return dict(move=self.index + 1, box=self.box + 1, kind=self.kind, slot=self.slot.label,
                    box_type=self.slot.box.name, payload_kg=0.0 if self.payload is None else self.payload.mass,
                    **({} if self.payload is None else dict(payload=payload_record(self.payload))),
                    duration_s=self.duration, path_length_m=self.cart.length, worst_ratio=float(self.plan.worst_ratio),
                    **worst_summary(self.plan.worst, list(robot.joint_names)), plan_seconds=self.plan_seconds,
                    ik_seconds=self.ik_seconds,
                    reused_compiled_problem=bool(self.reused_problem), solver=self.plan.solver,
                    iterations=int(self.plan.iterations), path_deviation_m=self.path_error,
                    path_rotation_deviation_deg=math.degrees(self.path_rotation_error),
                    **({} if self.clearance is None else dict(clearance=self.clearance.as_dict())),
                    **({} if self.ik_counts is None else dict(ik=dict(self.ik_counts))),
                    **({} if self.unlimited_duration is None else
                       dict(duration_without_cell_options_s=self.unlimited_duration)),
                    within_limits=report.within_limits, limit_check=report.as_dict())


def payload_record(p) -> dict:
    """A carried box as merged into the model (summary.json): in the TCP frame, where its COM and inertia
    depend on the grasp (`BoxType.payload`: the box's COM offset seen turned by the grasp turn). payload_kg alone
    did not let anyone recompute a loaded move's torques for a box with its COM off-centre."""
    return dict(frame=TCP_FRAME, mass_kg=float(p.mass), com_m=[float(x) for x in p.com],
                inertia_about_com_kg_m2=[[float(x) for x in row] for row in p.inertia])


@dataclass
class NominalCheck:
    """The empty-gripper plan of a loaded move, executed with the box: torque the motors would need."""
    box: int
    slot: str
    box_type: str
    payload_kg: float
    nominal_duration: float      # s, plan made without the box
    loaded_duration: float       # s, plan made with the box merged into the model
    torque_ratio: float          # worst |τ| / τ_max when the nominal plan is executed with the box
    joint: str
    replan_seconds: float = 0.0  # wall time of the nominal re-plan (same path, only the payload changed)
    replan_reused: bool = False  # it re-used the compiled problem of the loaded plan

    @property
    def over_percent(self) -> float:
        return 100.0 * (self.torque_ratio - 1.0)

    def as_dict(self) -> dict:
        return dict(box=self.box + 1, slot=self.slot, box_type=self.box_type, payload_kg=self.payload_kg,
                    nominal_plan_duration_s=self.nominal_duration, payload_plan_duration_s=self.loaded_duration,
                    executed_torque_ratio=self.torque_ratio, torque_over_limit_percent=self.over_percent,
                    joint=self.joint, replan_seconds=self.replan_seconds,
                    replan_reused_compiled_problem=self.replan_reused)


@dataclass
class PalletReport:
    cell: Cell
    moves: list
    nominal_checks: list
    seconds: dict                # wall times: ik, planning, total
    boxes_planned: list          # slot indices
    thermal: object = None       # toppra_app.objectives.thermal.CyclePlan of the rated box's cycle ([thermal]), or None

    @property
    def total_time(self) -> float:
        return float(sum(m.duration for m in self.moves))

    def cycle_times(self) -> list[dict]:
        out = []
        for b in self.boxes_planned:
            ms = [m for m in self.moves if m.box == b]
            out.append(dict(box=b + 1, slot=ms[0].slot.label, box_type=ms[0].slot.box.name,
                            loaded_s=sum(m.duration for m in ms if m.kind == "loaded"),
                            return_s=sum(m.duration for m in ms if m.kind == "return"),
                            cycle_s=sum(m.duration for m in ms)))
        return out

    def _options_summary(self) -> dict:
        """The cell's optional limits/objective and their effect on the cycle time (empty when none)."""
        cell = self.cell
        if not cell.planner_options() and cell.reference_robot is None:
            return {}
        free = [m.unlimited_duration for m in self.moves]
        rates = {k: (None if getattr(cell, k) is None else getattr(cell, k).tolist())
                 for k in ("torque_rate_max", "jerk_max")}
        friction = (None if cell.reference_robot is None else
                    dict(coulomb=cell.robot.coulomb.tolist(), viscous=cell.robot.viscous.tolist()))
        out = dict(tool_speed_max=cell.tool_speed_max, collision_energy_max=cell.energy_max,
                   contact_mass=cell.contact_mass, energy_weight=cell.energy_weight, friction=friction,
                   frame=TCP_FRAME, controller=None if cell.controller is None else cell.controller.as_dict(),
                   **rates)
        for m in self.moves:
            for kind, w in (getattr(m.plan, "rate_check", None) or {}).items():
                out[f"worst_sampled_{kind}_ratio"] = max(out.get(f"worst_sampled_{kind}_ratio", 0.0), float(w.ratio))
        if self.cell.energy_weight > 0:                 # Σ ∫τᵀRτ dt, R = diag(1/τ_max²), on the 1 ms samples
            out["energy_s"] = float(sum(m.plan.energy for m in self.moves))
            if all(m.reference_plan is not None for m in self.moves):
                out["energy_without_s"] = float(sum(m.reference_plan.energy for m in self.moves))
        for kind in ("tool_speed", "collision_energy"):
            ws = [m.plan.worst[kind] for m in self.moves if kind in m.plan.worst]
            if ws:
                out[f"worst_{kind}_ratio"] = float(max(w.ratio for w in ws))
        if all(f is not None for f in free):
            total_free = float(sum(free))
            out.update(total_time_without_s=total_free, total_time_s=self.total_time,
                       cycle_time_increase_percent=100.0 * (self.total_time / total_free - 1.0),
                       mean_cycle_without_s=total_free / max(len(self.boxes_planned), 1),
                       moves_slowed=int(sum(m.duration > f * (1 + 1e-4) for m, f in zip(self.moves, free))))
        return dict(cell_options=out)

    def limits_not_set(self) -> list:
        """The kinds of limit no move's plan has (the robot's: e.g. the iiwa 7 has no acceleration limits), which
        the worst value/limit leaves out (`toppra_app.verify.worst_summary`)."""
        kinds = dict.fromkeys(k for m in self.moves for k in m.plan.worst)
        return [k for k in kinds if not any(m.plan.worst[k].limit_set for m in self.moves if k in m.plan.worst)]

    def limits_not_set_note(self) -> str:
        """The sentence under the moves table (terminal and report.html) naming those kinds, or ""."""
        kinds = self.limits_not_set()
        return f"worst vs limit: {self.cell.robot_name} has no {' or '.join(kinds)} limit, so none is compared" \
            if kinds else ""

    def over_limits(self) -> list:
        """The moves whose plans did not keep their limits (`TimeOptimalPlan.within_limits`), in move order."""
        return [m for m in self.moves if not m.plan.within_limits]

    def ik_summary(self) -> dict:
        """The IK of the planned moves: Nicolato & Madrid's recursive sweeps along every loaded move's path and
        the samples they left outside the tolerance (finished by Newton steps); the pose IK of the pick and
        place poses (starts × symmetric yaws)."""
        counts = [m.ik_counts for m in self.moves if m.ik_counts is not None]
        out = {k: int(sum(c[k] for c in counts)) for k in ("samples", "sweeps", "polished", "newton_steps")}
        poses = list(self.cell.pose_ik.values())
        out["pose_ik"] = dict(poses=len(poses), solves=int(sum(p.attempts for p in poses)),
                              reached_by_first_start=int(sum(p.first_try for p in poses)),
                              turned_by_symmetry=int(sum(p.target > 0 for p in poses)))
        return out

    def summary(self) -> dict:
        robot = self.cell.robot
        worst = max(self.moves, key=lambda m: m.plan.worst_ratio)
        plan_first = [m.plan_seconds for m in self.moves if not m.reused_problem]
        plan_reused = ([m.plan_seconds for m in self.moves if m.reused_problem]
                       + [c.replan_seconds for c in self.nominal_checks if c.replan_reused])
        worst_nom = max(self.nominal_checks, key=lambda c: c.torque_ratio) if self.nominal_checks else None
        over = self.over_limits()
        return dict(
            cell=self.cell.name, cell_file=self.cell.source, robot=self.cell.robot_name,
            boxes_on_pallet=len(self.cell.slots), boxes_planned=len(self.boxes_planned),
            moves=[m.summary(robot) for m in self.moves],
            cycles=self.cycle_times(),
            total_time_s=self.total_time,
            mean_cycle_s=self.total_time / max(len(self.boxes_planned), 1),
            worst_over_limit=dict(ratio=float(worst.plan.worst_ratio), move=worst.index + 1),
            limits_not_set=self.limits_not_set(),
            within_limits=not over, moves_over_limits=[m.index + 1 for m in over],
            nominal_plan_with_payload=[c.as_dict() for c in self.nominal_checks],
            nominal_plan_worst=None if worst_nom is None else worst_nom.as_dict(),
            planning=dict(first_plan_mean_s=float(np.mean(plan_first)) if plan_first else None,
                          reused_plan_mean_s=float(np.mean(plan_reused)) if plan_reused else None,
                          **{k: float(v) for k, v in self.seconds.items()}),
            ik=self.ik_summary(),
            gripper_kg=self.cell.gripper.mass,
            grasp_turn_deg=math.degrees(self.cell.grasp_turn),
            rated_payload_kg=self.cell.base_robot.rated_payload,
            **self._options_summary(),
            **self._thermal_summary(),
        )

    def _thermal_summary(self) -> dict:
        """[thermal]: the RMS-limited cycle of one box against its time-optimal cycle (None for a joint that is not
        rated, as in `CyclePlan.summary`: inf is not valid JSON)."""
        if self.cell.tau_rms is None:
            return {}
        out = dict(box=self.cell.thermal_box + 1, scope="loaded + return move of this box, idle holding the "
                   "pick posture", tau_rms=[float(v) if np.isfinite(v) else None for v in self.cell.tau_rms])
        if self.thermal is None:
            out["note"] = "box not planned (see --boxes / --quick)"
        else:
            out.update(self.thermal.summary())
        return dict(thermal=out)
