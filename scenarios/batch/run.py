"""Running a batch: every box of every cell is one task (`tasks.plan_box_task`), run in this process
(``serial``), on a local Dask cluster with one single-threaded worker process per core (default), or on
an existing Dask cluster (``scheduler``). Results are written as tasks finish (`store.BatchStore`); at
most a few tasks per worker are in flight, so the client's memory does not grow with the batch.

Results do not depend on where a task ran: each task plans from the same cell data with the same
deterministic planner (compiled problems are reused per worker process, which changes no number)."""

from __future__ import annotations

import logging
import os
import sys
import time
import warnings
from dataclasses import dataclass

from toppra_app import interrupt
from toppra_app.errors import InputError

from .manifest import BatchSpec
from .scratch import scratch_directory
from .signals import ctrl_c_held, signals_deferred
from .tasks import BoxOutcome, failed_outcome, plan_box_task


@dataclass
class Task:
    cell_id: str
    cell: object
    box: int


MAX_BATCH_BOXES = 1_000_000   # boxes to plan in one batch: the loaded cells are held until the end, ~0.75 kB a
#                               box (a 2000-box cell ~1.5 MB) besides ~28 kB a cell, so `MAX_VARIANTS` cells of
#                               `MAX_BOXES` each passed every check and would have held ~150 GB (an audit); ~0.75 GB


def load_cells(spec: BatchSpec):
    """Validate every cell (one line naming file and field on the first bad one), then solve the cells' pick
    postures. Returns ([(CellSpec, Cell)], [BoxOutcome of cells whose pick pose is out of reach]). More than
    `MAX_BATCH_BOXES` boxes to plan in all is refused as soon as the cells read so far hold them. Every cell is
    read before the first pick posture is solved (~2 ms against ~35 ms a cell here): a bad value in the
    1000th variant of a sweep ended the batch after 41 s of IK on the 999 before it, now after ~3 s."""
    from scenarios.palletizing import IKFailure, cell_from_document, pick_posture, select_boxes
    read, failed, loaded, total, warned, solved = [], [], [], 0, set(), {}
    for cs in spec.cells:
        cell = cell_from_document(cs.document, cs.source, cs.base_dir, cs.default_name, check_reach=False)
        if isinstance(spec.boxes, tuple):
            bad = [b + 1 for b in spec.boxes if b >= len(cell.slots)]
            if bad:
                raise InputError(f"{spec.sources[0]}: batch.boxes: box {bad[0]} does not exist in {cs.source} "
                                 f"(its pallet has {len(cell.slots)} boxes)")     # (the manifest's key)
        boxes = list(spec.boxes) if isinstance(spec.boxes, tuple) else select_boxes(cell, spec.boxes == "quick")
        total += len(boxes)
        if total > MAX_BATCH_BOXES:
            raise InputError(f"{spec.sources[0]}: more than {MAX_BATCH_BOXES} boxes to plan in one batch (at cell "
                             f"{cs.id}); split it into several batches, or plan fewer boxes (batch.boxes)")
        read.append((cs, cell, boxes))
    for cs, cell, boxes in read:
        if cell.tau_rms is not None and cs.file not in warned:                # (once a file, not once a variant)
            warned.add(cs.file)
            warnings.warn(f"{cs.file}: [thermal]: batch plans the moves, not the RMS-limited cycle; run "
                          f"`toppra-app palletize` on this cell for it", RuntimeWarning, stacklevel=2)
        try:
            pick_posture(cell, solved)                   # (sweep variants of one robot and pick: solved once)
        except IKFailure as exc:
            failed.extend(failed_outcome(cs.id, cell, b, exc) for b in boxes)
            continue
        loaded.append((cs, cell, boxes))
    return loaded, failed


