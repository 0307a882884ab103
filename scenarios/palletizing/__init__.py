"""Palletizing with changing payloads (Safeea et al. 2019, Section 6): cell file → Cartesian paths →
inverse kinematics → joint paths → time-optimal plans with the carried box merged into the model.

A *cell file* (TOML, see ``scenarios/default_cell.toml`` and docs/palletizing.md) describes the robot,
its gripper, where boxes are picked, the pallet, the stacking pattern and a box catalogue. For every
box the robot makes two moves:

* **loaded**: pick (TCP on the box top at the conveyor) → lift → transfer → descend → place, with the
  box as payload (`dynamics.payload.with_payload`: the box merged into the last link);
* **return**: the same Cartesian path backwards with the empty gripper, so every cycle starts from the
  same pick posture (the joint path is the loaded one reversed, which makes the moves repeat exactly).

Cartesian paths are a vertical lift, a horizontal transfer (a swing about the base axis, or a straight
line) and a vertical descent, joined by tangent-continuous cubic Bézier blends; the gripper points down
and turns about the vertical axis during the transfer only (smooth-step in arc length). The TCP poses go through the recursive
IK (`dynamics.inverse_kinematics.track_path`) starting from a preferred posture; the joint samples are
interpolated by a cubic spline (`toppra_app.JointPath`).
"""

from .cartesian_path import CartesianPath, cartesian_path
from .cell import DEFAULT_CELL, TCP_FRAME, BoxType, Cell, Slot, rot_z, tool_down_pose
from .cell_file import cell_from_document, default_preferred_posture, load_cell
from .moves import IKFailure, MoveGeometry, check_reachable, move_geometries, move_geometry, pick_posture, slot_ik
from .pattern import check_slots, make_slots
from .plan import BoxPlans, plan_box, plan_pallet, select_boxes
from .results import MoveResult, NominalCheck, PalletReport

__all__ = ["BoxPlans", "BoxType", "CartesianPath", "Cell", "DEFAULT_CELL", "IKFailure", "MoveGeometry", "MoveResult",
           "NominalCheck", "PalletReport", "Slot", "TCP_FRAME", "cartesian_path", "cell_from_document",
           "check_reachable", "check_slots", "default_preferred_posture", "load_cell", "make_slots",
           "move_geometries", "move_geometry", "pick_posture", "plan_box", "plan_pallet", "rot_z", "select_boxes", "slot_ik",
           "tool_down_pose"]
