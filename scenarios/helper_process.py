"""The second process of a palletizing run (`HelperProcess`): it loads the cell and solves the loaded
paths' IK while the first process imports the planner, then — while the first one plans — checks each
planned move for collisions, draws the PNGs (matplotlib), makes the report's move sections (HTML text) and
writes the trajectory CSVs (formatting 30 000 numbers a move).

Only plain data travels to it for the figures — arrays, numbers, names and the robot model — so it never
imports the planner or scipy: the pallet views (which do not depend on the plans) are drawn while the
moves are planned, each move's section as soon as the move is planned. What is left after the last plan
is the cycle-time chart."""

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


# ------------------------------------------------------------------------------ run in the helper process
def _captured(fn, args) -> bytes:
    """`fn(*args)` and the warnings it gave, (result, [(message, category, filename, lineno)]), so that the
    first process shows them as its own — pickled here, for `HelperProcess.show` to unpickle in the first
    process's main thread: the executor would unpickle it in its own thread, while the main thread may still
    be importing the modules the result's classes live in (the cell and its IK arrive while the planner is
    imported), and an import from two threads at once can find a module half-initialised ("cannot import
    name 'IKError' from partially initialized module 'dynamics.inverse_kinematics'", once in ten cold runs)."""
    import pickle
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        result = fn(*args)
    return pickle.dumps((result, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]))


def _section(head: str, index: int, sample, robot, plan, path_samples) -> tuple[str, str]:
    from toppra_app.plots import limit_curves
    curves = limit_curves(robot, *path_samples, plan.s, plan.sd)
    return head, section_html(index, sample, robot, plan, curves)


def _write_csv(path: str, sample, joint_names) -> None:
    from scenarios.report import write_trajectory_csv
    write_trajectory_csv(path, sample, joint_names)


def _check_move(cell, move, t, q, qd) -> tuple:
    """`collisions.check_move` of one move (`move`: index, box, kind, slot) sampled at t: (the `Clearance`,
    the check's wall time)."""
    import time
    from scenarios.palletizing.collisions import check_move
    t0 = time.perf_counter()
    return check_move(cell, move, SimpleNamespace(t=t, q=q, qd=qd)), time.perf_counter() - t0


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


def _exit_with_parent() -> None:
    """The pool's initializer: end this process when the first one is gone (killed with SIGKILL, out of memory).
    A pool's worker waits for its next task forever — it holds both ends of the task queue's pipe — so every
    `palletize` killed that way left its helper behind for good, finishing the tasks it had queued into the
    dead run's temporary directory. The parent's sentinel (multiprocessing's pipe from it) becomes readable then."""
    import multiprocessing
    import os
    import threading
    from multiprocessing.connection import wait
    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return

    def watch():
        wait([parent.sentinel])
        os._exit(1)
    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


# ------------------------------------------------------------------------------ the first process's side
class HelperProcess:
    """A second process (`workers`) for the work off the planning path: `run` any function there (the
    cell and its IK), then figures, report sections and CSVs while the caller plans. Only what a task
    needs travels; nothing is kept here but the futures."""

    def __init__(self, workers: int = 1):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_exit_with_parent)
        self.futures, self.sections = [], []

    def run(self, fn, *args):
        """`fn(*args)` over there (`fn` a module-level function): a future whose `result` gives (value,
        warnings) — see `show`."""
        return self.pool.submit(_captured, fn, args)

    @staticmethod
    def show(outcome: bytes):
        """The value of a `run` future's result (unpickled here, `_captured`), its warnings shown here
        (`warnings.showwarning`: the command line's one-line format)."""
        import pickle
        import warnings
        value, caught = pickle.loads(outcome)
        for message, category, filename, lineno in caught:
            warnings.showwarning(category(message), category, filename, lineno)
        return value

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

    def submit_collision_check(self, cell, move, sample):
        """A future of the move's collision check (`_check_move`: clearance, seconds) on its 1 ms samples."""
        return self.pool.submit(_check_move, cell, SimpleNamespace(index=move.index, box=move.box, kind=move.kind,
                                                                   slot=move.slot), sample.t, sample.q, sample.qd)

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
