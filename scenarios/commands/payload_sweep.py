"""`toppra-app payload-sweep [CELL.toml] [--out DIR] [--quick]`: one path, re-planned for many payloads.

Takes the loaded move of one box of the cell (default the built-in cell, box 1) and plans it for payload
masses from 0 to the robot's rated payload (minus the gripper) and several COM offsets. Reports the
duration per payload and the time of the first plan (builds and compiles the convex problem) against
re-plans (only the numbers change). Writes summary.json, sweep.csv and duration_vs_payload.png to DIR.
"""

from __future__ import annotations

import time

from toppra_app.commands.strict import add_strict, strict_exit


def add_parser(sub):
    p = sub.add_parser("payload-sweep", help="re-plan one path for a sweep of payload masses and COM offsets",
                       description=__doc__.splitlines()[0])
    p.add_argument("cell", nargs="?", default=None, metavar="CELL.toml", help="cell file (default: built-in)")
    p.add_argument("--out", default="payload_sweep_out", metavar="DIR",
                   help="output directory (default ./payload_sweep_out): created, or replaced if this tool wrote it")
    p.add_argument("--force", action="store_true",
                   help="write into an existing directory holding other files (never overwriting or deleting them)")
    p.add_argument("--box", type=int, default=1, help="box whose loaded move is used (default 1)")
    p.add_argument("--masses", default=None, metavar="LIST",
                   help=f"payload masses in kg, e.g. 0,1,2.5,5 (at most {MAX_VALUES})")
    p.add_argument("--offsets", default=None, metavar="LIST",
                   help=f"COM offsets along the tool x axis in m, e.g. 0,0.05 (within ±{MAX_OFFSET:g} m, "
                        f"at most {MAX_VALUES})")
    p.add_argument("--quick", action="store_true", help="fewer masses and offsets")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG figure")
    add_strict(p)
    return p


MAX_VALUES = 100        # masses, offsets: each plan is a re-plan (~20-50 ms); 5000 masses ran 11 minutes
MAX_OFFSET = 1.0        # m: a COM farther from the tool frame than this is no gripper's payload


def _floats(text, name, lo: float, hi: float):
    from toppra_app.errors import InputError
    if text is None:
        return None
    try:
        vals = [float(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise InputError(f"{name}: expected comma-separated numbers, got '{text}'") from None
    if not vals:
        raise InputError(f"{name}: expected at least one number")
    if len(vals) > MAX_VALUES:
        raise InputError(f"{name}: {len(vals)} values, more than {MAX_VALUES}")
    bad = [v for v in vals if not lo <= v <= hi]              # (NaN included)
    if bad:
        raise InputError(f"{name}: {bad[0]} is outside [{lo:g}, {hi:g}]")
    return vals


def run(args) -> int:
    import numpy as np

    from scenarios import report as rp
    from scenarios.commands import cell_inputs
    from toppra_app.output import atomic_directory, check_output
    from toppra_app.errors import InputError
    from scenarios.palletizing import load_cell
    from scenarios.payload_change import sweep_payloads

    t0 = time.perf_counter()
    inputs = cell_inputs(args.cell)                          # (the cell file and its URDF)
    target = check_output(args.out, inputs, args.force,      # before any work: a bad --out fails at once
                          writes=["summary.json", "sweep.csv"])
    cell = load_cell(args.cell)
    if not 1 <= args.box <= len(cell.slots):           # (the library's line said "box:", not the flag)
        raise InputError(f"--box: expected a box number between 1 and {len(cell.slots)}, got {args.box}")
    masses = _floats(args.masses, "--masses", 0.0, 1e6)
    offsets = _floats(args.offsets, "--offsets", -MAX_OFFSET, MAX_OFFSET)
    bar = rp.ProgressBar("re-planning")
    try:
        sweep = sweep_payloads(cell, box=args.box - 1, masses=masses, offsets=offsets, quick=args.quick,
                               progress=bar)
    except InputError as exc:          # (the library names its argument, "masses: ... exceeds what ... can carry")
        if not str(exc).startswith("masses: "):
            raise
        raise InputError(f"--{exc}") from None
    finally:
        bar.close()
    summary = sweep.summary()
    D = sweep.table()
    headers = ["COM offset m"] + [f"{m:g} kg" for m in sweep.masses]
    rows = [[f"{off:g}"] + [f"{d:.3f}" for d in D[i]] for i, off in enumerate(sweep.offsets)]   # (:.3f: 0.0004 read 0.000)
    print(f"\n{summary['move']} on {cell.robot_name}: minimum time [s] per payload mass and COM offset")
    print(rp.format_table(headers, rows))
    replans = "" if summary["replan_mean_seconds"] is None else (   # (one point: no re-plan; its None broke :.3f)
        f"re-plan with another payload: {summary['replan_mean_seconds']:.3f} s on average "
        f"({summary['replan_speedup']:.1f}× faster); ")
    print(f"\nfirst plan (problem built/compiled): {sweep.first_plan_seconds:.3f} s; "
          f"{replans}worst over-limit {100 * (summary['worst_ratio'] - 1):+.3f} %")
    with atomic_directory(args.out, inputs, args.force, target) as tmp:
        header = ("mass_kg,com_offset_m,duration_s,worst_ratio,plan_seconds,reused_compiled_problem,iterations,"
                  "within_limits")
        data = np.array([[p.mass, p.com_offset, p.duration, p.worst_ratio, p.plan_seconds, float(p.reused),
                          p.iterations, float(p.within_limits)] for p in sweep.points])
        np.savetxt(tmp / "sweep.csv", data, delimiter=",", header=header, comments="", fmt="%.9g")
        if not args.no_plots:
            rp.save_figure(rp.sweep_figure(sweep), tmp / "duration_vs_payload.png")
        summary["wall_time_s"] = time.perf_counter() - t0
        summary.update(rp.provenance())
        rp.write_json(tmp / "summary.json", summary)
    print(f"wrote {args.out}/ (summary.json, sweep.csv{'' if args.no_plots else ', duration_vs_payload.png'})")
    return strict_exit("payload-sweep", [(f"the plan with {p.mass:g} kg at {p.com_offset:g} m", p.limit_report.ratio,
                                          p.limit_report.line())
                                         for p in sweep.points if not p.within_limits] if args.strict else [])
