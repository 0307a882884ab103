"""Output of the scenarios: an output directory written atomically, trajectory CSVs, summary tables and
figures (matplotlib `Figure` objects, no pyplot state). A move's profile plot shows velocity and
torque per joint as fractions of their limits, with the limits as lines."""

from __future__ import annotations

import json
import math
import sys
from types import SimpleNamespace

import numpy as np

from toppra_app.figures import plain_text


# ------------------------------------------------------------------------------ files
UNITS = dict(time="s", mass="kg", length="m", position="rad or m", velocity="rad/s or m/s",
             acceleration="rad/s² or m/s²", effort="N·m or N", theta="path parameter θ, 0 … 1 along the move")


def provenance(joint_names=None) -> dict:
    """What a scenario's summary.json says of itself: the tool and its version, the units (and the joints'
    names, in the order of every per-joint list). `plan`'s summary had them; palletize's and payload-sweep's
    had neither, so a summary could not be told from another version's, nor its joint lists read by name."""
    from toppra_app.manifest import TOOL, _version
    return dict(tool=TOOL, version=_version(), units=UNITS,
                **({} if joint_names is None else dict(joint_names=list(joint_names))))


def write_json(path, data) -> None:
    def default(o):
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, (np.floating, np.integer)):
            return o.item()
        if isinstance(o, np.bool_):
            return bool(o)
        raise TypeError(type(o).__name__)

    def clean(o):
        if isinstance(o, float) and not math.isfinite(o):
            return None
        if isinstance(o, dict):
            return {k: clean(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [clean(v) for v in o]
        return o
    with open(path, "w") as fh:
        json.dump(clean(data), fh, indent=2, default=default)
        fh.write("\n")


def write_trajectory_csv(path, sample, joint_names) -> None:
    """t, then q, qd, qdd, tau of every joint (SI units), one row per sample, 9 significant digits
    (`toppra_app.export.trajectory_csv`)."""
    from toppra_app.export import trajectory_csv
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(trajectory_csv(sample, joint_names, fmt="%.9g"))



# ------------------------------------------------------------------------------ terminal
class ProgressBar:
    """A one-line text progress bar on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, label: str, width: int = 30, stream=None):
        self.label, self.width = label, width
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._open = False

    def close(self) -> None:
        """End an unfinished bar line (e.g. before an error message)."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False

    def __call__(self, done: int, total: int, what: str = "") -> None:
        filled = int(round(self.width * done / max(total, 1)))
        bar = "#" * filled + "." * (self.width - filled)
        line = f"{self.label} [{bar}] {done}/{total} {what}"
        if self.tty:
            self.stream.write("\r" + line.ljust(100))
            self._open = done < total
            if done >= total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def format_table(headers, rows, aligns=None) -> str:
    """A plain text table (right-aligned numbers)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    aligns = aligns or ["<"] + [">"] * (len(headers) - 1)
    lines = []
    for k, r in enumerate(cells):
        lines.append("  ".join(f"{c:{a}{w}}" for c, a, w in zip(r, aligns, widths)))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


# ------------------------------------------------------------------------------ figures
def _save(fig, path, tight: bool = True) -> None:
    from toppra_app.figures import save_figure as save
    save(fig, path, tight=tight)


def profile_figure(sample, robot, title: str = ""):
    """Joint velocity and torque over time, each divided by its limit (limits at ±1). `sample` needs t,
    qd, tau; `robot` n, joint_names, qd_max, tau_max. Laid out by hand (no tight bounding box). Of many
    samples the lines go through those that decide each pixel column (`toppra_app.decimate.envelope`)."""
    from matplotlib.figure import Figure
    from toppra_app.decimate import envelope, figure_bins
    from toppra_app.figures import DPI
    fig = Figure(figsize=(9, 6.5))
    fig.subplots_adjust(left=0.09, right=0.98, top=0.86, bottom=0.08, hspace=0.08)
    ax1, ax2 = fig.subplots(2, 1, sharex=True)
    t, bins = np.asarray(sample.t), figure_bins(fig.get_figwidth(), DPI)
    speed, torque = envelope(sample.qd, bins), envelope(sample.tau, bins)
    for j in range(robot.n):
        ax1.plot(t[speed[j]], sample.qd[speed[j], j] / robot.qd_max[j], lw=1.2, label=plain_text(robot.joint_names[j]))
        ax2.plot(t[torque[j]], sample.tau[torque[j], j] / robot.tau_max[j], lw=1.2)
    for ax, what in ((ax1, "q̇ / q̇max"), (ax2, "τ / τmax")):
        ax.axhline(1.0, color="k", ls="--", lw=0.8)
        ax.axhline(-1.0, color="k", ls="--", lw=0.8)
        ax.set_ylabel(what)
        ax.set_ylim(-1.25, 1.25)
        ax.grid(alpha=0.3)
    ax2.set_xlabel("t [s]")
    fig.legend(ncol=min(robot.n, 7), fontsize=7, loc="upper center", bbox_to_anchor=(0.5, 0.93))
    if title:
        fig.suptitle(plain_text(title), y=0.985)
    return fig


def _draw_profile(path, t, qd, tau, qd_max, tau_max, joint_names, title) -> None:
    """Runs in the plotting process: one move's profile figure to `path`."""
    from types import SimpleNamespace
    fig = profile_figure(SimpleNamespace(t=t, qd=qd, tau=tau),
                         SimpleNamespace(n=len(joint_names), qd_max=qd_max, tau_max=tau_max, joint_names=joint_names),
                         title)
    _save(fig, path, tight=False)


def _box_corners(centre, size_xy, yaw):
    c, s = math.cos(yaw), math.sin(yaw)
    hx, hy = 0.5 * size_xy[0], 0.5 * size_xy[1]
    pts = np.array([[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy], [-hx, -hy]])
    R = np.array([[c, -s], [s, c]])
    return centre[:2] + pts @ R.T


def pallet_view(cell, boxes) -> SimpleNamespace:
    """What the pallet views (`pallet_figures`) show, as plain data: the cell's pallet, slots, pick and arm
    at the pick posture, and the TCP paths of the loaded moves of `boxes` (slot indices) — all known
    once the cell is loaded (the place poses as the pose IK chose them), before any plan."""
    from dynamics.forward_kinematics import forward_kinematics, frame_pose
    from scenarios.palletizing.cartesian_path import cartesian_path
    from scenarios.palletizing.moves import place_posture
    paths = []
    for b in boxes:
        slot, _ = place_posture(cell, cell.slots[b])
        paths.append((slot.box.name, cartesian_path(cell, slot).poses[:, :3, 3]))
    slots = [SimpleNamespace(index=s.index, centre=np.asarray(s.centre), size=np.asarray(s.box.size), yaw=s.yaw,
                             box=s.box.name) for s in cell.slots]
    try:                                     # the arm at the pick: base, joint origins, TCP (optional)
        q0 = cell.q_pick if cell.q_pick is not None else cell.q_preferred
        T = forward_kinematics(cell.robot, q0)
        arm = np.vstack([np.zeros(3), T[:, :3, 3], frame_pose(cell.robot, q0, "tcp")[:3, 3]])
    except Exception:                        # noqa: BLE001 - drawing the arm is optional
        arm = None
    return SimpleNamespace(name=cell.name, pallet_pose=np.asarray(cell.pallet_pose), pallet_size=np.asarray(cell.pallet_size),
                           slots=slots, box_names=list(cell.boxes), pick=np.asarray(cell.pick),
                           pick_size=np.asarray(cell.layer_boxes[0].size), planned=list(boxes), paths=paths, arm=arm)


def pallet_figures(view):
    """(top view, 3-D view) of the pallet, the placed boxes and the TCP paths of the planned moves
    (`pallet_view`)."""
    from matplotlib.figure import Figure
    pallet_yaw = math.atan2(view.pallet_pose[1, 0], view.pallet_pose[0, 0])
    planned = set(view.planned)
    colours = {name: f"C{k}" for k, name in enumerate(view.box_names)}

    top = Figure(figsize=(7, 7))
    ax = top.subplots()
    pc = _box_corners(view.pallet_pose[:3, 3], view.pallet_size, pallet_yaw)
    ax.fill(pc[:, 0], pc[:, 1], color="burlywood", alpha=0.5, label="pallet")
    for s in view.slots:
        corners = _box_corners(s.centre, s.size[:2], s.yaw)
        ax.plot(corners[:, 0], corners[:, 1], color=colours[s.box], lw=1.5 if s.index in planned else 0.6,
                ls="-" if s.index in planned else ":")
        ax.text(s.centre[0], s.centre[1], f"{s.index + 1}", ha="center", va="center", fontsize=7)
    pick = view.pick[:3, 3]
    pk = _box_corners(pick, view.pick_size[:2], math.atan2(view.pick[1, 0], view.pick[0, 0]))
    ax.plot(pk[:, 0], pk[:, 1], "k-", lw=1)
    ax.annotate("pick", pick[:2], textcoords="offset points", xytext=(8, 8))
    for box, p in view.paths:
        ax.plot(p[:, 0], p[:, 1], lw=0.8, color=colours[box], alpha=0.8)
    ax.plot([0], [0], "ks", ms=10, label="robot base")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.grid(alpha=0.3)
    ax.set_title(f"{plain_text(view.name)}: top view (numbers = placing order)")
    for name, col in colours.items():
        ax.plot([], [], color=col, label=f"box '{plain_text(name)}'")
    ax.legend(fontsize=8, loc="best")

    f3 = Figure(figsize=(8, 7))
    ax3 = f3.add_subplot(projection="3d")
    for s in view.slots:
        if s.index not in planned:
            continue
        c = _box_corners(s.centre, s.size[:2], s.yaw)
        z0, z1 = s.centre[2] - 0.5 * s.size[2], s.centre[2] + 0.5 * s.size[2]
        for z in (z0, z1):
            ax3.plot(c[:, 0], c[:, 1], z, color=colours[s.box], lw=0.8)
        for k in range(4):
            ax3.plot([c[k, 0]] * 2, [c[k, 1]] * 2, [z0, z1], color=colours[s.box], lw=0.8)
    ax3.plot(pc[:, 0], pc[:, 1], view.pallet_pose[2, 3], color="saddlebrown", lw=1.5)
    for box, p in view.paths:
        ax3.plot(p[:, 0], p[:, 1], p[:, 2], lw=1.0, color=colours[box])
    if view.arm is not None:
        o, tcp = view.arm, view.arm[-1]
        ax3.plot(o[:, 0], o[:, 1], o[:, 2], "k-o", ms=3, lw=2, label="robot at the pick")
        ax3.text(tcp[0], tcp[1], tcp[2] - 0.05, "pick", fontsize=8)
        ax3.legend(fontsize=8, loc="upper left")
    ax3.set_xlabel("x [m]")
    ax3.set_ylabel("y [m]")
    ax3.set_zlabel("z [m]")
    ax3.set_title("tool (TCP) paths of the loaded moves")
    pts = [np.zeros(3), view.pick[:3, 3], view.pallet_pose[:3, 3]] + [p for _, p in view.paths]
    allp = np.vstack([np.atleast_2d(p) for p in pts])
    lo, hi = allp.min(axis=0) - 0.1, allp.max(axis=0) + 0.1
    lo[2], hi[2] = 0.0, max(hi[2], 0.9)
    ax3.set_xlim(lo[0], hi[0])
    ax3.set_ylim(lo[1], hi[1])
    ax3.set_zlim(lo[2], hi[2])
    ax3.set_box_aspect(hi - lo)
    ax3.view_init(elev=25, azim=-120)
    return top, f3


def cycle_data(report) -> SimpleNamespace:
    """What the cycle-time chart (`cycle_figure`) shows of a planned pallet, as plain data."""
    return SimpleNamespace(labels=[m.label for m in report.moves], durations=[m.duration for m in report.moves],
                           loaded=[m.kind == "loaded" for m in report.moves], total=report.total_time,
                           boxes=len(report.boxes_planned),
                           checks=[(f"box{c.box + 1} ({c.payload_kg:g} kg)", c.torque_ratio) for c in report.nominal_checks])


def cycle_figure(cycles):
    """Bar chart: duration of every move, and the nominal plan's torque demand with the box (`cycle_data`)."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(9, 6))
    ax1, ax2 = fig.subplots(2, 1)
    labels = cycles.labels
    ax1.bar(range(len(labels)), cycles.durations, color=["C0" if ld else "C7" for ld in cycles.loaded])
    ax1.set_xticks(range(len(labels)), labels, rotation=70, fontsize=7)
    ax1.set_ylabel("move duration [s]")
    ax1.set_title(f"total {cycles.total:.2f} s for {cycles.boxes} boxes (blue: loaded, grey: return)")
    ch = cycles.checks
    ax2.bar(range(len(ch)), [100 * ratio for _, ratio in ch], color="C3")
    ax2.axhline(100, color="k", ls="--", lw=0.8)
    ax2.set_xticks(range(len(ch)), [label for label, _ in ch], rotation=30, fontsize=8)
    ax2.set_ylabel("peak |τ|/τ_max [%]")
    ax2.set_title("empty-gripper plan executed with the box (limit = 100 %)")
    fig.tight_layout()
    return fig


def sweep_figure(sweep):
    from matplotlib.figure import Figure
    fig = Figure(figsize=(8, 5))
    ax = fig.subplots()
    D = sweep.table()
    for i, off in enumerate(sweep.offsets):
        ax.plot(sweep.masses, D[i], "o-", label=f"COM offset {100 * off:g} cm")   # (:.0f: 4 mm read "0 cm")
    ax.set_xlabel("payload mass [kg]")
    ax.set_ylabel("minimum time of the move [s]")
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(f"{plain_text(sweep.cell.robot_name)}: duration vs payload (box {sweep.box + 1}, loaded move)")
    return fig


def save_figure(fig, path) -> None:
    _save(fig, path)
