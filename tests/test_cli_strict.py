"""`--strict` of `plan`, `palletize` and `batch`: a plan over its limits writes its output in full and exits
with `STRICT_EXIT` and one line naming it; without `--strict` the same run exits 0; a good plan exits 0 either
way. The summaries' `within_limits` flag is checked against the written trajectories themselves (velocity,
acceleration, and torque by Pinocchio's RNEA + friction, `benchmarks.bench_planner._over_limit`).

Over-limit plans, provoked honestly: `plan` with a user grid too coarse for a dense, noisy Panda path (25
intervals: the repairs stall 3 % over joint 5's acceleration limit, tests/test_limit_report.py); the
palletizing moves on a 10-interval grid with the planner's repairs and splits switched off (its public options
`max_rounds=0, max_splits=0`, as a cell cannot set them: ~1 % over joint 1's velocity limit)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from scenarios.palletizing import DEFAULT_CELL
from toppra_app.cli import main
from toppra_app.commands.strict import STRICT_EXIT

NOISY = Path(__file__).parent / "data" / "panda_noisy_150.csv"
TOL = 1e-3


def over_limit(csv_file, robot) -> float:
    """Worst value/limit − 1 of a written trajectory (t, q, q̇, q̈, τ per joint), torque by Pinocchio."""
    pytest.importorskip("pinocchio")
    from benchmarks.bench_planner import _over_limit
    data = np.loadtxt(csv_file, delimiter=",", skiprows=1)
    n = robot.n
    q, qd, qdd = (data[:, 1 + k * n:1 + (k + 1) * n] for k in range(3))
    return _over_limit(robot, q, qd, qdd)


def strict_lines(err: str) -> list:
    return [line for line in err.splitlines() if ": strict: " in line]


def one_strict_line(err: str, strict: bool, pattern: str) -> None:
    """With --strict, exactly one strict line on stderr, matching `pattern`; without, none."""
    lines = strict_lines(err)
    if strict:
        assert len(lines) == 1 and re.fullmatch(pattern, lines[0]), lines
    else:
        assert lines == []


def test_exit_codes_do_not_clash():
    assert STRICT_EXIT not in (0, 1, 2, 3, 130, 141) and STRICT_EXIT < 128


# ------------------------------------------------------------------------------ plan
@pytest.mark.parametrize("strict", [True, False])
def test_plan_over_its_limit(tmp_path, capsys, strict):
    from dynamics import load_robot
    out = tmp_path / "out"
    rc = main(["plan", str(NOISY), "--robot", "panda", "--grid", "25", "--no-plots", "--no-report",
               "--out", str(out)] + (["--strict"] if strict else []))
    err = capsys.readouterr().err
    assert rc == (STRICT_EXIT if strict else 0)
    assert "still exceeds the acceleration limit" in err                       # the warning, either way
    one_strict_line(err, strict,
        r"toppra-app plan: strict: the plan of .*panda_noisy_150\.csv: acceleration of joint panda_joint5 at "
        r"1\.03\d* × its limit between grid points at θ = [0-9.]+ \(tol 1\.001\)")
    assert sorted(p.name for p in out.iterdir()) == [".toppra-app-manifest.json", "summary.json", "trajectory.csv"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["within_limits"] is False and summary["limit_check"]["limit"] == "acceleration"
    assert summary["limit_check"]["joint"] == "panda_joint5" and summary["limit_check"]["ratio"] > 1 + TOL
    # the written trajectory itself is over (2.3 % on the 1 ms samples)
    assert over_limit(out / "trajectory.csv", load_robot("panda")) > TOL


def test_plan_within_its_limits_passes_strict(tmp_path, capsys):
    from dynamics import load_robot
    out = tmp_path / "out"
    assert main(["plan", str(NOISY), "--robot", "panda", "--grid", "40", "--no-plots", "--no-report", "--out",
                 str(out), "--strict"]) == 0
    assert strict_lines(capsys.readouterr().err) == []
    summary = json.loads((out / "summary.json").read_text())
    assert summary["within_limits"] is True and summary["limit_check"]["problems"] == []
    assert over_limit(out / "trajectory.csv", load_robot("panda")) <= TOL


# ------------------------------------------------------------------------------ palletize, batch
@pytest.fixture
def no_repairs(monkeypatch):
    """The planner without repairs or grid splits (the cells' moves then end ~1 % over a limit on 10 intervals)."""
    from toppra_app import planner as planner_module
    Real = planner_module.TimeOptimalPlanner

    class NoRepairs(Real):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "max_rounds": 0, "max_splits": 0})
    monkeypatch.setattr(planner_module, "TimeOptimalPlanner", NoRepairs)


