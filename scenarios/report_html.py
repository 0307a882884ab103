"""`report.html` of a palletizing run: the cell in 3-D — robot, gripper, carried box, pallet, conveyor
and the growing stack — animated along the planned trajectory of every move (play/pause, time slider),
the cycle-time table, and per move the joint profiles against their limits and the phase plane
(`toppra_app.html_report` for the generic pieces; one self-contained file, offline)."""

from __future__ import annotations

import html

import numpy as np

from scenarios.palletizing.cell import yaw_pose
from toppra_app.html_report import (animation, figure_html, frame_times, lines3d, page, plotly_text, robot_lines, robot_trace,
                                     table_html)

_EDGES = [(0, 1), (1, 3), (3, 2), (2, 0), (4, 5), (5, 7), (7, 6), (6, 4), (0, 4), (1, 5), (2, 6), (3, 7)]


_FROM, _TO = np.array(_EDGES).T


def box_edges(T: np.ndarray, size, z0: float = -0.5) -> np.ndarray:
    """(36, 3) polyline of a box's 12 edges (NaN-separated): box axes and centre from `T`; the box spans
    z0·h … (z0 + 1)·h along its z axis (z0 = −0.5: centred; 0: hanging below a tool pointing down)."""
    sx, sy, sz = size
    c = np.array([[x, y, z] for x in (-sx / 2, sx / 2) for y in (-sy / 2, sy / 2) for z in (z0 * sz, (z0 + 1) * sz)])
    w = c @ T[:3, :3].T + T[:3, 3]
    out = np.full((3 * len(_EDGES), 3), np.nan)
    out[0::3], out[1::3] = w[_FROM], w[_TO]
    return out


def _lines(points, name, colour, width=4, dash=None):
    return lines3d(points, name, colour, width, dash)


def _stack(report, placed, cache=None) -> np.ndarray:
    """The edges of the boxes `placed` (slot indices), each box's made once when `cache` (a dict) is given."""
    cache = {} if cache is None else cache
    for b in placed:
        if b not in cache:
            s = report.cell.slots[b]
            cache[b] = box_edges(yaw_pose(s.centre, s.yaw), s.box.size)
    return np.vstack([cache[b] for b in placed]) if placed else np.full((1, 3), np.nan)


def cell_figure(report, max_frames: int = 600):
    """The whole pallet as one animation: every move in order, the stack growing as boxes are placed."""
    from dynamics.forward_kinematics import frame_pose
    cell, robot = report.cell, report.cell.robot
    starts = np.concatenate(([0.0], np.cumsum([m.duration for m in report.moves])))
    times = frame_times(float(starts[-1]), max_frames=max_frames, fps=20.0)
    which = np.clip(np.searchsorted(starts, times, side="right") - 1, 0, len(report.moves) - 1)
    q = np.vstack([report.moves[m].plan.eval(times[which == m] - starts[m]) for m in np.unique(which)])
    arm = robot_lines(robot, q)
    tcp = frame_pose(robot, q, "tcp")
    flange = frame_pose(robot, q, cell.flange)[:, :3, 3] if cell.flange else tcp[:, :3, 3]
    gripper = np.stack([flange, tcp[:, :3, 3]], axis=1)                # (K, 2, 3): flange → suction cup
    pick_box = cell.layer_boxes[0]
    conveyor_T = cell.pick.copy()
    conveyor_T[:3, 3] -= [0.0, 0.0, pick_box.size[2]]
    pallet = cell.pallet_pose
    static = [
        _lines(box_edges(pallet, (*cell.pallet_size, 0.02), z0=-1.0), "pallet", "#8b5a2b", 5),
        _lines(box_edges(conveyor_T @ np.diag([1.0, -1.0, -1.0, 1.0]), (0.6, pick_box.size[1] + 0.1, 0.02), z0=-1.0),
               "conveyor", "#555555", 3),
        _lines(np.vstack([m.cart.poses[:, :3, 3] for m in report.moves if m.kind == "loaded"] or [np.zeros((1, 3))]),
               "tool paths", "#9ecae1", 1, "dot"),
    ]

    near = [m for m in report.moves if m.clearance is not None and np.isfinite(m.clearance.distance)]
    if near:                                                  # the closest approach of every move
        pts = np.vstack([np.vstack([m.clearance.points, np.full((1, 3), np.nan)]) for m in near])
        text = [plotly_text(f"move {m.index + 1} ({m.label}): {1000 * m.clearance.distance:.1f} mm between the "
                            f"{m.clearance.bodies[0]} and the {m.clearance.bodies[1]} at t = {m.clearance.time:.3f} s")
                for m in near for _ in range(3)]
        static.append(dict(type="scatter3d", x=pts[:, 0], y=pts[:, 1], z=pts[:, 2], mode="lines+markers",
                           name="closest approach per move", text=text, hoverinfo="text",
                           line=dict(color="#e41a1c", width=3), marker=dict(size=4, color="#e41a1c")))

    placed = {}                                              # slot index → its box's edges
    on_conveyor = box_edges(cell.pick, pick_box.size, z0=0.0)

    def moving(k):
        m = report.moves[which[k]]
        done = [mm.box for mm in report.moves[:which[k]] if mm.kind == "loaded"]
        if m.kind == "loaded" and times[k] >= starts[which[k] + 1] - 1e-9:
            done.append(m.box)                               # the last frame of a loaded move: placed
        if m.kind == "loaded" and m.box not in done:
            carried = box_edges(tcp[k], m.slot.box.size, z0=0.0)
        else:
            carried = np.full((1, 3), np.nan)
        waiting = on_conveyor if m.kind == "return" or (
            which[k] == 0 and times[k] == 0.0 and m.kind != "loaded") else np.full((1, 3), np.nan)
        return [robot_trace(arm[k]), _lines(gripper[k], "gripper", "#ff7f0e", 12),
                _lines(carried, "carried box", "#d62728", 5), _lines(_stack(report, done, placed),
                "placed boxes", "#2ca02c", 3), _lines(waiting, "box on the conveyor", "#9467bd", 3)]

    allp = np.vstack([arm.reshape(-1, 3), np.zeros((1, 3))] + [np.column_stack([t["x"], t["y"], t["z"]]) for t in static])
    lo, hi = np.nanmin(allp, axis=0) - 0.15, np.nanmax(allp, axis=0) + 0.15
    lo[2] = min(lo[2], 0.0)
    return animation(times, moving, static, title=f"{plotly_text(cell.name)}: {len(report.moves)} moves, "
                     f"{starts[-1]:.2f} s", ranges=list(zip(lo, hi)), height=700)


