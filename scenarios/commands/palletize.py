"""`toppra-app palletize [CELL.toml] [--out DIR] [--quick]`: plan a whole pallet with changing payloads.

Without a cell file the built-in cell (scenarios/default_cell.toml: an iiwa 7 stacking 8 small boxes of
5 kg and 2 kg) is used. Writes summary.json, one trajectory CSV per move (1 ms), profile plots and views
of the pallet to DIR (default ./palletize_out), atomically: all or nothing.
"""

from __future__ import annotations

import time

from toppra_app.commands.strict import add_strict, failures_of, strict_exit


def add_parser(sub):
    p = sub.add_parser("palletize", help="plan the moves of a palletizing cell (default: built-in iiwa 7 cell)",
                       description=__doc__.splitlines()[0])
    p.add_argument("cell", nargs="?", default=None, metavar="CELL.toml",
                   help="cell file (default: the built-in cell, scenarios/default_cell.toml)")
    p.add_argument("--out", default="palletize_out", metavar="DIR",
                   help="output directory (default ./palletize_out): created, or replaced if this tool wrote it")
    p.add_argument("--force", action="store_true",
                   help="write into an existing directory holding other files (never overwriting or deleting them)")
    p.add_argument("--quick", action="store_true", help="only the first box of every layer")
    p.add_argument("--boxes", default=None, metavar="LIST",
                   help="box numbers to plan, e.g. 1,2,5 (default all; planned in slot order, each once)")
    p.add_argument("--dt", type=float, default=1e-3, help="sampling period of the trajectory CSVs [s] (default 0.001)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
    p.add_argument("--move-png", action="store_true",
                   help="also a PNG of every move's profiles (report.html has them, zoomable)")
    p.add_argument("--no-report", action="store_true", help="skip report.html (the interactive report)")
    p.add_argument("--no-compare", action="store_true",
                   help="skip the empty-gripper plan of each loaded move executed with the box (the comparison)")
    add_strict(p)
    return p


def _parse_boxes(text, n):
    from toppra_app.errors import InputError, short_repr
    if text is None:
        return None
    entries = [x for x in text.replace(" ", "").split(",") if x]
    # the first entry that is wrong, not the whole list (20 000 numbers were a 109 kB "line"); ASCII digits only
    # (int() read "1_0" as box 10 and other scripts' digits)
    word = next((x for x in entries if not (x.isascii() and x.isdigit())), None)
    if word is not None:
        raise InputError(f"--boxes: expected comma-separated box numbers, got {short_repr(word)}"
                         + (" (a range a-b is not read: list the numbers)" if "-" in word.lstrip("-") else ""))
    bad = next((x for x in entries if len(x) > 9 or not 1 <= int(x) <= n), None)   # (int() refuses 4300 digits)
    if bad is not None or not entries:
        raise InputError(f"--boxes: box numbers must be between 1 and {n}, got {short_repr(bad or text)}")
    nums = [int(x) for x in entries]
    # in slot order, each once, as batch.boxes: the collision checks stand the slots before a box on the
    # pallet (the pallet is built in slot order), so '3,1' planned box 1 beside box 3 unchecked against it,
    # and '1,1' planned box 1 twice, its cycle-table rows summing both (2 × 2.07 s each)
    return sorted({k - 1 for k in nums})


def _short(values):
    """A per-joint list as one number when all are equal (None stays None)."""
    if values is None:
        return None
    return f"{values[0]:g}" if len(set(values)) == 1 else "[" + ", ".join(f"{v:g}" for v in values) + "]"


def _nominal_line(w: dict) -> str:
    """The empty-gripper plan executed with the box: how far over (or under) its torque limit, and the payload-aware
    plan's duration ("takes the same" where the two agree to the millisecond: it said "1.175 s instead of 1.175 s")."""
    # the robot's own limit (τ_max, no headroom), not a controller profile's, which the table's column uses
    verdict = (f"exceeds the robot's limit by {w['torque_over_limit_percent']:.1f} %" if w["executed_torque_ratio"] > 1
               else f"peaks at {100 * w['executed_torque_ratio']:.1f} % of the robot's limit")
    new, old = f"{w['payload_plan_duration_s']:.3f}", f"{w['nominal_plan_duration_s']:.3f}"
    took = f"takes {new} s instead of {old} s" if new != old else f"takes the same {new} s"
    return (f"empty-gripper plan executed with box {w['box']} ({w['payload_kg']:g} kg): torque of {w['joint']} "
            f"{verdict} (the payload-aware plan {took} and stays within the limits)")


def _thermal_line(th: dict) -> str:
    """The [thermal] cycle in one line: its time against the time-optimal cycle's, the worst rated joint's RMS
    torque against its rating, the idle time it needed, and whether it keeps every limit."""
    head = f"thermal (box {th['box']}'s cycle, RMS torque rating): "
    if "cycle_time_s" not in th:
        return head + th.get("note", "not planned")
    ratios = th["rms_ratio"]                                   # (None for a joint without a rating)
    rated = [k for k, r in enumerate(ratios) if r is not None]
    k = max(rated, key=ratios.__getitem__, default=None)
    worst = "no joint rated" if k is None else f"RMS {100 * ratios[k]:.1f} % of the rating (joint {k + 1})"
    return (head + f"cycle {th['cycle_time_s']:.3f} s instead of {th['unconstrained_cycle_time_s']:.3f} s "
            f"({th['cycle_time_increase_percent']:+.1f} %, idle {th['idle_time_s']:.3f} s), {worst}"
            + ("" if th["within_limits"] else "; NOT within its limits (summary.json: thermal)"))


def _profile(d):
    """A [controller] profile in a few words (None: none); the label said "cell options ()" for a cell with only
    a [controller] table."""
    if not d:
        return None
    words = [f"torque headroom {d['torque_headroom']:g}", f"speed headroom {d['velocity_headroom']:g}"]
    for key, text in (("qdd_max", "q̈ ≤ {} rad/s²"), ("torque_rate_max", "torque rate ≤ {} N·m/s"),
                      ("jerk_max", "jerk ≤ {} rad/s³")):
        if d.get(key) is not None:
            v = d[key]
            words.append(text.format(_short(list(v)) if isinstance(v, (list, tuple)) else f"{v:g}"))
    return ", ".join(words)


def run(args) -> int:
    from scenarios.commands import cell_inputs, check_dt
    from scenarios import report as rp
    from scenarios.helper_process import HelperProcess
    from toppra_app.output import atomic_directory, check_output
    from toppra_app.cli import STARTED

    check_dt(args.dt)
    t0 = time.perf_counter()
    inputs = cell_inputs(args.cell)                          # (the cell file and its URDF)
    target = check_output(args.out, inputs, args.force,      # before any work: a bad --out fails at once
                          writes=["summary.json"] + ([] if args.no_report else ["report.html"]))
    # a second process loads the cell and solves its IK while this one imports the planner, then checks
    # the moves for collisions, draws the figures and writes the CSVs while this one plans; the output is
    # written atomically (all or nothing), and nothing of a move but its plan is kept
    helper = HelperProcess()
    from concurrent.futures.process import BrokenProcessPool
    from toppra_app.errors import InputError
    try:
        with atomic_directory(args.out, inputs, args.force, target) as tmp:
            try:
                report, summary, times = _plan_and_write(args, tmp, helper, t0)
            finally:
                helper.close()
            times["total_s"] = time.perf_counter() - STARTED
            summary["wall_time_s"] = time.perf_counter() - t0
            summary["time_spent"] = times
            summary["trajectory_dt_s"] = args.dt
            summary.update(rp.provenance(report.cell.robot.joint_names))
            rp.write_json(tmp / "summary.json", summary)
    except BrokenProcessPool:           # (its traceback, exit 1; the temporary directory was removed all the same)
        raise InputError("the second process (cell, IK, collision checks, figures, CSVs) ended abruptly (killed? "
                         "out of memory?); nothing was written") from None
    finally:
        helper.close()
    total = time.perf_counter() - STARTED
    print(f"wrote {args.out}/ (summary.json, {len(report.moves)} trajectory CSVs"
          f"{'' if args.no_plots else ', plots'}{'' if args.no_report else ', report.html'}) in {total:.1f} s: "
          f"start-up {times['startup_s']:.1f} s, imports {times['imports_s']:.1f} s (meanwhile in a second process: "
          f"cell {times['cell_s']:.1f} s, IK {times['ik_s']:.1f} s), waiting for them {times['cell_wait_s']:.1f} s, "
          f"planning {times['planning_s']:.1f} s, collision checks {times['collisions_s']:.1f} s (in the second "
          f"process; waiting for them {times['collision_wait_s']:.1f} s), "
          f"trajectories {times['trajectories_s']:.1f} s, waiting for figures and the report {times['plots_s']:.1f} s")
    if not args.strict:
        return 0
    failures = failures_of((f"move {m.index + 1} ({m.label})", m.plan) for m in report.moves)
    thermal = None if report.thermal is None else report.thermal.limit_problem()
    if thermal is not None:                     # [thermal]: the box's cycle over its RMS rating (or a move over)
        failures.append((f"thermal cycle of box {report.cell.thermal_box + 1}", *thermal))
    return strict_exit("palletize", failures)


def _prepare(cell_file, quick: bool, boxes_text):
    """Runs in the helper process while the first one imports the planner: the cell (with its pose IK),
    the boxes to plan and their loaded moves' joint paths (IK); wall times."""
    t0 = time.perf_counter()
    from scenarios.palletizing import load_cell, move_geometries, select_boxes
    cell = load_cell(cell_file)
    boxes = _parse_boxes(boxes_text, len(cell.slots))
    t1 = time.perf_counter()
    geometries = move_geometries(cell, [cell.slots[b] for b in select_boxes(cell, quick, boxes)])
    return cell, boxes, geometries, dict(cell_s=t1 - t0, ik_s=time.perf_counter() - t1)


def _plan_and_write(args, tmp, helper, t0):
    """The cell and its IK from the helper process (the planner imported meanwhile), then the pallet
    planned with every move's CSV and figures handed to the helper as the move is planned, then the
    summary figures and report.html: (report, summary, wall times). The helper is finished here."""
    from toppra_app.cli import STARTED
    prepared = helper.run(_prepare, args.cell, args.quick, args.boxes)
    t1 = time.perf_counter()
    import toppra_app.planner  # noqa: F401
    from scenarios import report as rp
    from scenarios.palletizing import plan_pallet
    t2 = time.perf_counter()
    cell, boxes, geometries, times = helper.show(prepared.result())
    times.update(startup_s=t0 - STARTED, imports_s=t2 - t1, cell_wait_s=time.perf_counter() - t2,
                 trajectories_s=0.0)
    if not args.no_plots:                                      # the pallet views: known before any plan
        helper.submit_pallet_views(rp.pallet_view(cell, [g.slot.index for g in geometries]), tmp)
    print(f"cell: {cell.name} ({cell.source})")
    rated = cell.base_robot.rated_payload                      # (None: "rated payload None kg" was printed)
    print(f"robot: {cell.robot_name}, " + ("no rated payload" if rated is None else f"rated payload {rated:g} kg") +
          f", gripper {cell.gripper.mass:g} kg; "
          f"{len(cell.slots)} boxes in {cell.layers} layer(s)")
    if args.quick:
        print("--quick: planning the first box of every layer only")
    robot = cell.robot
    note = cell.sampling_note(args.dt)           # (move CSVs at 4 kHz of a 1 ms profile: 4× its rate, unsaid)
    if note:
        import warnings
        warnings.warn(note, stacklevel=2)
    move_png = args.move_png and not args.no_plots
    bar = rp.ProgressBar("planning")
    checked = _CheckedMoves(bar)

    def on_move(m):
        t1 = time.perf_counter()
        smp = m.plan.sample(args.dt)
        if cell.check_collisions:                              # on the 1 ms samples, over there
            checked.add(m, helper.submit_collision_check(cell, m, smp if args.dt == 1e-3 else m.plan.sample(1e-3)))
        helper.submit_csv(tmp / f"move{m.index + 1:02d}_{m.label}.csv", smp, robot.joint_names)
        if move_png:
            title = (f"move {m.index + 1}: {m.label} ({m.slot.label}, payload "
                     f"{0.0 if m.payload is None else m.payload.mass:g} kg), {m.duration:.3f} s")
            helper.submit_png(tmp / f"move{m.index + 1:02d}_{m.label}.png", smp, m.plan.robot, title)
        if not args.no_report:
            helper.submit_section(m, smp)
        times["trajectories_s"] += time.perf_counter() - t1

    try:
        try:
            report = plan_pallet(cell, quick=args.quick, boxes=boxes, progress=checked.progress,
                                 nominal=not args.no_compare, on_move=on_move, geometries=geometries,
                                 check_collisions=False)
        except ValueError:                                     # a later move failed to plan: an earlier
            checked.flush(wait=True)                           # move's collision comes first, as it did
            raise
        t1 = time.perf_counter()
        if not args.no_plots:                                  # needs the durations only
            helper.submit_cycles(rp.cycle_data(report), tmp)
        checked.flush(wait=True)
    finally:
        bar.close()
    report.seconds["collisions_s"] += checked.seconds
    times["collision_wait_s"] = time.perf_counter() - t1
    summary = report.summary()
    _print_summary(report, summary)
    t1 = time.perf_counter()
    if not args.no_report:                     # the cell's animation here, the rest over there
        from scenarios.report_html import cell_figure, pallet_report
        from toppra_app.html_report import figure_html
        view = figure_html(cell_figure(report), "view3d")
    sections = helper.finish()
    if not args.no_report:
        page = pallet_report(report, sections, view=view)
        (tmp / "report.html").write_text(page, encoding="utf-8")
    times["plots_s"] = time.perf_counter() - t1
    times.update(planning_s=report.seconds["planning_s"], collisions_s=report.seconds.get("collisions_s", 0.0))
    return report, summary, times


class _CheckedMoves:
    """The planned moves whose collision checks run in the helper process: each move's progress line is
    shown once its check is done, in move order, and a failed check raises its `CollisionError` there —
    before the line, as when the moves were checked as they were planned."""

    def __init__(self, bar):
        self.bar, self.seconds = bar, 0.0
        self.checks, self.pending = {}, []                     # move index → future; [(move index, progress)]

    def add(self, m, future) -> None:
        self.checks[m.index] = (m, future)

    def progress(self, done: int, total: int, label: str) -> None:
        self.pending.append((done - 1, (done, total, label)))  # plan_pallet calls it after on_move
        self.flush(wait=False)

    def flush(self, wait: bool) -> None:
        """Show the lines of the moves checked so far (every move's, waiting for the checks, with `wait`)."""
        while self.pending:
            index, line = self.pending[0]
            if index in self.checks:
                m, future = self.checks[index]
                if not (wait or future.done()):
                    return
                m.clearance, seconds = future.result()
                self.seconds += seconds
                del self.checks[index]
            self.pending.pop(0)
            self.bar(*line)


def _reuse(m) -> str:
    if m.plan.refinements and m.plan.refinements[0].get("action") == "reversed":
        return "reversed"
    return "yes" if m.reused_problem else "no"


def _print_summary(report, summary) -> None:
    from scenarios import report as rp
    cell = report.cell
    # ---------------------------------------------------------------- terminal summary
    rows = []
    for m in report.moves:
        rows.append([m.index + 1, m.label, m.slot.label, f"{0.0 if m.payload is None else m.payload.mass:g}",
                     f"{m.cart.length:.3f}", f"{m.duration:.3f}", f"{100 * (m.plan.worst_ratio - 1):+.3f}",
                     f"{m.plan_seconds:.2f}", _reuse(m)])
    print()
    print(rp.format_table(["#", "move", "slot", "payload kg", "path m", "time s", "worst vs limit %",
                           "plan s", "reused"], rows))
    if note := report.limits_not_set_note():
        print(f"({note})")
    profile = (summary.get("cell_options") or {}).get("controller")
    if profile and (profile["torque_headroom"] < 1 or profile["velocity_headroom"] < 1):
        # (with headroom the column and the empty-gripper line below had two different limits, unsaid)
        print(f"(worst vs limit: against the limits planned for, the controller profile's τ_max × "
              f"{profile['torque_headroom']:g} and q̇_max × {profile['velocity_headroom']:g})")
    print()
    print(rp.format_table(["box", "slot", "type", "loaded s", "return s", "cycle s"],
                          [[c["box"], c["slot"], c["box_type"], f"{c['loaded_s']:.3f}", f"{c['return_s']:.3f}",
                            f"{c['cycle_s']:.3f}"] for c in summary["cycles"]]))
    print(f"\ntotal: {report.total_time:.3f} s for {len(report.boxes_planned)} of {len(cell.slots)} boxes "
          f"(mean cycle {summary['mean_cycle_s']:.3f} s)")
    w = summary["nominal_plan_worst"]
    if w is not None:
        print(_nominal_line(w))
    cl = summary.get("cell_options")
    if cl and "total_time_without_s" in cl:
        which = ", ".join(text.format(v) for text, v in (("tool speed ≤ {:g} m/s", cl["tool_speed_max"]),
                                                           ("collision energy ≤ {:g} J", cl["collision_energy_max"]),
                                                           ("time–energy weight {:g}", cl["energy_weight"] or None),
                                                           ("torque rate ≤ {} N·m/s", _short(cl["torque_rate_max"])),
                                                           ("jerk ≤ {} rad/s³", _short(cl["jerk_max"])),
                                                           ("{}joint friction", "" if cl["friction"] else None),
                                                           ("controller profile: {}", _profile(cl.get("controller"))))
                          if v is not None)
        # the change with its own sign: friction also helps to brake, and a faster pallet read "(+-0.0 %"
        print(f"cell options ({which}): pallet {cl['total_time_s']:.3f} s instead of "
              f"{cl['total_time_without_s']:.3f} s ({cl['cycle_time_increase_percent']:+.1f} %, "
              f"{cl['moves_slowed']} of {len(report.moves)} moves slowed)")
        if "energy_without_s" in cl:
            print(f"  ∫τᵀRτ dt (R = 1/τ_max²) over the pallet: {cl['energy_s']:.3f} s instead of "
                  f"{cl['energy_without_s']:.3f} s ({100 * (cl['energy_s'] / cl['energy_without_s'] - 1):+.1f} %)")
    th = summary.get("thermal")
    if th is not None:                           # [thermal] (it was only in summary.json)
        print(_thermal_line(th))
    ik = summary["ik"]
    pi = ik["pose_ik"]
    print(f"IK: {ik['sweeps']} recursive sweeps (Nicolato & Madrid) over {ik['samples']} path samples, "
          f"{ik['polished']} polished by Newton steps; poses: {pi['poses']} by {pi['solves']} solves, "
          f"{pi['poses'] - pi['reached_by_first_start']} needed another start or yaw, {pi['turned_by_symmetry']} "
          f"turned by the box's symmetry")
    pl = summary["planning"]
    if pl["first_plan_mean_s"] is not None and pl["reused_plan_mean_s"] is not None:
        print(f"planning: {pl['first_plan_mean_s']:.2f} s per plan with a new problem, "
              f"{pl['reused_plan_mean_s']:.2f} s per re-plan re-using a compiled one (same path, other payload); "
              f"IK {pl['ik_s']:.2f} s")
