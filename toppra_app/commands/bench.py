"""`toppra-app bench [dynamics|planner|trees|all]`: timings against peers (Pinocchio, toppra) in one run."""

from __future__ import annotations


def add_parser(sub):
    p = sub.add_parser("bench", help="benchmarks against Pinocchio and toppra, printed as ratios")
    p.add_argument("what", nargs="?", default="all", choices=("dynamics", "planner", "trees", "all"))
    p.add_argument("--quick", action="store_true", help="fewer samples and sizes (a smoke run)")
    return p


def run(args) -> int:
    import platform

    import numpy as np
    print(f"# toppra-app bench ({platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"numpy {np.__version__})\n")
    if args.what in ("dynamics", "all"):
        from toppra_app.bench_dynamics import run_dynamics_benchmark
        run_dynamics_benchmark(quick=args.quick)
        print()
    if args.what in ("planner", "all"):
        from toppra_app.bench_planner import run_planner_benchmark
        run_planner_benchmark(quick=args.quick)
        print()
    if args.what in ("trees", "all"):
        from toppra_app.bench_trees import run_tree_benchmark
        run_tree_benchmark(quick=args.quick)
    return 0