@pytest.fixture
def coarse_cell(tmp_path) -> Path:
    text = DEFAULT_CELL.read_text(encoding="utf-8")
    path = tmp_path / "coarse.toml"
    path.write_text(re.sub(r"(?m)^grid = 200\b", "grid = 10", text), encoding="utf-8")
    assert path.read_text() != text
    return path


def cell_robot(cell_file, loaded: bool):
    from scenarios.palletizing import load_cell
    cell = load_cell(str(cell_file))
    return cell.robot.with_payload(cell.slots[0].box.payload(cell.grasp_turn)) if loaded else cell.robot


PALLETIZE = ["--boxes", "1", "--no-plots", "--no-report", "--no-compare"]


@pytest.mark.parametrize("strict", [True, False])
def test_palletize_over_its_limits(tmp_path, capsys, no_repairs, coarse_cell, strict):
    out = tmp_path / "out"
    rc = main(["palletize", str(coarse_cell), *PALLETIZE, "--out", str(out)] + (["--strict"] if strict else []))
    err = capsys.readouterr().err
    assert rc == (STRICT_EXIT if strict else 0)
    one_strict_line(err, strict,
        r"toppra-app palletize: strict: move 1 \(box01_loaded\): velocity of joint iiwa_joint_1 at 1\.0\d+ × "
        r"its limit between grid points at θ = [0-9.]+ \(tol 1\.001\) \(and 1 more: move 2 \(box01_return\)\)")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["within_limits"] is False and summary["moves_over_limits"] == [1, 2]
    assert [m["within_limits"] for m in summary["moves"]] == [False, False]
    assert summary["moves"][0]["limit_check"]["limit"] == "velocity"
    assert summary["worst_over_limit"]["move"] == 1                    # (the keys there before, kept)
    assert over_limit(out / "move01_box01_loaded.csv", cell_robot(coarse_cell, True)) > TOL


def test_palletize_within_its_limits_passes_strict(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["palletize", *PALLETIZE, "--out", str(out), "--strict"]) == 0
    assert strict_lines(capsys.readouterr().err) == []
    summary = json.loads((out / "summary.json").read_text())
    assert summary["within_limits"] is True and summary["moves_over_limits"] == []
    assert all(m["within_limits"] for m in summary["moves"])
    assert over_limit(out / "move01_box01_loaded.csv", cell_robot(DEFAULT_CELL, True)) <= TOL
    assert over_limit(out / "move02_box01_return.csv", cell_robot(DEFAULT_CELL, False)) <= TOL


def manifest(tmp_path, cell, boxes="[1]") -> Path:
    m = tmp_path / "line.toml"
    m.write_text(f'[batch]\ncells = ["{Path(cell).as_posix()}"]\nboxes = {boxes}\n', encoding="utf-8")
    return m


