"""What `docs_check` needs per page: the names a reader has before a page's Python blocks (PRELUDES: the
robot and path of planner.md's "Usage", the URDF files the examples name, from example-robot-data),
SUBSTITUTIONS of file names in the blocks, and CHECKS of what the page's comments claim (names, return
fields, printed values), each returning a list of problems."""

from __future__ import annotations

import numpy as np

_ERD = """
from benchmarks.cases import erd_path
PANDA_URDF = erd_path("robots/panda_description/urdf/panda.urdf")
SOLO_URDF = erd_path("robots/solo_description/robots/solo12.urdf")
"""

# planner.md "Usage": the iiwa 7 and a path through waypoints (the benchmark's pick-place path)
_ROBOT_PATH = """
import numpy as np
import dynamics
from benchmarks.cases import BENCH_PATHS
from toppra_app import JointPath
robot = dynamics.load_robot("iiwa7")
waypoints = np.array(BENCH_PATHS["iiwa7"]["pick-place"])
path = JointPath.from_waypoints(waypoints)
"""

PRELUDES = {
    "docs/planner.md": _ROBOT_PATH + """
samples = np.linspace(waypoints[0], waypoints[1], 200) + 1e-4 * np.random.default_rng(0).standard_normal((200, 7))
""",
    "docs/controller.md": _ROBOT_PATH,
    "docs/export.md": _ROBOT_PATH + """
from toppra_app import plan_time_optimal
plan = plan_time_optimal(robot, path)
""",
    "docs/planner_limits.md": _ROBOT_PATH + """
from toppra_app import plan_time_optimal, TimeOptimalPlanner
box = dynamics.RigidBodyInertia.box(5.0, (0.2, 0.15, 0.1))
path_loaded, path_return = path, JointPath.from_waypoints(waypoints[::-1])
tau_rms = 0.3 * np.asarray(robot.tau_max)
""",
    "docs/models.md": _ERD + "path = PANDA_URDF\n",
    "docs/trees.md": _ERD,
}

SUBSTITUTIONS = {
    "docs/models.md": (('"panda.urdf"', "PANDA_URDF"),),
    "docs/trees.md": (('"solo12.urdf"', "SOLO_URDF"),),
}

# names a page gives as removed (not to be looked up)
HISTORICAL = {"refine.anticipate"}


def _expect(problems: list, ok: bool, claim: str, actual) -> None:
    if not ok:
        problems.append(f"{claim}; actual: {actual}")


def _readme(ns) -> list[str]:
    from toppra_app import JointPath
    p: list[str] = []
    _expect(p, ns["loaded"].timings["compile"] == 0.0, "# same planner, nothing compiled",
            ns["loaded"].timings["compile"])
    fitted = JointPath.from_waypoints(np.linspace(ns["path"].q(0.0), ns["path"].q(1.0), 50), tolerance=5e-4)
    _expect(p, fitted is not None, "JointPath.from_waypoints(samples, tolerance=5e-4)", fitted)
    return p


def _planner(ns) -> list[str]:
    from toppra_app import JointPath
    p: list[str] = []
    plan = ns["plan"]
    _expect(p, {"torque", "velocity", "acceleration"} <= set(plan.worst), "plan.worst has torque, velocity, "
            "acceleration", sorted(plan.worst))
    w = plan.worst["torque"]
    _expect(p, all(hasattr(w, a) for a in ("ratio", "joint", "theta")), "Worst(ratio, joint, theta, ...)", w)
    _expect(p, np.shape(ns["plan"].eval(0.25)) == (7,) and np.shape(plan.evald([0.1, 0.2])) == (2, 7),
            "plan.eval(scalar) → (n,), evald(array) → (m, n)", (np.shape(plan.eval(0.25)),))
    recorded = JointPath.from_waypoints(ns["samples"], tolerance=5e-4)
    _expect(p, recorded is not None, "JointPath.from_waypoints(samples, tolerance=5e-4)", recorded)
    again = ns["planner"].plan(start=plan.law)
    _expect(p, again.duration > 0, "planner.plan(..., start=plan.law)", again)
    return p


def _controller(ns) -> list[str]:
    p: list[str] = []
    _expect(p, set(ns["plan"].rate_check) == {"torque_rate", "jerk"}, 'plan.rate_check: {"torque_rate"|"jerk"}',
            sorted(ns["plan"].rate_check))
    info = ns["plan"].rate_info
    _expect(p, {"solves", "passes", "history", "rows"} <= set(info), "plan.rate_info: solves, passes, history, rows",
            sorted(info))
    from toppra_app import TimeOptimalPlanner
    as_dict = TimeOptimalPlanner(ns["robot"], ns["path"], controller={"torque_rate_max": 1000.0}).plan()
    _expect(p, "torque_rate" in as_dict.rate_check, "controller= a dict of the fields", sorted(as_dict.rate_check))
    return p


