"""The figures of a palletizing run, drawn in a second process while the first one plans
(`BackgroundFigures`): the PNGs (matplotlib), the report's move sections (HTML text) and the trajectory
CSVs (formatting 30 000 numbers a move).

Only plain data travels — arrays, numbers, names and the robot model — so the figure process never
imports the planner, scipy or the palletizing package: it starts with the run, imports what it draws
with (`_warm_up`) while the first process loads the cell, draws the pallet views (which do not depend on
the plans) while the moves are planned, and each move's section as soon as the move is planned. What is
left after the last plan is the cycle-time chart."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np


def move_heading(m) -> str:
    """The report's heading of a move (`MoveResult`)."""
    return (f"Move {m.index + 1}: {m.label} ({m.slot.label}, payload "
            f"{0.0 if m.payload is None else m.payload.mass:g} kg), {m.duration:.3f} s")


def section_html(index: int, sample, robot, plan, curves=None) -> str:
    """A move's joint profiles and phase plane (`toppra_app.html_report`) as HTML; `plan` needs s, sd,
    duration (and path, robot when `curves` is None)."""
    from toppra_app.html_report import figure_html, phase_plane_figure, profiles_figure
    return (figure_html(profiles_figure(sample, robot), f"profiles{index + 1}")
            + figure_html(phase_plane_figure(plan, curves=curves), f"phase{index + 1}"))


# ------------------------------------------------------------------------------ run in the figure process
def _warm_up(plots: bool, report: bool) -> None:
    """The imports of what will be drawn, done while the first process loads the cell."""
    if plots:
        import matplotlib.backends.backend_agg  # noqa: F401
        import matplotlib.figure  # noqa: F401
        import mpl_toolkits.mplot3d  # noqa: F401
    if report:
        import toppra_app.html_report  # noqa: F401
        import toppra_app.limits  # noqa: F401


def _section(head: str, index: int, sample, robot, plan, path_samples) -> tuple[str, str]:
    from toppra_app.plots import limit_curves
    curves = limit_curves(robot, *path_samples, plan.s, plan.sd)
    return head, section_html(index, sample, robot, plan, curves)


def _write_csv(path: str, sample, joint_names) -> None:
    from scenarios.report import write_trajectory_csv
    write_trajectory_csv(path, sample, joint_names)


def _draw_pallet_views(view, directory: str) -> None:
    import os
    from scenarios.report import pallet_figures, save_figure
    top, view3d = pallet_figures(view)
    save_figure(top, os.path.join(directory, "pallet_top.png"))
    save_figure(view3d, os.path.join(directory, "pallet_3d.png"))


def _draw_cycles(cycles, directory: str) -> None:
    import os
    from scenarios.report import cycle_figure, save_figure
    save_figure(cycle_figure(cycles), os.path.join(directory, "cycle_times.png"))


# ------------------------------------------------------------------------------ the first process's side
class BackgroundFigures:
    """Draws PNGs and report sections in a separate process (`workers`) while the caller goes on planning.
    Only what a figure needs travels; nothing is kept here but the sections' futures. ``plots`` /
    ``report``: which imports the process makes at once."""

    def __init__(self, workers: int = 1, plots: bool = True, report: bool = True):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        self.futures, self.sections = [self.pool.submit(_warm_up, plots, report)], []

    def submit_png(self, path, sample, robot, title: str) -> None:
        """A move's profile figure (`scenarios.report.profile_figure`) to `path`."""
        from scenarios.report import _draw_profile
        self.futures.append(self.pool.submit(_draw_profile, str(path), sample.t, sample.qd, sample.tau,
                                             np.asarray(robot.qd_max), np.asarray(robot.tau_max),
                                             tuple(robot.joint_names), title))

    def submit_csv(self, path, sample, joint_names) -> None:
        """A move's trajectory CSV (`scenarios.report.write_trajectory_csv`), formatted over there."""
        self.futures.append(self.pool.submit(_write_csv, str(path), SimpleNamespace(
            t=sample.t, q=sample.q, qd=sample.qd, qdd=sample.qdd, tau=sample.tau), tuple(joint_names)))

    def submit_section(self, move, sample) -> None:
        """The move's report section (`scenarios.report_html.move_section`), kept in submission order: the
        path is sampled here for the limit curves, the curves are computed over there."""
        from toppra_app.plots import path_samples
        plan = move.plan
        self.sections.append(self.pool.submit(
            _section, move_heading(move), move.index,
            SimpleNamespace(t=sample.t, qd=sample.qd, qdd=sample.qdd, tau=sample.tau), plan.robot,
            SimpleNamespace(s=np.asarray(plan.s), sd=np.asarray(plan.sd), duration=float(plan.duration)),
            path_samples(plan.path)))

    def submit_pallet_views(self, view, directory) -> None:
        """pallet_top.png and pallet_3d.png of `scenarios.report.pallet_view` (known before planning)."""
        self.futures.append(self.pool.submit(_draw_pallet_views, view, str(directory)))

    def submit_cycles(self, cycles, directory) -> None:
        """cycle_times.png of `scenarios.report.cycle_data` (a planned pallet)."""
        self.futures.append(self.pool.submit(_draw_cycles, cycles, str(directory)))

    def finish(self) -> list:
        """Wait for every figure (errors re-raised); returns the report sections."""
        try:
            for f in self.futures:
                f.result()
            return [f.result() for f in self.sections]
        finally:
            self.close()

    def close(self) -> None:
        for f in self.futures + self.sections:
            f.cancel()
        self.pool.shutdown(wait=True, cancel_futures=True)