def move_section(m, sample) -> tuple[str, str]:
    """(heading, HTML) of one move: its joint profiles and phase plane (`scenarios.helper_process` makes
    them in the figure process, from plain data, as the move is planned)."""
    from scenarios.helper_process import move_heading, section_html
    return move_heading(m), section_html(m.index, sample, m.plan.robot, m.plan)


def pallet_report(report, move_sections, title: str | None = None, view: str | None = None) -> str:
    """The HTML document: the animated cell, the cycle-time and move tables, then `move_sections`."""
    summary_rows = [[c["box"], c["slot"], c["box_type"], f"{c['loaded_s']:.3f}", f"{c['return_s']:.3f}",
                     f"{c['cycle_s']:.3f}"] for c in report.cycle_times()]
    moves_rows = [[m.index + 1, m.label, m.slot.label, f"{0.0 if m.payload is None else m.payload.mass:g}",
                   f"{m.duration:.3f}", f"{100 * (m.plan.worst_ratio - 1):+.3f}",
                   "—" if m.clearance is None else f"{1000 * m.clearance.distance:.1f} ({m.clearance.bodies[0]} – "
                                                   f"{m.clearance.bodies[1]})"] for m in report.moves]
    sections = [(None, view if view is not None else figure_html(cell_figure(report), "view3d")),
                ("Cycle times", table_html(["box", "slot", "type", "loaded s", "return s", "cycle s"], summary_rows)
                 + f"<p>total {report.total_time:.3f} s for {len(report.boxes_planned)} boxes</p>"),
                ("Moves", table_html(["#", "move", "slot", "payload kg", "time s", "worst vs limit %",
                                     "closest approach mm"], moves_rows) + _not_set(report))]
    return page(title or f"{report.cell.name}: palletizing report", sections + list(move_sections))


def _not_set(report) -> str:
    """The note under the moves table naming the kinds of limit the robot has not (as the terminal's)."""
    note = report.limits_not_set_note()
    return f'<p class="note">{html.escape(note)}</p>' if note else ""


def _totals(cell: dict) -> list:
    """A cell's total time and worst ratio as the cells table shows them: those of the planned moves only when
    some failed (a cell whose moves all failed read "0.000 s", as if it took no time)."""
    planned = cell["moves"] - cell["failed"]
    if planned == 0:
        return ["— (none planned)", "—"]
    total = f"{cell['total_time_s']:.3f}"
    return [total if cell["failed"] == 0 else f"{total} ({planned} of {cell['moves']} moves)",
            f"{cell['worst_ratio']:.4f}"]


def batch_report(summary: dict, rows: list) -> str:
    """report.html of a batch: per cell (and its swept values) the moves, failures, total time and worst
    ratio, a chart of the cells' total times, and the failed moves with their errors."""
    cells = summary["cells"]
    names = list(cells)
    swept = sorted({k for c in cells.values() for k in c.get("sweep", {})})
    head = ["cell", *swept, "moves", "failed", "total time s", "worst value / limit"]
    table = [[n, *[cells[n].get("sweep", {}).get(k, "") for k in swept], cells[n]["moves"], cells[n]["failed"],
              *_totals(cells[n])] for n in names]
    chart = dict(data=[dict(type="bar", x=[plotly_text(n) for n in names], y=[cells[n]["total_time_s"] or 0.0 for n in names], name="total time",
                            hovertemplate="%{x}: %{y:.3f} s<extra></extra>")],
                 layout=dict(title=dict(text="total time of the planned moves per cell"), height=380,
                             yaxis=dict(title=dict(text="s")), margin=dict(l=50, r=20, t=50, b=80)))
    failed = [[r["cell"], r["move"], r["box"], r["kind"], r["error"]] for r in rows if r["status"] != "ok"]
    run = summary["run"]
    facts = (f"<p>{summary['moves']} moves, {summary['failed']} failed; this run planned {run['moves_planned']} in "
             f"{run['wall_s']:.1f} s on {run['workers']} worker(s) ({run['moves_per_s']:.2f} moves/s).</p>")
    sections = [(None, facts + figure_html(chart, "cells")), ("Cells", table_html(head, table))]
    if failed:
        sections.append(("Failed moves", table_html(["cell", "move", "box", "kind", "error"], failed[:1000])))
    return page("batch report", sections)