def moves(out: Path) -> list:
    with open(out / "moves.csv", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("strict", [True, False])
def test_batch_over_its_limits(tmp_path, capsys, no_repairs, coarse_cell, strict):
    out = tmp_path / "out"
    rc = main(["batch", str(manifest(tmp_path, coarse_cell)), "--serial", "--no-report", "--out", str(out)]
              + (["--strict"] if strict else []))
    lines = strict_lines(capsys.readouterr().err)
    assert rc == (STRICT_EXIT if strict else 0)
    assert len(lines) == (1 if strict else 0)
    if strict:
        assert lines[0].startswith("toppra-app batch: strict: cell coarse move 1 (box 1 loaded): velocity of joint "
                                   "iiwa_joint_1 at 1.0") and lines[0].endswith("(and 1 more: cell coarse move 2 "
                                                                               "(box 1 return))")
    rows = moves(out)
    assert [(r["move"], r["within_limits"], r["limit"], r["limit_joint"]) for r in rows] == [
        ("1", "false", "velocity", "iiwa_joint_1"), ("2", "false", "velocity", "iiwa_joint_1")]
    assert float(rows[0]["limit_ratio"]) == float(rows[0]["worst_ratio"]) > 1 + TOL
    assert "velocity of joint iiwa_joint_1 at 1.0" in rows[0]["limit_problems"]
    summary = json.loads((out / "batch_summary.json").read_text())
    assert summary["moves_over_limits"] == 2 and summary["cells"]["coarse"]["within_limits"] is False
    assert summary["cells"]["coarse"]["moves_over_limits"] == [1, 2]
    traj = out / "trajectories" / "coarse" / "move001_box001_loaded.csv"
    assert over_limit(traj, cell_robot(coarse_cell, True)) > TOL


def test_batch_within_its_limits_passes_strict(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["batch", str(manifest(tmp_path, DEFAULT_CELL)), "--serial", "--no-report", "--out", str(out),
                 "--strict"]) == 0
    assert strict_lines(capsys.readouterr().err) == []
    assert [r["within_limits"] for r in moves(out)] == ["true", "true"]
    summary = json.loads((out / "batch_summary.json").read_text())
    assert summary["moves_over_limits"] == 0 and summary["cells"]["default_cell"]["within_limits"] is True
    traj = out / "trajectories" / "default_cell" / "move001_box001_loaded.csv"
    assert over_limit(traj, cell_robot(DEFAULT_CELL, True)) <= TOL


def test_a_batch_begun_without_the_limit_columns_resumes_in_its_own(tmp_path, capsys, no_repairs, coarse_cell):
    """moves.csv of a batch an earlier version began (without the limit columns) keeps its header: the resumed
    moves' rows have its columns (a longer row would shift them), and they are judged by worst_ratio."""
    m = manifest(tmp_path, coarse_cell, boxes="[1, 2]")
    out = tmp_path / "out"
    assert main(["batch", str(m), "--serial", "--no-report", "--out", str(out)]) == 0
    lines = (out / "moves.csv").read_text(encoding="utf-8").splitlines()
    cut = lambda line: ",".join(next(csv.reader([line]))[:16])                # the 16 columns before
    (out / "moves.csv").write_text("\n".join(cut(x) for x in lines[:3]) + "\n", encoding="utf-8")  # box 2 lost
    capsys.readouterr()
    assert main(["batch", str(m), "--serial", "--no-report", "--out", str(out), "--strict"]) == STRICT_EXIT
    assert "2 moves to plan, 2 already done" in capsys.readouterr().out
    rows = moves(out)
    assert [r["move"] for r in rows] == ["1", "2", "3", "4"] and all(len(r) == 16 and None not in r for r in rows)
    summary = json.loads((out / "batch_summary.json").read_text())
    assert summary["cells"]["coarse"]["moves_over_limits"] == [1, 2, 3, 4]


@pytest.fixture
def coarse_thermal_cell(coarse_cell) -> Path:
    """The coarse cell (grid = 10) with a `[thermal]` rating that binds."""
    path = coarse_cell.with_name("thermal.toml")
    path.write_text(coarse_cell.read_text(encoding="utf-8") + "\n[thermal]\ntau_rms_fraction = 0.3\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("strict", [True, False])
def test_palletize_thermal_cycle_over_a_limit(tmp_path, capsys, coarse_thermal_cell, strict):
    """The `[thermal]` cycle's moves are planned by the cycle problem, with rows at grid points only: on the
    10-interval grid halved and without repairs (as before they were added; `thermal.MAX_REPAIRS`) its return
    move ends 3.7 % over joint 1's velocity limit. That passed without a word; a cycle over a limit is now
    warned of, and --strict exits `STRICT_EXIT` naming the cycle, the move and the limit — the move's 1 ms
    samples confirm the excess."""
    from scenarios.palletizing import load_cell
    from toppra_app.objectives import thermal
    real, kept = thermal.plan_cycle_with_rms_limit, []

    def keep(*args, **kwargs):
        kept.append(real(*args, **kwargs))
        return kept[-1]
    out = tmp_path / "out"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(thermal, "plan_cycle_with_rms_limit", keep)
        mp.setattr(thermal, "MAX_REPAIRS", 0)
        mp.setattr(thermal, "MIN_CYCLE_INTERVALS", 2)
        rc = main(["palletize", str(coarse_thermal_cell), *PALLETIZE, "--out", str(out)] + (["--strict"] if strict else []))
    got = capsys.readouterr()
    err = got.err
    assert rc == (STRICT_EXIT if strict else 0)
    # the terminal summary has the cycle too (it was only in summary.json)
    assert re.search(r"\nthermal \(box 1's cycle, RMS torque rating\): cycle [0-9.]+ s instead of [0-9.]+ s \(\+[0-9.]+ %, "
                     r"idle [0-9.]+ s\), RMS [0-9.]+ % of the rating \(joint \d\); NOT within its limits", got.out), got.out
    move = kept[0].plans[1]
    qd = move.sample(1e-3).qd
    assert (np.abs(qd) / load_cell(str(coarse_thermal_cell)).robot.qd_max).max() > 1.03       # the oracle
    assert re.search(r"thermal cycle: move 2: velocity of joint iiwa_joint_1 at 1\.03\d+ × its limit", err), err
    one_strict_line(err, strict,
        r"toppra-app palletize: strict: thermal cycle of box 1: move 2: velocity of joint iiwa_joint_1 at "
        r"1\.03\d+ × its limit between grid points at θ = [0-9.]+ \(tol 1\.001\)")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["thermal"]["within_limits"] is False and summary["within_limits"] is True   # (its moves are)


@pytest.mark.parametrize("strict", [True, False])
def test_payload_sweep_over_its_limits(tmp_path, capsys, no_repairs, coarse_cell, strict):
    """payload-sweep records each re-plan's verdict (summary.json, sweep.csv's within_limits) and takes --strict:
    on 10 intervals without repairs both payloads' plans are over a limit."""
    out = tmp_path / "out"
    rc = main(["payload-sweep", str(coarse_cell), "--masses", "0,3", "--offsets", "0", "--no-plots", "--out",
               str(out)] + (["--strict"] if strict else []))
    err = capsys.readouterr().err
    assert rc == (STRICT_EXIT if strict else 0)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["within_limits"] is False and summary["points_over_limits"] == [1, 2]
    worst = max(summary["points"], key=lambda p: p["limit_check"]["ratio"])
    one_strict_line(err, strict,
        rf"toppra-app payload-sweep: strict: the plan with {worst['mass_kg']:g} kg at 0 m: \w+ of joint "
        r"iiwa_joint_\d at 1\.0\d+ × its limit between grid points at θ = [0-9.]+ \(tol 1\.001\) \(and 1 more: "
        r"the plan with \d kg at 0 m\)")
    rows = list(csv.DictReader((out / "sweep.csv").open()))
    assert [r["within_limits"] for r in rows] == ["0", "0"] and all(float(r["worst_ratio"]) > 1.001 for r in rows)