def _export(ns) -> list[str]:
    p: list[str] = []
    _expect(p, isinstance(ns["msg"], dict) and {"joint_names", "points"} <= set(ns["msg"]),
            "plan.joint_trajectory: a dict, the message's layout", type(ns["msg"]))
    _expect(p, ns["name"] == "joint_trajectory.yaml", '# ("joint_trajectory.yaml", text)', ns["name"])
    return p


def _models(ns) -> list[str]:
    p: list[str] = []
    r = ns["robot"]          # the last robot: the Panda with its hand, coupled
    _expect(p, (r.n, r.n_bodies) == (8, 9), "# 8 coordinates, 9 bodies", (r.n, r.n_bodies))
    _expect(p, r.joint_names[-1] == "panda_finger_joint1", 'joint_names: ..., "panda_finger_joint1"', r.joint_names)
    _expect(p, r.body_joint_names[-2:] == ("panda_finger_joint1", "panda_finger_joint2"),
            'body_joint_names: ..., "panda_finger_joint1", "panda_finger_joint2"', r.body_joint_names)
    _expect(p, ns["free"].n == 9, "# 9 coordinates", ns["free"].n)
    import dynamics
    arm = dynamics.RobotModel.from_urdf(ns["PANDA_URDF"], locked_joints={"panda_finger_joint1": 0.02})
    _expect(p, arm.n == 7, "the arm alone (finger_joint2 is locked with it)", arm.n)
    _expect(p, isinstance(ns["text"], str) and "<robot" in ns["text"], "to_urdf() → the URDF document",
            ns["text"][:40])
    return p


def _trees(ns) -> list[str]:
    p: list[str] = []
    _expect(p, ns["Mdot"].shape == ns["C"].shape and np.allclose(ns["Mdot"], ns["C"] + np.swapaxes(ns["C"], -1, -2)),
            "Ṁ = C + Cᵀ", None)
    claw = ns["P"].point("link12a", "tool")
    _expect(p, np.shape(claw) == (3,), "P.point: left claw centre, world, metres", np.shape(claw))
    return p


def _limits(ns) -> list[str]:
    p: list[str] = []
    rows = ns["rows"]
    _expect(p, all({"weight", "duration", "energy", "plan"} <= set(r) for r in rows),
            "time_energy_curve → [{weight, duration, energy, plan}]", sorted(rows[0]))
    res = ns["res"]
    _expect(p, np.shape(res.rms) == (ns["robot"].n,), "res.rms: (n,)", np.shape(res.rms))
    _expect(p, len(res.plans) == 2 and len(res.time_optimal_plans) == 2, "res.plans: per move", len(res.plans))
    return p


def _palletizing(ns) -> list[str]:
    p: list[str] = []
    cycles = ns["report"].cycle_times()
    _expect(p, len(cycles) == 8, "the built-in cell: 8 boxes", len(cycles))
    _expect(p, abs(ns["report"].total_time - 17.7) < 0.2, "Total pallet time ≈ 17.7 s for 8 boxes",
            ns["report"].total_time)
    return p


CHECKS = {"README.md": _readme, "docs/planner.md": _planner, "docs/controller.md": _controller,
          "docs/export.md": _export, "docs/models.md": _models, "docs/trees.md": _trees,
          "docs/planner_limits.md": _limits, "docs/palletizing.md": _palletizing}


# cell-file settings palletizing.md shows, each added to the built-in cell: they must load
CELL_SNIPPETS = (
    "[limits]\ntool_speed_max = 0.25\n",
    "[limits]\ncollaborative = { energy_max = 0.5 }\n",
    "[limits]\ntool_speed_max = 1.0\ncollaborative = { energy_max = 0.5 }\n",
    "[limits]\ncollaborative = { energy_max = 0.5, contact_mass = 0.6 }\n",
    "[limits]\njerk_max = 5000\n[friction]\nviscous = [0.5, 0.5, 0.3, 0.3, 0.2, 0.1, 0.1]\n",
    "[thermal]\ntau_rms_fraction = 0.3\n",
    "[thermal]\ntau_rms = [60, 60, inf, inf, inf, inf, inf]\n",
    "[collision]\nenabled = false\n",
)
# bad cells palletizing.md shows, with the message it shows (after the file's name)
BAD_CELLS = (
    (("mass = 5.0", "mass = 6.8"), "boxes.heavy.mass: 6.8 kg exceeds what iiwa7 can carry (rated payload 7 kg "
                                   "minus gripper 0.6 kg = 6.4 kg)"),
    (("[boxes.heavy]", "[limits]\ncollaborative = { energy_max = 0 }\n\n[boxes.heavy]"),
     "limits.collaborative.energy_max: must be > 0, got 0"),
)


