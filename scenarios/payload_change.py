"""Payload-change scenario: one fixed path, planned again for a sweep of payload masses and COM offsets.

Safeea et al. (2019), Section 6: when a new object arrives, its inertial data is merged into the last
link and the minimum-time problem is solved again; the Christoffel symbols are recomputed on the fly, so
no symbolic code has to be regenerated. Here the first plan builds (and cvxpy compiles) the convex
problem; every further payload only changes the numbers of the problem (its Parameters), so re-planning
costs the coefficient recursion plus one (or a few) conic solves. The report compares the two.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from dynamics.checks import over_text
from dynamics.payload import RigidBodyInertia
from toppra_app.errors import InfeasiblePathError, InputError

from .palletizing import Cell, load_cell, move_geometry, pick_posture


@dataclass
class SweepPoint:
    mass: float                  # kg
    com_offset: float            # m, horizontal COM offset of the box along the tool x axis
    duration: float              # s
    worst_ratio: float
    plan_seconds: float          # wall time of this (re-)plan
    reused: bool                 # compiled problem reused
    iterations: int
    solver: str
    limit_report: object = None  # the plan's `LimitReport` (its verdict: `within_limits`)

    @property
    def within_limits(self) -> bool:
        return self.limit_report.within_limits

    def as_dict(self) -> dict:
        return dict(mass_kg=self.mass, com_offset_m=self.com_offset, duration_s=self.duration,
                    worst_ratio=self.worst_ratio, plan_seconds=self.plan_seconds,
                    reused_compiled_problem=self.reused, iterations=self.iterations, solver=self.solver,
                    within_limits=self.within_limits, limit_check=self.limit_report.as_dict())


@dataclass
class SweepReport:
    cell: Cell
    box: int
    masses: np.ndarray
    offsets: np.ndarray
    points: list
    first_plan_seconds: float    # the first plan of the sweep (builds + compiles the problem)
    empty_duration: float

    def table(self) -> np.ndarray:
        """Durations (len(offsets), len(masses)); NaN where a combination was not planned."""
        D = np.full((self.offsets.size, self.masses.size), np.nan)
        for p in self.points:
            i = int(np.argmin(np.abs(self.offsets - p.com_offset)))
            j = int(np.argmin(np.abs(self.masses - p.mass)))
            D[i, j] = p.duration
        return D

    def summary(self) -> dict:
        re = [p.plan_seconds for p in self.points]     # each a re-plan: `first_plan_seconds` is the empty plan's
        return dict(
            cell=self.cell.name, cell_file=self.cell.source, robot=self.cell.robot_name,
            move=f"box {self.box + 1} ({self.cell.slots[self.box].label}) loaded move",
            box_size_m=self.cell.slots[self.box].box.size.tolist(),
            masses_kg=self.masses.tolist(), com_offsets_m=self.offsets.tolist(),
            empty_gripper_duration_s=self.empty_duration,
            points=[p.as_dict() for p in self.points],
            first_plan_seconds=self.first_plan_seconds,
            replan_mean_seconds=float(np.mean(re)) if re else None,
            replan_speedup=(self.first_plan_seconds / float(np.mean(re))) if re else None,
            worst_ratio=max(p.worst_ratio for p in self.points),
            within_limits=all(p.within_limits for p in self.points),
            points_over_limits=[k + 1 for k, p in enumerate(self.points) if not p.within_limits],
        )


DEFAULT_MASSES = 100       # at most this many default masses (as `payload-sweep --masses` takes at most)


def sweep_payloads(cell: Cell | None = None, *, box: int = 0, masses=None, offsets=None, quick: bool = False,
                   progress=None, planner_options=None) -> SweepReport:
    """Plan the loaded move of slot ``box`` for every (COM offset, mass) pair.

    Defaults: masses 0, 1, 2, … kg up to the robot's remaining rated payload (rated minus gripper; above 99 kg
    `DEFAULT_MASSES` evenly spaced masses from 0 to it), or 0, half and full with ``quick``; COM offsets 0, 0.05, 0.10 m along the tool x axis (0 and 0.1 with
    ``quick``). The payload is a uniform solid box of the slot's box size hanging below the TCP, gripped
    off-centre by the offset (its inertia about its own COM unchanged). The cell's limits apply
    (`Cell.planner_options`, as in `plan_box`)."""
    from toppra_app.path import JointPath
    from toppra_app.planner import TimeOptimalPlanner
    cell = cell or load_cell()
    if not 0 <= box < len(cell.slots):
        raise InputError(f"box: expected a box number between 1 and {len(cell.slots)}, got {box + 1}")
    cap = cell.robot.rated_payload
    if masses is None:
        top = cap if cap is not None else 5.0
        if quick:
            masses = np.unique(np.round([0.0, top / 2, top], 2))
        elif top <= DEFAULT_MASSES - 1:          # whole kilograms, and the maximum
            masses = np.unique(np.append(np.arange(0.0, top + 1e-9, 1.0), top))
        else:                                    # (a cell rated 1e4 kg planned 10001 masses; 1e300: "Maximum
            masses = np.linspace(0.0, top, DEFAULT_MASSES)   # allowed size exceeded", naming nothing)
    masses = np.asarray(masses, dtype=float).reshape(-1)
    if masses.size == 0 or not np.isfinite(masses).all() or (masses < 0).any():
        raise InputError(f"masses: expected non-negative numbers, got {masses.tolist()}")
    if cap is not None and masses.max() > cap + 1e-9:
        raise InputError(f"masses: {over_text(masses.max(), cap)} kg exceeds what {cell.robot_name} can carry "
                         f"({cap:g} kg = rated payload minus gripper)")
    offsets = np.asarray(offsets if offsets is not None else ([0.0, 0.1] if quick else [0.0, 0.05, 0.10]),
                         dtype=float).reshape(-1)
    if offsets.size == 0 or not np.isfinite(offsets).all():
        raise InputError(f"offsets: expected finite numbers, got {offsets.tolist()}")
    # each value once, increasing: `table` puts a point in the column of its value, so a repeated mass or
    # offset left a row or column of NaN ("1 kg  1 kg" over "1.024  nan"), and the figure drew an unsorted
    # list's curve back and forth (masses 6,0,3: 6 → 0 → 3 kg)
    masses, offsets = np.unique(masses), np.unique(offsets)
    slot = cell.slots[box]
    pick_posture(cell)
    geo = move_geometry(cell, slot)
    path = JointPath.from_waypoints(geo.q, s=geo.cart.u)
    t0 = time.perf_counter()
    size = slot.box.size
    # uniform boxes hanging below the TCP, COM shifted along tool x by `off` (m = 0: no payload)
    payloads = [(m, off, None if m == 0.0 else RigidBodyInertia.box(m, size, com_offset=(off, 0.0, 0.5 * size[2])))
                for off in offsets for m in masses]
    # the cell's own limits ([limits], [motion] energy_weight, [controller]) as in `plan_box`
    opts = {**dict(planner_options or {}), **cell.planner_options()}
    planner = TimeOptimalPlanner(cell.robot, path, grid=cell.grid, gap_target=cell.gap_target, **opts)

    def planned(payload, m=0.0, off=0.0):
        """The plan, or the planner's line naming the cell file, the box and the payload, as palletize names its
        moves (it said "gravity alone exceeds the torque limit ..." alone, after a progress line of another mass)."""
        try:
            return planner.plan(payload=payload)
        except InfeasiblePathError as exc:
            what = "the empty gripper" if payload is None else f"{m:g} kg, COM offset {off:g} m"
            raise type(exc)(f"{cell.source}: box {box + 1} ({slot.label}), loaded move with {what}: {exc}",
                            argument=exc.argument) from None

    empty = planned(None)
    first = time.perf_counter() - t0
    points = []
    total = len(payloads)
    for m, off, payload in payloads:
        t1 = time.perf_counter()
        plan = planned(payload, m, off)
        dt = time.perf_counter() - t1
        points.append(SweepPoint(float(m), float(off), float(plan.duration), float(plan.worst_ratio), dt,
                                 bool(plan.reused_problem), int(plan.iterations), str(plan.solver),
                                 plan.limit_report()))
        if progress:
            progress(len(points), total, f"m={m:.2f} kg, offset={off:.2f} m")
    return SweepReport(cell, box, masses, offsets, points, first, float(empty.duration))