class Progress:
    """Moves done and failed, and the rate, on one stderr line (a line per update when not a terminal)."""

    def __init__(self, total: int, stream=None, every: float = 0.5):
        self.total, self.done, self.failed = total, 0, 0
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.perf_counter()
        self.every, self._last = every, -1e9

    def update(self, outcome: BoxOutcome) -> None:
        self.done += len(outcome.rows)
        self.failed += sum(r["status"] != "ok" for r in outcome.rows)
        now = time.perf_counter()
        if now - self._last >= self.every or self.done >= self.total:
            self._last = now
            rate = self.done / max(now - self.t0, 1e-9)
            eta = (self.total - self.done) / rate if rate > 0 else float("inf")
            line = (f"batch: {self.done}/{self.total} moves, {self.failed} failed, {rate:.1f} moves/s, "
                    f"{eta:.0f} s left")
            self.stream.write(("\r" + line.ljust(79)) if self.tty else line + "\n")
            if self.tty and self.done >= self.total:
                self.stream.write("\n")
            self.stream.flush()

    def close(self) -> None:
        if self.tty and self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()


def dask_client(jobs: int | None, scheduler: str | None):
    """(client, local cluster or None): a local cluster of `jobs` single-threaded worker processes
    (default one per core), or a client of the scheduler at `scheduler`; one line when neither works."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise InputError("batch: Dask is not installed; install it with  pip install \"toppra-app[cluster]\"  or run "
                         "with --serial") from None
    if scheduler is not None:
        check_scheduler(scheduler)
        try:
            return Client(scheduler, timeout="10s"), None
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"--scheduler {scheduler}: cannot connect ({str(exc).splitlines()[0]})") from None
    n = jobs or os.cpu_count() or 1
    # the worker processes start with Ctrl-C ignored (they inherit it): Ctrl-C reaches the whole process group,
    # and each worker printed its traceback (90-100 lines after ours); this process stops them when it unwinds.
    # Ignored only until they are spawned (~0.1 s); while they import and register (1-3 s here) a Ctrl-C is kept
    # and acted on once they are up (ignored, it was lost and the batch ran on to its end; raised inside Dask's
    # start-up, it ended in a traceback)
    import dask
    scratch = scratch_directory()
    with dask.config.set({"temporary-directory": scratch}):
        with ctrl_c_held():
            cluster = LocalCluster(n_workers=0, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR, local_directory=scratch,
                                   # its HTTP server (health, metrics) on a free port: on 8787, taken by any other
                                   # Dask scheduler here, it warned in three lines
                                   scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
            before = _spawned()
            cluster.scale(n)
            _until_spawned(before, n)
        with signals_deferred() as received:
            client = Client(cluster)
            failed = _until_running(client, cluster, n)
    if failed:
        close_dask(client, cluster)
        raise InputError(f"batch: {failed} of the {n} local Dask workers did not start (their error is above)")
    if received:
        close_dask(client, cluster)
        interrupt.handle(received[0], None)           # KeyboardInterrupt (Terminated for SIGTERM, SIGHUP)
    on_workers(client, quiet_heartbeat)               # (idle now: returns at once)
    return client, cluster


HEARTBEAT_FAILED = "Failed to communicate with scheduler during heartbeat"


class _SchedulerClosed(logging.Filter):
    """Drops a local worker's heartbeat failure: its scheduler lives in this process, so the heartbeat fails only
    when this process closes the cluster — under a worker still busy in `client.run(warm_up)` (its event loop held
    by the imports) a Ctrl-C left a 38-line traceback on the terminal after the batch's one line (3 of ~20 runs
    interrupted 3.5-4.6 s in)."""

    def filter(self, record) -> bool:
        return not str(record.msg).startswith(HEARTBEAT_FAILED)


def quiet_heartbeat() -> None:
    """Run on every local worker once it is up (`dask_client`; not on a cluster of --scheduler, whose scheduler
    is not ours): `_SchedulerClosed` on the worker's log."""
    log = logging.getLogger("distributed.worker")
    if not any(isinstance(f, _SchedulerClosed) for f in log.filters):
        log.addFilter(_SchedulerClosed())


SCHEDULER_TIMEOUT = 8.0     # s a Dask scheduler has to answer `check_scheduler`


