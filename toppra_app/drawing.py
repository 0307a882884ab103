"""3-D line drawings of robot models in a configuration (matplotlib, no pyplot state).

- `RobotModel`: a skeleton — a segment from each body's parent origin to its origin (from the base
  origin for root bodies), a dot per joint, and a thin segment from a body's origin to each of its
  extra frames (tool flange, TCP, …), with a cross at the frame origin.
- `EulerModel` (Gonçalves et al.): every link drawn from its own points, in world coordinates from
  `euler_points` (the lines the link lists, or A′ to each of its points when it lists none), plus
  optional lines between points of two links (e.g. CHARMIE's actuators).
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

import dynamics
from dynamics.euler_zxz import EulerModel, euler_points

from .figures import plain_text


def _segments_robot(robot, q):
    T = dynamics.forward_kinematics(robot, q)
    o = T[:, :3, 3]
    body = []
    for i in range(robot.n_bodies):
        p = robot.parents[i]
        body.append((np.zeros(3) if p < 0 else o[p], o[i]))
    frames = []
    for name in robot.frame_names:
        b, Tf = robot.frame(name)
        frames.append((o[b], (T[b] @ Tf)[:3, 3]))
    return body, frames, o


def _segments_euler(model: EulerModel, q, extra_lines=()):
    P = euler_points(model, q)
    body = []
    for lk in model.links:
        lines = lk.lines or tuple(("A", k) for k in lk.points if k != "A")
        body += [(P.point(lk.name, a), P.point(lk.name, b)) for a, b in lines]
    extra = [(P.point(*a), P.point(*b)) for a, b in extra_lines]
    joints = np.array([P.point(lk.name, "A") for lk in model.links if lk.joint is not None])
    return body, extra, joints


def draw_robot(model, q=None, ax=None, *, title: str | None = None, extra_lines=(),
               elev: float = 20.0, azim: float = -60.0):
    """Draw ``model`` (a `RobotModel` or an `EulerModel`) at configuration ``q`` (default zeros) on a
    3-D axes (a new figure when ``ax`` is None). Returns the axes."""
    n = model.n
    q = np.zeros(n) if q is None else np.asarray(q, dtype=float)
    if q.shape != (n,):
        raise dynamics.ModelError(f"q: expected {n} joint values for robot '{model.name}', got {q.size}")
    if ax is None:
        fig = Figure(figsize=(7, 7))
        ax = fig.add_subplot(projection="3d")
    if isinstance(model, EulerModel):
        body, thin, joints = _segments_euler(model, q, extra_lines)
    else:
        body, thin, joints = _segments_robot(model, q)
    for a, b in body:
        ax.plot(*zip(a, b), color="tab:blue", lw=2.5, solid_capstyle="round")
    for a, b in thin:
        ax.plot(*zip(a, b), color="tab:orange", lw=1.2)
        if not isinstance(model, EulerModel):
            ax.scatter(*b, color="tab:orange", marker="x", s=30)
    if len(joints):
        ax.scatter(joints[:, 0], joints[:, 1], joints[:, 2], color="k", s=12, depthshade=False)
    pts = np.array([p for seg in body + thin for p in seg] + [np.zeros(3)])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    centre, half = (lo + hi) / 2, max((hi - lo).max() / 2, 1e-3) * 1.05
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(max(centre[2] - half, min(lo[2], 0.0)), centre[2] + half)
    ax.set_box_aspect((1, 1, (ax.get_zlim()[1] - ax.get_zlim()[0]) / (2 * half)))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.view_init(elev=elev, azim=azim)
    ax.set_title(plain_text(title if title is not None else model.name))
    return ax


def save_figure(fig, path, dpi: int = 120, replaceable=None) -> None:
    """Write the figure whole or not at all, marked as ours (`toppra_app.figures.save_figure`)."""
    from .figures import save_figure as save
    save(fig, path, dpi=dpi, replaceable=replaceable)


