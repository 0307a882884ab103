"""`toppra-app bench [dynamics|planner|controller|trees|batch|collisions|ik|all]`: timings against peers (Pinocchio, toppra) in one run.

The benchmarks and the peer adapters live outside the library, in the top-level package `benchmarks`
(installed with the project); they need the test extras: pip install -e ".[test]"."""

from __future__ import annotations

import os


def add_parser(sub):
    p = sub.add_parser("bench", help="benchmarks against Pinocchio and toppra, printed as ratios; ik: IK success "
                                     "rates of palletizing cells")
    p.add_argument("what", nargs="?", default="all", choices=("dynamics", "planner", "controller", "trees", "batch",
                                                                "collisions", "ik", "all"))
    p.add_argument("--quick", action="store_true", help="fewer cases, samples and sizes (a smoke run)")
    p.add_argument("--json", metavar="FILE", default=None, help="planner, controller: all numbers as JSON (a new file)")
    p.add_argument("--markdown", metavar="FILE", default=None,
                   help="planner, controller: tables for docs/benchmarks.md (a new file)")
    return p


def run(args) -> int:
    import platform

    import numpy as np

    from toppra_app.errors import InputError
    for flag, path in (("--json", args.json), ("--markdown", args.markdown)):
        if path is not None and (os.path.lexists(path) or not os.path.isdir(os.path.dirname(os.path.abspath(path)))):
            raise InputError(f"{flag} {path}: exists already or its directory does not (never overwritten)")
    try:
        import benchmarks.bench_planner  # noqa: F401
        import pinocchio  # noqa: F401
        import toppra  # noqa: F401
    except ImportError as exc:
        raise InputError(f"bench: needs the test extras ({exc.name} is missing): pip install -e \".[test]\"") from None
    print(f"# toppra-app bench ({platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"numpy {np.__version__})\n")
    if args.what in ("dynamics", "all"):
        from benchmarks.bench_dynamics import run_dynamics_benchmark
        run_dynamics_benchmark(quick=args.quick)
        print()
    if args.what in ("planner", "all"):
        from benchmarks.bench_planner import run_planner_benchmark
        run_planner_benchmark(quick=args.quick, json_path=args.json, markdown_path=args.markdown)
        print()
    if args.what in ("controller", "all"):
        from benchmarks.bench_controller import run_controller_benchmark
        both = args.what == "all"               # (with "all" the files are the planner's)
        run_controller_benchmark(quick=args.quick, json_path=None if both else args.json,
                                 markdown_path=None if both else args.markdown)
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
    return 0