def check_scheduler(address: str, timeout: float | None = None) -> None:
    """One line unless a Dask scheduler answers at `address` within `timeout` seconds: Dask's own connect bounds
    the connection, not the handshake, so a port that accepts and then waits (a scheduler's dashboard, 8787)
    hung the batch (still waiting after 60 s), one that answers something else (a proxy, a web server) ended as "out of memory" (its
    bytes read as a 3-EiB frame length), and a tls:// or ucx:// address in a traceback; an empty one ('' from an
    unset variable) planned on a local cluster instead."""
    import asyncio
    from distributed.comm import connect
    timeout = SCHEDULER_TIMEOUT if timeout is None else timeout
    if not address.strip():
        raise InputError("--scheduler: empty; give the scheduler's address, e.g. tcp://10.0.0.5:8786")

    async def hello():
        comm = await connect(address, timeout=timeout)
        await comm.close()
    try:
        asyncio.run(asyncio.wait_for(hello(), timeout + 0.5))
    except (asyncio.TimeoutError, TimeoutError):
        raise InputError(f"--scheduler {address}: no Dask scheduler answered within {timeout:g} s (the scheduler's "
                         f"port, 8786 by default, not its dashboard's?)") from None
    except MemoryError:
        raise InputError(f"--scheduler {address}: cannot connect (what answers there is not a Dask scheduler)") from None
    except Exception as exc:                              # OSError, ValueError, TLS or UCX set-up errors
        text = str(exc).strip().splitlines()
        raise InputError(f"--scheduler {address}: cannot connect ({text[0] if text else type(exc).__name__})") from None


def _until_running(client, cluster, n: int) -> int:
    """Wait until `n` workers have registered (as LocalCluster(n_workers=n) does); the number that failed to start
    instead (a worker that fails is closed by its nanny)."""
    from distributed.core import Status
    while True:
        try:
            client.wait_for_workers(n, timeout=0.2)
            return 0
        except TimeoutError:
            failed = sum(w.status in (Status.closing, Status.closed, Status.failed) for w in cluster.workers.values())
            if failed:
                return failed


def _spawned() -> set:
    """Process ids of this process's children spawned by multiprocessing (Dask's worker processes)."""
    import psutil                                       # (a dependency of dask.distributed)
    pids = set()
    for c in psutil.Process().children():
        try:
            if "spawn_main" in " ".join(c.cmdline()):
                pids.add(c.pid)
        except psutil.Error:                            # a child gone while we looked
            pass
    return pids


