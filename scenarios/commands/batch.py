"""`toppra-app batch SOURCE [--out DIR] [--jobs N | --scheduler ADDR | --serial]`: plan many cells.

SOURCE is a directory of cell files, a cell file, a manifest with [batch] and [sweep] tables
(docs/batch.md) or "default" (the built-in cell). Every box is one task; tasks run on a local Dask
cluster (one single-threaded worker per core), on an existing cluster (--scheduler) or in this process
(--serial). Each finished box is written at once to DIR: moves.csv (a row per move), the 1 ms
trajectories and, at the end, batch_summary.json. Run it again with the same SOURCE and DIR to resume:
finished moves are skipped.
"""

from __future__ import annotations

import sys
import time

from toppra_app.commands.strict import add_strict, strict_exit


def add_parser(sub):
    p = sub.add_parser("batch", help="plan many cells (a directory, a sweep manifest) on every core or a Dask cluster",
                       description=__doc__.splitlines()[0])
    p.add_argument("source", metavar="SOURCE", help="directory of cell files, a cell file, a manifest, or 'default'")
    p.add_argument("--out", default="batch_out", metavar="DIR",
                   help="output directory (default ./batch_out): new, empty, or this batch's (resumed)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=int, default=None, metavar="N",
                       help="local Dask workers (default: one per core)")
    where.add_argument("--scheduler", default=None, metavar="ADDR",
                       help="an existing Dask scheduler, e.g. tcp://10.0.0.5:8786")
    where.add_argument("--serial", action="store_true", help="plan in this process, without Dask")
    p.add_argument("--dt", type=float, default=1e-3, help="sampling period of the trajectories [s] (default 0.001)")
    p.add_argument("--no-trajectories", action="store_true", help="write moves.csv and the summary only")
    p.add_argument("--no-report", action="store_true", help="skip report.html (the interactive report)")
    add_strict(p, "; code 3 if moves also failed to plan")
    return p


def run(args) -> int:
    from scenarios.commands import check_dt, robot_file
    from toppra_app.errors import InputError
    from scenarios.batch.manifest import read_source
    from scenarios.batch.run import close_dask, dask_client, load_cells
    from scenarios.batch.store import BatchStore

    check_dt(args.dt)
    if args.jobs is not None and not 1 <= args.jobs <= 1024:
        raise InputError(f"--jobs: expected a number of workers from 1 to 1024, got {args.jobs}")
    t0 = time.perf_counter()
    spec = read_source(args.source)
    fingerprint = spec.fingerprint(dt=args.dt, trajectories=not args.no_trajectories)
    urdfs = [f for c in spec.cells for f in robot_file(c.document, c.base_dir)]            # (the cells' robot files)
    store = BatchStore(args.out, fingerprint, inputs=[args.source, *spec.sources, *urdfs])   # before any work
    loaded, failed_cells = load_cells(spec)
    _finer_sampling(loaded, args.dt, args.no_trajectories)
    client, cluster = (None, None) if args.serial else dask_client(args.jobs, args.scheduler)
    try:
        return _run(args, spec, store, loaded, failed_cells, client, t0)
    finally:
        close_dask(client, cluster)                  # (a Ctrl-C here left the workers and a traceback behind)


def _finer_sampling(loaded, dt: float, no_trajectories: bool) -> None:
    """A warning line for each cell file whose controller profile ([controller], or [limits] rates) samples more
    coarsely than the trajectories' --dt (their finite differences then exceed its rate limits: `finer_sampling`)."""
    import warnings
    warned = set()
    for cs, cell, _ in [] if no_trajectories else loaded:
        note = cell.sampling_note(dt, cs.file)
        if note and cs.file not in warned:                  # (once a file, not once a sweep's variant)
            warned.add(cs.file)
            warnings.warn(note, RuntimeWarning, stacklevel=2)


