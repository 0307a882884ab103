"""PNG plots of a plan (matplotlib, Agg backend), each file written atomically (temporary name, then rename).

* `plot_joints`: joint torques, velocities or accelerations against time with their limits drawn, and
  the same normalised (value / limit) in a second panel — of a long trajectory the samples that decide each
  pixel column (`toppra_app.decimate.envelope`: every run's first, last, smallest and largest sample), so a
  figure costs the same whatever the sample time;
* `plot_phase_plane`: θ̇(θ) of the plan with the maximum-velocity curves from the joint velocity limits
  and from the torque (and acceleration) limits.
"""

from __future__ import annotations

import os

import numpy as np

from .figures import plain_text

QUANTITIES = {
    "torque": ("tau", "tau_max", "joint torque [N·m]"),
    "velocity": ("qd", "qd_max", "joint velocity [rad/s]"),
    "acceleration": ("qdd", "qdd_max", "joint acceleration [rad/s²]"),
}


def _pyplot():
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    return plt


def save_figure(fig, path) -> str:
    """Write a pyplot figure (`toppra_app.figures.save_figure`) and close it."""
    from .figures import save_figure as save
    try:
        return save(fig, path)
    finally:
        _pyplot().close(fig)


def plot_joints(robot, sample, kind: str, path) -> str:
    """Joint `kind` ("torque", "velocity", "acceleration") of a `TrajectorySample` against time, limits
    dashed; lower panel: value / limit (where limited) with ±1 drawn. Of many samples the lines go through
    those that decide each pixel column (`decimate.envelope`, two runs a pixel column): the same picture."""
    from .decimate import envelope, figure_bins
    from .figures import DPI
    if kind not in QUANTITIES:
        raise ValueError(f"kind: expected one of {sorted(QUANTITIES)}, got {kind!r}")
    attr, lim_attr, label = QUANTITIES[kind]
    plt = _pyplot()
    values = getattr(sample, attr)
    limits = np.asarray(getattr(robot, lim_attr), dtype=float)
    t = sample.t
    fig, (ax, axn) = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    keep = envelope(values, figure_bins(fig.get_figwidth(), DPI))     # per joint; all samples when few
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k in range(robot.n):
        c = colors[k % len(colors)]
        tk, vk = t[keep[k]], values[keep[k], k]
        ax.plot(tk, vk, color=c, lw=1.2, label=plain_text(robot.joint_names[k]))
        if np.isfinite(limits[k]):
            ax.axhline(limits[k], color=c, ls="--", lw=0.7)
            ax.axhline(-limits[k], color=c, ls="--", lw=0.7)
            axn.plot(tk, vk / limits[k], color=c, lw=1.0)          # (a limit > 0: the same extremes)
    ax.set_ylabel(label)
    ax.set_title(f"{plain_text(robot.name)}: {kind} (dashed: limits)")
    ax.legend(loc="upper right", fontsize=7, ncol=max(1, robot.n // 4))
    ax.grid(alpha=0.3)
    for y in (-1.0, 1.0):
        axn.axhline(y, color="k", ls="--", lw=0.8)
    if not np.isfinite(limits).any():                  # (an empty panel read as if nothing came near a limit)
        axn.text(0.5, 0.5, f"no joint {kind} limit set", transform=axn.transAxes, ha="center", va="center")
    axn.set_ylabel(f"{kind} / limit")
    axn.set_xlabel("time [s]")
    axn.grid(alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, path)


def phase_plane_curves(plan, samples: int = 400) -> dict:
    """θ, the velocity-limit curve √b_vel(θ) and the torque/acceleration-limit curve √b_dyn(θ)."""
    return limit_curves(plan.robot, *path_samples(plan.path, samples), plan.s, plan.sd)


def path_samples(path, samples: int = 400) -> tuple:
    """(θ, q, q′, q″) at `samples` even steps of the path: what `limit_curves` needs of it."""
    theta = np.linspace(path.s_start, path.s_end, samples)
    S = path.evaluate(theta)
    return theta, S.q, S.dq, S.ddq


def limit_curves(robot, theta, q, dq, ddq, s, sd) -> dict:
    """`phase_plane_curves` from the path's samples (`path_samples`) and the plan's θ̇(θ) (s, sd), which
    sets the reference speed of the torque rows: no path object needed (a figure process gets arrays)."""
    from .limits import JointAccelerationLimit, JointTorqueLimit, JointVelocityLimit, PathData, max_path_speed_squared
    data = PathData(robot, theta, q, dq, ddq)
    b_vel = JointVelocityLimit().b_max(data)
    blocks = [blk for blk in (JointTorqueLimit().rows(data, b_ref=np.maximum(np.interp(theta, s, sd) ** 2, 1e-9)),
                              JointAccelerationLimit().rows(data)) if blk is not None]
    b_dyn = max_path_speed_squared(blocks) if blocks else np.full(len(theta), np.inf)
    return dict(theta=theta, sd_velocity=np.sqrt(b_vel), sd_dynamics=np.sqrt(b_dyn))


def plot_phase_plane(plan, path) -> str:
    """θ̇ against θ: the plan and the maximum-velocity curves (velocity limits; torque/acceleration limits)."""
    plt = _pyplot()
    curves = phase_plane_curves(plan)
    fig, ax = plt.subplots(figsize=(9, 5))
    sd_max = max(float(np.max(plan.sd)), 1e-9)
    envelope = np.fmin(curves["sd_velocity"], curves["sd_dynamics"])
    envelope = envelope[np.isfinite(envelope)]
    # the curves go to infinity where q′ → 0: show up to a few times the plan's top speed
    top = min(max(1.3 * sd_max, 1.1 * float(envelope.max()) if envelope.size else 0.0), 4.0 * sd_max)
    ax.plot(plan.s, plan.sd, "C0", lw=2.5, alpha=0.8, label=f"plan (T = {plan.duration:.4f} s)", zorder=2)
    ax.plot(curves["theta"], np.minimum(curves["sd_velocity"], 2 * top), "C1--", lw=1.3, label="velocity limits",
            zorder=3)
    ax.plot(curves["theta"], np.minimum(curves["sd_dynamics"], 2 * top), "C3--", lw=1.3,
            label="torque / acceleration limits (θ̈ free)", zorder=3)
    ax.set_ylim(0, top)
    ax.set_xlabel("path parameter θ")
    ax.set_ylabel("path speed θ̇ [1/s]")
    ax.set_title(f"{plain_text(plan.robot.name)}: phase plane")
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_plan(plan, directory, sample=None, dt: float = 1e-3) -> list[str]:
    """All plots of a plan into `directory`: torques.png, velocities.png, accelerations.png, phase_plane.png."""
    sample = plan.sample(dt) if sample is None else sample
    files = []
    for kind, name in (("torque", "torques.png"), ("velocity", "velocities.png"), ("acceleration", "accelerations.png")):
        files.append(plot_joints(plan.robot, sample, kind, os.path.join(directory, name)))
    files.append(plot_phase_plane(plan, os.path.join(directory, "phase_plane.png")))
    return files