def _until_spawned(before: set, n: int, timeout: float = 60.0) -> None:
    """Wait until this process has spawned `n` worker processes more than `before`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and len(_spawned() - before) < n:
        time.sleep(0.01)


def close_dask(client, cluster) -> None:
    """Close the client and the local cluster (either may be None) with Ctrl-C held (`ctrl_c_held`)."""
    with ctrl_c_held():
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


def warm_up() -> None:
    """Run on every worker before the tasks: the imports (cvxpy, scipy) and the cached parts of the
    planner are paid once per worker, all at the same time, not inside the first task of each."""
    import importlib
    for name in ("scenarios.palletizing", "toppra_app.planner"):
        importlib.import_module(name)
    importlib.import_module("toppra_app.samples").PREFETCH = False   # one process per core: no helper threads


def on_workers(client, function) -> None:
    """`client.run(function)`, passing over a worker that dies meanwhile (killed, out of memory; Dask re-runs its tasks,
    which warm up in `_on_worker`): one killed during the warm-up ended the batch in a traceback (CommClosedError)."""
    try:
        client.run(function)
    except OSError:                                # (distributed's CommClosedError)
        pass


def _on_worker(*args) -> BoxOutcome:
    """`plan_box_task` on a Dask worker, warmed up first: `client.run(warm_up)` reaches only the workers there at
    the start, not one that joins later or that its nanny restarted after a crash (it planned with the helper
    thread, one more thread per core)."""
    warm_up()                                      # (once per worker; then ~1 µs)
    return plan_box_task(*args)


NO_WORKERS_S = 120.0     # s without any worker after which a Dask batch records its boxes left as lost


def run_tasks(tasks, write, *, nominal: bool, dt: float, client=None, trajectories: bool = True) -> dict:
    """Run `tasks` in this process (no `client`) or through a Dask `client`, calling `write(outcome)` in
    this process as each finishes; returns facts about the run."""
    t0 = time.perf_counter()
    if client is None:
        for t in tasks:
            write(plan_box_task(t.cell_id, t.cell, t.box, nominal, dt, trajectories))
            interrupt.check()                      # a Ctrl-C CPython swallowed in the task: stop here (resumable)
        return dict(mode="serial", workers=1, wall_s=time.perf_counter() - t0)
    from dask.distributed import as_completed
    t_warm = time.perf_counter()
    on_workers(client, warm_up)                    # every worker imports and compiles at once, in parallel
    t0, warm = time.perf_counter(), time.perf_counter() - t_warm
    workers = max(len(client.scheduler_info().get("workers", {})), 1)
    window = 3 * workers + 2                       # tasks in flight: memory flat in the batch size
    pending = iter(tasks)
    ac = as_completed()
    of, lost = {}, []

    def submit(n):
        for t in pending:
            try:
                future = client.submit(_on_worker, t.cell_id, t.cell, t.box, nominal, dt, trajectories, pure=False,
                                       retries=1, key=f"box-{t.cell_id}-{t.box}-{os.getpid()}-{time.time_ns()}")
            except Exception as exc:               # the client closed (its scheduler was lost): a traceback, exit 1
                if client.status not in ("closing", "closed"):
                    raise
                why = f"{type(exc).__name__}: {_one_line(exc)}"
                lost.extend(f"{u.cell_id} box {u.box + 1}: {why}" for u in (t, *pending))
                return
            of[future.key] = t
            ac.add(future)
            n -= 1
            if n == 0:
                break

    submit(window)
    seen = time.monotonic()                        # when a worker was last seen
    while not ac.is_empty():
        if not ac.has_ready():                     # (`for future in ac` waited for good once the client had closed)
            gone = client.status in ("closing", "closed")  # its scheduler was lost; or no worker for NO_WORKERS_S
            seen = seen if time.monotonic() - seen < 1.0 or gone or not client.scheduler_info().get("workers") \
                else time.monotonic()              # (workers that closed themselves at a memory limit: it waited)
            if gone or time.monotonic() - seen > NO_WORKERS_S:    # the boxes left are lost, as on dead workers
                why = "the connection to the scheduler was lost" if gone else f"no worker left for {NO_WORKERS_S:g} s"
                lost.extend(f"{t.cell_id} box {t.box + 1}: {why}" for t in (*of.values(), *pending))
                break
            time.sleep(0.02)
            continue
        future = next(ac)
        if future.status == "pending":             # done, then its result lost with its worker: computed again
            ac.add(future)
            continue
        t = of.pop(future.key)
        try:
            outcome = future.result(timeout=NO_WORKERS_S)
        except Exception as exc:                   # its workers died (KilledWorker), or Dask failed it: the batch
            why = f"{type(exc).__name__}: {_one_line(exc)}" if not isinstance(exc, TimeoutError) else \
                f"its result was lost with its worker, and no worker computed it again in {NO_WORKERS_S:g} s"
            lost.append(f"{t.cell_id} box {t.box + 1}: {why}")                                        # goes on
            outcome = None
        future.release()
        if outcome is not None:
            write(outcome)
        interrupt.check()
        submit(1)
    return dict(mode="dask", workers=workers, wall_s=time.perf_counter() - t0, warm_up_s=warm, lost=lost)


def _one_line(exc: BaseException, limit: int = 300) -> str:
    """The message on one bounded line (Dask's break mid-sentence: "… the task graph. This frequently")."""
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