def _cell_files(ns) -> list[str]:
    from pathlib import Path

    from benchmarks.docs_extract import ROOT
    from scenarios.palletizing import load_cell
    p: list[str] = []
    text = (ROOT / "scenarios" / "default_cell.toml").read_text(encoding="utf-8")
    for k, snippet in enumerate(CELL_SNIPPETS):
        Path(f"cell{k}.toml").write_text(text + "\n" + snippet)
        try:
            load_cell(f"cell{k}.toml")
        except ValueError as exc:
            p.append(f"the cell setting {snippet!r} does not load: {exc}")
    for (old, new), message in BAD_CELLS:
        Path("cell.toml").write_text(text.replace(old, new, 1))
        try:
            load_cell("cell.toml")
            p.append(f"a cell with {new!r} loads; the page says: {message}")
        except ValueError as exc:
            _expect(p, str(exc) == f"cell.toml: {message}", f"cell.toml: {message}", exc)
    return p


def _batch(ns) -> list[str]:
    """The manifest of batch.md over two copies of the built-in cell loads; a bad swept value is the line shown."""
    from pathlib import Path

    from benchmarks.docs_extract import ROOT, fenced_blocks, page_text
    from scenarios.batch.manifest import read_source
    from scenarios.batch.run import load_cells
    p: list[str] = []
    cell = (ROOT / "scenarios" / "default_cell.toml").read_text(encoding="utf-8")
    for name in ("line1.toml", "line2.toml"):
        Path(name).write_text(cell)
    Path("line3.toml").write_text(next(b.code for b in fenced_blocks(page_text("docs/batch.md")) if b.lang == "toml"))
    try:
        loaded, failed = load_cells(read_source("line3.toml"))
        _expect(p, len(loaded) == 24 and not failed, "the manifest: 2 cells × 12 variants", (len(loaded), len(failed)))
    except ValueError as exc:
        p.append(f"the manifest of batch.md does not load: {exc}")
    Path("bad.toml").write_text('[batch]\ncells = ["default"]\n[sweep]\n"boxes.heavy.mass" = [3.0, -1.0]\n')
    shown = "default_cell.toml [default_cell~2: boxes.heavy.mass = -1.0]: boxes.heavy.mass: must be > 0, got -1.0"
    try:
        load_cells(read_source("bad.toml"))
        p.append("a manifest sweeping boxes.heavy.mass to -1.0 loads")
    except ValueError as exc:
        _expect(p, str(exc).endswith(shown), shown, exc)
    return p


def _palletizing_all(ns) -> list[str]:
    return _palletizing(ns) + _cell_files(ns)


def _collected(files: list[str]) -> dict[str, int]:
    """Tests pytest collects per file (parameters counted), in one subprocess."""
    import os
    import subprocess
    import sys

    from benchmarks.docs_extract import ROOT
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300).stdout
    counts = dict.fromkeys(files, 0)
    for line in out.splitlines():
        name = line.split("::")[0]
        if "::" in line and name in counts:
            counts[name] += 1
    return counts


def _safety(ns) -> list[str]:
    """safety.md "Tests and counts": each file's count of tests ("37 tests (with parameters) + 60 generated",
    "7") is what pytest collects from it."""
    import re

    from benchmarks.docs_extract import page_text
    claims = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\| `(tests/test_\w+\.py)` \|.*\| (\d+)[^|]*\|$",
                                                                 page_text("docs/safety.md"), re.M)}
    p: list[str] = []
    _expect(p, len(claims) >= 10, '"Tests and counts": a row per test file', sorted(claims))
    counts = _collected(sorted(claims))
    for name, claimed in claims.items():
        _expect(p, counts[name] == claimed, f"{name}: {claimed} tests (with parameters)", counts[name])
    return p


CHECKS.update({"docs/palletizing.md": _palletizing_all, "docs/batch.md": _batch, "docs/safety.md": _safety})
