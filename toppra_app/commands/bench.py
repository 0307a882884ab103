"""`toppra-app bench [dynamics|planner|controller|trees|batch|collisions|ik|all]`: timings against peers (Pinocchio, toppra) in one run.

The benchmarks and the peer adapters live outside the library, in the top-level package `benchmarks`
(installed with the project); they need the test extras: pip install "toppra-app[test]" (in a checkout:
pip install -e ".[test]")."""

from __future__ import annotations

import os


def add_parser(sub):
    p = sub.add_parser("bench", help="benchmarks against Pinocchio and toppra, printed as ratios; ik: IK success "
                                     "rates of palletizing cells",
                       description="`toppra-app bench [WHAT]`: timings against peers (Pinocchio, toppra) in one run; "
                                   "needs the test extras (pip install \"toppra-app[test]\"; docs/benchmarks.md).")
    p.add_argument("what", nargs="?", default="all", choices=("dynamics", "planner", "controller", "trees", "batch",
                                                                "collisions", "ik", "all"),
                   help="which benchmark (default all)")
    p.add_argument("--quick", action="store_true", help="fewer cases, samples and sizes (a smoke run)")
    p.add_argument("--json", metavar="FILE", default=None, help="planner, controller: all numbers as JSON (a new file)")
    p.add_argument("--markdown", metavar="FILE", default=None,
                   help="planner, controller: tables for docs/benchmarks.md (a new file)")
    return p


def _check_new(flag: str, path: str) -> None:
    """Before the run: `path` must be a new file in an existing writable directory, with a name the file
    system takes (with room for the temporary's suffix)."""
    from pathlib import Path

    from toppra_app.output import OutputError, check_name_room, check_path_length
    check_path_length(path, flag)
    folder, name = os.path.split(os.path.abspath(path))
    if os.path.lexists(path):
        raise OutputError(f"{flag} {path[:80]}: exists already (never overwritten); give a new file name")
    if not os.path.isdir(folder):
        raise OutputError(f"{flag} {path[:80]}: {folder[:80]} is not an existing directory")
    check_name_room(Path(folder), [name], path, flag)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{flag} {path}: {folder} is not writable")


def _temporary(path: str) -> str:
    """A new empty file of ours beside `path` (``.NAME.tmp-PID-XXXXXX``), for the benchmark to write into."""
    import secrets
    folder, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(folder, f".{name}.tmp-{os.getpid()}-{secrets.token_hex(3)}")
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    return tmp


def _publish(flag: str, tmp: str, path: str) -> None:
    """`tmp` becomes `path` only if `path` still does not exist (a hard link fails if it does; where the
    file system has none, an exclusive create and copy: `dynamics.io.new_file.link_new`)."""
    from dynamics.io.new_file import link_new
    from toppra_app.output import OutputError
    try:
        link_new(tmp, path)
    except FileExistsError:
        raise OutputError(f"{flag} {path}: appeared during the run; not overwritten (the numbers are printed "
                          f"above)") from None
    except OSError as exc:
        raise OutputError(f"{flag} {path}: cannot write ({exc.strerror or exc})") from None


def run(args) -> int:
    from toppra_app.output import OutputError
    files = {flag: path for flag, path in (("--json", args.json), ("--markdown", args.markdown)) if path is not None}
    if files and args.what not in ("planner", "controller", "all"):   # (it ran, then wrote nothing, silently)
        from toppra_app.errors import InputError
        raise InputError(f"{next(iter(files))}: only 'bench planner', 'bench controller' and 'bench all' write one; "
                         f"'bench {args.what}' prints its tables")
    for flag, path in files.items():
        _check_new(flag, path)
    temps = {}
    try:
        for flag, path in files.items():
            temps[flag] = _temporary(path)
        _run(args, temps.get("--json"), temps.get("--markdown"))
        for flag, tmp in temps.items():
            _publish(flag, tmp, files[flag])
    except OSError as exc:                              # a full disk while the benchmark writes a temporary
        if exc.filename not in temps.values():
            raise
        raise OutputError(f"bench: cannot write {exc.filename} ({exc.strerror or exc}); nothing was written") from None
    finally:
        for tmp in temps.values():
            if os.path.lexists(tmp):
                os.unlink(tmp)
    return 0


def _run(args, json_path, markdown_path) -> None:
    import platform

    import numpy as np

    from toppra_app.errors import InputError
    try:
        import benchmarks.bench_planner  # noqa: F401
        import pinocchio  # noqa: F401
        import toppra  # noqa: F401
    except ImportError as exc:
        raise InputError(f"bench: needs the test extras ({exc.name} is missing): pip install \"toppra-app[test]\"") from None
    print(f"# toppra-app bench ({platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"numpy {np.__version__})\n")
    if args.what in ("dynamics", "all"):
        from benchmarks.bench_dynamics import run_dynamics_benchmark
        run_dynamics_benchmark(quick=args.quick)
        print()
    if args.what in ("planner", "all"):
        from benchmarks.bench_planner import run_planner_benchmark
        run_planner_benchmark(quick=args.quick, json_path=json_path, markdown_path=markdown_path)
        print()
    if args.what in ("controller", "all"):
        from benchmarks.bench_controller import run_controller_benchmark
        both = args.what == "all"               # (with "all" the files are the planner's)
        run_controller_benchmark(quick=args.quick, json_path=None if both else json_path,
                                 markdown_path=None if both else markdown_path)
        print()
    if args.what in ("trees", "all"):
        from benchmarks.bench_trees import run_tree_benchmark
        run_tree_benchmark(quick=args.quick)
        print()
    if args.what in ("batch", "all"):
        from benchmarks.bench_batch import run_batch_benchmark
        run_batch_benchmark(quick=args.quick)
        print()
    if args.what in ("collisions", "all"):
        from benchmarks.bench_collisions import run_collision_benchmark
        run_collision_benchmark(quick=args.quick)
        print()
    if args.what in ("ik", "all"):
        from benchmarks.bench_ik import run_ik_benchmark
        run_ik_benchmark(quick=args.quick)
