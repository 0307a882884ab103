"""One batch task: the moves of one box of one cell, planned where the task runs (this process or a Dask
worker), returned as plain data — rows for moves.csv and the sampled trajectories, no solver objects —
so that what travels back to the client and what it holds is small (`BoxOutcome.nbytes`).

A move that cannot be planned (the box out of reach, an infeasible path, no solver solved it, ...) is not an
exception here: its rows carry status "failed" and the one-line error, and the batch goes on. Only a lost
worker makes Dask run the task again."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

COLUMNS = ("cell", "move", "box", "kind", "slot", "box_type", "payload_kg", "duration_s", "worst_ratio", "status",
           "error", "plan_s", "ik_s", "nominal_duration_s", "nominal_torque_ratio", "min_distance_m",
           "within_limits", "limit_ratio", "limit", "limit_joint", "limit_problems")
LIMIT_COLUMNS = COLUMNS[-5:]       # `limit_columns`: did the move's plan keep its limits (empty for a failed move)


@dataclass
class BoxOutcome:
    cell: str
    box: int                       # 0-based slot index
    rows: list                     # one dict per move (keys: COLUMNS)
    trajectories: dict             # move label -> CSV text (bytes): t, q, qd, qdd, tau per sample
    joint_names: tuple
    seconds: float                 # wall time of the task

    @property
    def nbytes(self) -> int:
        return int(sum(len(a) for a in self.trajectories.values()))


def move_label(move: int, box: int, kind: str) -> str:
    return f"move{move:03d}_box{box + 1:03d}_{kind}"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def failed_outcome(cell_id: str, cell, box: int, exc: BaseException, seconds: float = 0.0) -> BoxOutcome:
    """Both moves of a box recorded as failed, with the exception's one-line message."""
    slot = cell.slots[box]
    error = f"{type(exc).__name__}: {_one_line(exc)}"
    rows = [dict(cell=cell_id, move=2 * box + 1 + k, box=box + 1, kind=kind, slot=slot.label, box_type=slot.box.name,
                 payload_kg=slot.box.mass if kind == "loaded" else 0.0, duration_s="", worst_ratio="",
                 status="failed", error=error, plan_s="", ik_s="", nominal_duration_s="", nominal_torque_ratio="",
                 min_distance_m="", **dict.fromkeys(LIMIT_COLUMNS, ""))
            for k, kind in enumerate(("loaded", "return"))]
    return BoxOutcome(cell_id, box, rows, {}, tuple(cell.robot.joint_names), seconds)


def limit_columns(plan) -> dict:
    """A planned move's `LIMIT_COLUMNS` (`TimeOptimalPlan.limit_report`): within_limits "true" or "false", the
    worst value/limit over every check, that limit and joint, and the reasons it is not within them."""
    r = plan.limit_report()
    return dict(within_limits="true" if r.within_limits else "false", limit_ratio=r.ratio, limit=r.limit or "",
                limit_joint=r.joint or "", limit_problems="; ".join(r.problems))


def plan_box_task(cell_id: str, cell, box: int, nominal: bool, dt: float, trajectories: bool = True) -> BoxOutcome:
    """Plan box `box` of `cell` (a `scenarios.palletizing.Cell`, pick posture already solved) and sample
    its moves every `dt` seconds (as CSV text, unless ``trajectories`` is false). Move numbers are those
    of the whole pallet (box k: 2k + 1 and 2k + 2)."""
    from scenarios.palletizing import plan_box
    from toppra_app.export import trajectory_csv
    from toppra_app.socp.solvers import SolverError
    t0 = time.perf_counter()
    slot = cell.slots[box]
    base = dict(cell=cell_id, box=box + 1, slot=slot.label, box_type=slot.box.name)
    first = 2 * box + 1
    try:
        result = plan_box(cell, box, first - 1, nominal=nominal)
    # users' errors and failed solves; a SolverError (no solver of the chain solved it) too: it ended a serial batch
    # at that box, and on Dask it was retried and reported lost, on every run again
    except (ValueError, ArithmeticError, np.linalg.LinAlgError, SolverError) as exc:
        return failed_outcome(cell_id, cell, box, exc, time.perf_counter() - t0)
    rows, files = [], {}
    check = result.check
    for m in result.moves:
        if trajectories:
            label = move_label(m.index + 1, box, m.kind)
            # formatted here, where the task runs: the client only writes bytes, so it does not become
            # the bottleneck of a large cluster
            files[label] = trajectory_csv(m.plan.sample(dt), cell.robot.joint_names).encode("utf-8")
        loaded = m.kind == "loaded"
        rows.append(dict(base, move=m.index + 1, kind=m.kind, payload_kg=0.0 if m.payload is None else m.payload.mass,
                         duration_s=m.duration, worst_ratio=float(m.plan.worst_ratio), status="ok", error="",
                         plan_s=m.plan_seconds, ik_s=m.ik_seconds,
                         nominal_duration_s=check.nominal_duration if loaded and check else "",
                         nominal_torque_ratio=check.torque_ratio if loaded and check else "",
                         min_distance_m="" if m.clearance is None else m.clearance.distance,
                         **limit_columns(m.plan)))
    return BoxOutcome(cell_id, box, rows, files, tuple(cell.robot.joint_names), time.perf_counter() - t0)
