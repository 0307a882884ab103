"""The cell as data: box types, slots on the pallet, the cell (robot, gripper, pick, pallet, pattern,
motion and planner options), and the small geometry they share."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynamics.model import RobotModel
from dynamics.payload import RigidBodyInertia

DEFAULT_CELL = Path(__file__).resolve().parent.parent / "default_cell.toml"
TCP_FRAME = "tcp"


# ------------------------------------------------------------------------------ small geometry
def rot_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def yaw_pose(position, yaw: float) -> np.ndarray:
    """Pose (4, 4) at `position`, turned by `yaw` about the vertical (a box standing on its base)."""
    T = np.eye(4)
    T[:3, :3] = rot_z(yaw)
    T[:3, 3] = position
    return T


def tool_down_pose(position, yaw: float) -> np.ndarray:
    """TCP pose with the tool z axis pointing down (−z of the base) and yaw about the vertical:
    R = R_z(yaw) · R_x(π)."""
    T = np.eye(4)
    T[:3, :3] = rot_z(yaw) @ np.diag([1.0, -1.0, -1.0])
    T[:3, 3] = position
    return T


def wrap_angle(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


# ------------------------------------------------------------------------------ cell data
@dataclass(frozen=True)
class BoxType:
    name: str
    size: np.ndarray             # (3,) along the box axes: length (x), width (y), height (z)
    mass: float
    com_offset: np.ndarray       # (3,) COM relative to the box centre, box axes
    inertia: np.ndarray          # (3, 3) about the COM, box axes

    def payload(self, grasp_turn: float = 0.0) -> RigidBodyInertia:
        """The box as a payload in the TCP frame. The TCP is at the centre of the box's top face with the
        tool z axis pointing down into the box and the tool x axis along the box's long side, so the box
        centre is at (0, 0, h/2) and the box axes (z up) are seen from the tool through
        R = diag(1, −1, −1): COM = (0, 0, h/2) + R·com_offset, inertia R I Rᵀ. With the tool turned by
        ``grasp_turn`` about the vertical at the pick (π: the box taken from its other end, which its
        footprint allows), R = diag(1, −1, −1) R_z(−grasp_turn)."""
        R = np.diag([1.0, -1.0, -1.0]) @ rot_z(-grasp_turn)     # box axes (z up) seen from the tool (z down)
        com = np.array([0.0, 0.0, 0.5 * self.size[2]]) + R @ self.com_offset
        return RigidBodyInertia(self.mass, com, R @ self.inertia @ R.T)


@dataclass(frozen=True)
class Slot:
    index: int
    layer: int
    row: int
    column: int
    box: BoxType
    yaw: float                   # TCP yaw at the place pose (rad)
    centre: np.ndarray           # box centre in the base frame
    footprint: tuple             # (half extent along pallet x, along pallet y) of the placed box
    place: np.ndarray            # TCP pose (4, 4) at the place pose
    box_yaw: float = 0.0         # the placed box's yaw as the pattern lays it: the obstacle it is for later moves.
    #                              Kept when `place_posture` turns `yaw` by the box's symmetry (the same footprint),
    #                              so a move's closest approach does not depend on which earlier boxes were planned
    #                              in the same process (batch: serially 0.019092188664781025 m, on a worker that
    #                              had not planned box 1 0.01909218865388279 m)

    @property
    def label(self) -> str:
        return f"L{self.layer + 1}R{self.row + 1}C{self.column + 1}"


@dataclass
class Cell:
    source: str
    name: str
    robot_name: str
    base_robot: RobotModel       # as loaded (no gripper)
    robot: RobotModel            # nominal model: gripper merged, "tcp" frame, rated payload minus gripper
    gripper: RigidBodyInertia
    pick: np.ndarray             # TCP pose at the pick (4, 4)
    pallet_pose: np.ndarray      # pallet top-centre frame (4, 4)
    pallet_size: np.ndarray      # (2,)
    layers: int
    rows: int
    columns: int
    gap: float
    alternate: bool
    layer_boxes: list            # BoxType per layer
    boxes: dict                  # name -> BoxType
    approach_height: float
    clearance: float
    blend_radius: float
    transfer: str                # "arc" (swing about the base axis) or "line"
    samples: int
    grid: int | None                 # planner grid intervals per move; None: the planner's adaptive grid
    gap_target: float | None         # the planner's `gap_target` (None: its default)
    rot_weight: float
    q_preferred: np.ndarray
    slots: list = field(default_factory=list)
    q_pick: np.ndarray | None = None
    grasp_turn: float = 0.0                  # tool yaw at the pick minus the conveyor's box yaw (0 or π)
    q_place: dict = field(default_factory=dict)   # slot index -> joint positions at its place pose
    pose_ik: dict = field(default_factory=dict)   # "pick" / slot index -> MultiStartResult (the pose IK)
    tool_speed_max: float | None = None      # [limits] TCP speed limit (m/s), None: none
    energy_max: float | None = None          # [limits] collaborative = { energy_max } (J), None: none
    contact_mass: float | None = None        # [limits] collaborative = { contact_mass } (kg), None: rigid
    tau_rms: np.ndarray | None = None        # [thermal] RMS torque rating per joint (N·m; inf: not rated), None: none
    thermal_box: int = 0                     # [thermal] box = k (1-based in the file): whose cycle is rated
    energy_weight: float = 0.0               # [motion] time–energy trade-off weight (0: time-optimal)
    torque_rate_max: np.ndarray | None = None  # [limits] N·m/s per joint (inf: none), None: none
    jerk_max: np.ndarray | None = None       # [limits] rad/s³ per joint (inf: none), None: none
    controller: object | None = None         # [controller] a toppra_app.ControllerProfile, None: none
    reference_robot: object | None = None    # the robot without the cell's [friction] (None: no [friction])
    flange: str = ""                         # robot frame the gripper is mounted on
    tcp_offset: np.ndarray = field(default_factory=lambda: np.zeros(3))   # TCP in the flange frame
    gripper_size: np.ndarray = field(default_factory=lambda: np.full(3, 0.05))
    link_radius: float | None = None         # [collision] capsule radius of the arm's links (None: by robot)
    check_collisions: bool = True            # [collision] enabled
    urdf_path: str | None = None             # [cell] urdf: its collision elements are the arm's shapes
    package_paths: tuple = ()                # [cell] package_paths: where package:// mesh names are found

    def planner_options(self) -> dict:
        """Planner keyword options for the cell's optional Cartesian limits of the TCP, time–energy weight, rate
        limits and controller profile (empty when it has none). [limits] torque_rate_max / jerk_max are planned
        as a controller profile with those rates and no headroom (`rates_profile`) unless the moves also weigh
        energy, which only the older sequential scheme (docs/planner_limits.md) combines with rates."""
        rates = dict(torque_rate_max=self.torque_rate_max, jerk_max=self.jerk_max)
        controller = self.controller
        if controller is None and not self.energy_weight and any(v is not None for v in rates.values()):
            controller, rates = self.rates_profile(), {}
        opts = dict(tool_speed_max=self.tool_speed_max, collision_energy_max=self.energy_max,
                    contact_mass=self.contact_mass, energy_weight=self.energy_weight or None, controller=controller,
                    **rates)
        return {k: v for k, v in opts.items() if v is not None}

    def sampling_note(self, dt: float, source=None) -> str | None:
        """One warning line where trajectory files sampled every `dt` are finer than the cell's rate-limited
        controller profile ([controller], or [limits] rates planned as one) samples, naming `source` (default the
        cell's) and the table (`toppra_app.controller.finer_sampling`); else None."""
        from toppra_app.controller import finer_sampling
        note = finer_sampling(self.planner_options().get("controller"), dt)
        table = "[controller]" if self.controller else "[limits]"
        return note and f"{self.source if source is None else source}: {table}: {note}"

    def rates_profile(self):
        """[limits] torque_rate_max / jerk_max as a `toppra_app.ControllerProfile`: the same limits on the 1 ms
        samples, steps from and to rest included, torque and speed headroom 1. The sequential scheme took 5–50 s
        a move on the built-in cell with 800 N·m/s and 3000 rad/s³ and warned of 9 inaccurate solves; the
        profile's rate rows plan those moves in 0.1–0.2 s, within the limits, 1–2 % shorter."""
        from toppra_app.controller import ControllerProfile
        as_limit = lambda v: None if v is None else tuple(float(x) for x in v)   # noqa: E731
        return ControllerProfile(torque_headroom=1.0, velocity_headroom=1.0,
                                 torque_rate_max=as_limit(self.torque_rate_max), jerk_max=as_limit(self.jerk_max))



def read_only(a):
    a = np.array(a, dtype=float, copy=True)
    a.setflags(write=False)
    return a


def read_only_int(a):
    a = np.array(a, dtype=int, copy=True).reshape(-1)
    a.setflags(write=False)
    return a