def _run(args, spec, store, loaded, failed_cells, client, t0) -> int:
    from toppra_app.output import _version
    from toppra_app import interrupt
    from scenarios.batch.run import Progress, Task, run_tasks
    from scenarios.batch.summary import over_limits, read_moves, summarise
    from scenarios.batch.signals import signals_deferred
    from scenarios.report import provenance
    from scenarios.batch.store import MOVES, REPORT
    done = store.open(_version())
    units = [(cs.id, b) for cs, _, boxes in loaded for b in boxes] + [(o.cell, o.box) for o in failed_cells]
    store.forget_partial_boxes(done, units)
    tasks, skipped = [], 0
    for cs, cell, boxes in loaded:
        for b in boxes:
            if (cs.id, 2 * b + 1) in done and (cs.id, 2 * b + 2) in done:
                skipped += 2
            else:
                tasks.append(Task(cs.id, cell, b))
    failed_cells = [o for o in failed_cells if (o.cell, 2 * o.box + 1) not in done]
    total = 2 * len(tasks) + sum(len(o.rows) for o in failed_cells)
    print(f"batch: {len(spec.cells)} cell(s), {total} moves to plan"
          + (f", {skipped} already done in {args.out} (resumed)" if skipped else "")
          + ("" if client is None else f" on {args.scheduler or 'a local Dask cluster'}"))
    progress = Progress(total)
    nbytes = []

    write_s = [0.0]

    def write(outcome):
        # a box is written whole and counted before a Ctrl-C or SIGTERM stops the batch (~ms): one received while its
        # trajectory files were renamed in left a file without its row, one during the rows' fsync a count of
        # moves kept that missed them ("20 moves of this run are in moves.csv" over 22 rows)
        with signals_deferred() as received:
            t1 = time.perf_counter()
            nbytes.append(outcome.nbytes)
            store.write_outcome(outcome, trajectories=not args.no_trajectories)
            write_s[0] += time.perf_counter() - t1
            progress.update(outcome)
        if received:
            interrupt.handle(received[0], None)

    try:
        for o in failed_cells:
            write(o)
        info = run_tasks(tasks, write, nominal=spec.nominal, dt=args.dt, client=client,
                         trajectories=not args.no_trajectories)
        planned = 2 * (len(tasks) - len(info.get("lost", [])))     # (the rate counted the lost boxes too)
        info.update(moves_planned=planned, moves_skipped=skipped, max_task_result_bytes=max(nbytes, default=0),
                    moves_per_s=planned / max(info["wall_s"], 1e-9), total_wall_s=time.perf_counter() - t0,
                    scheduler=args.scheduler, client_write_s=write_s[0])
        rows = read_moves(store.path / MOVES)
        summary = summarise(rows, spec, info, store.fingerprint)
        summary.update(provenance())                  # (palletize's and payload-sweep's summaries had them; not batch's)
        store.write_summary(summary)
        if not args.no_report:
            from scenarios.report_html import batch_report
            store.write_text(REPORT, batch_report(summary, rows))
    except KeyboardInterrupt as exc:                  # Ctrl-C, SIGTERM (cli.Terminated): keep what is finished
        progress.close()
        print(f"toppra-app batch: interrupted; {progress.done} moves of this run are in {args.out}/moves.csv "
              f"(nothing partial); run the same command again to resume", file=sys.stderr)
        return 128 + exc.signum if hasattr(exc, "signum") else 130
    finally:
        progress.close()
        store.close()
    print(f"batch: {summary['moves']} moves in {args.out}/moves.csv, {summary['failed']} failed; "
          f"{info['moves_planned']} planned in {info['wall_s']:.1f} s ({info['moves_per_s']:.1f} moves/s, "
          f"{info['workers']} worker(s))")
    lost = info.get("lost", [])
    if lost:                                          # not in moves.csv: the same command again plans them
        print(f"toppra-app batch: {len(lost)} box(es) not planned, their task failed on the cluster ({lost[0]}); "
              f"run the same command again to plan them", file=sys.stderr)
    strict = strict_exit("batch", over_limits(rows)) if args.strict else 0
    return 3 if summary["failed"] or lost else strict
