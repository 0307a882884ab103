"""What a user of `palletize` and `payload-sweep` reads, checked against what was written: summary.json
against the trajectory CSVs (each duration the last time stamp of its move's file), the terminal tables against
summary.json and sweep.csv, the sweep figure's curves; one run of each command (module-scoped)."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from toppra_app.cli import main

FRICTION = """
[friction]
coulomb = [0.5, 0.5, 0.4, 0.4, 0.3, 0.2, 0.2]
viscous = [0.5, 0.5, 0.3, 0.3, 0.2, 0.1, 0.1]
"""


def _strict_json(path):
    """summary.json read as strict JSON: NaN or Infinity (Python writes them, JSON has none) fail."""
    def refuse(name):
        raise AssertionError(f"{path.name} holds {name}")
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def _run(argv):
    """`main(argv)` in this process: (exit code, stdout)."""
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        code = main(argv)
    return code, text.getvalue()


@pytest.fixture(scope="module")
def pallet(tmp_path_factory):
    """The built-in cell with the [friction] of its comments, boxes given out of order and twice: '2,1,1'."""
    from scenarios.palletizing import DEFAULT_CELL
    here = tmp_path_factory.mktemp("pallet")
    cell = here / "friction.toml"
    cell.write_text(DEFAULT_CELL.read_text(encoding="utf-8") + FRICTION, encoding="utf-8")
    out = here / "out"
    code, text = _run(["palletize", str(cell), "--boxes", "2,1,1", "--no-plots", "--no-report", "--out", str(out)])
    assert code == 0
    return out, _strict_json(out / "summary.json"), text


def _last_time(path) -> float:
    return float(np.loadtxt(path, delimiter=",", skiprows=1, usecols=0)[-1])


def test_boxes_are_planned_in_slot_order_each_once(pallet):
    """`--boxes 2,1,1` planned box 2, then box 1 twice: box 1 was placed beside box 2 without being checked
    against it (the collision checks stand the slots before a box, the pallet being built in slot order),
    and the cycle table had box 1 twice, each row summing both of its cycles (4.139 s for a 2.069 s cycle).
    Now the boxes are planned as `batch.boxes` plans them: in slot order, each once."""
    out, summary, text = pallet
    moves = summary["moves"]
    assert [(m["move"], m["box"], m["kind"]) for m in moves] == [
        (1, 1, "loaded"), (2, 1, "return"), (3, 2, "loaded"), (4, 2, "return")]
    names = [f"move{m['move']:02d}_box{m['box']:02d}_{m['kind']}.csv" for m in moves]
    assert sorted(p.name for p in out.glob("*.csv")) == names
    assert summary["boxes_planned"] == 2
    last = {(m["box"], m["kind"]): _last_time(out / name) for m, name in zip(moves, names)}
    for m, name in zip(moves, names):                     # the 9 significant digits of the CSV
        assert abs(m["duration_s"] - last[m["box"], m["kind"]]) < 1e-8, name
    cycles = summary["cycles"]
    assert [c["box"] for c in cycles] == [1, 2]
    for c in cycles:
        assert abs(c["loaded_s"] - last[c["box"], "loaded"]) < 1e-8
        assert abs(c["return_s"] - last[c["box"], "return"]) < 1e-8
        assert c["cycle_s"] == pytest.approx(c["loaded_s"] + c["return_s"], abs=1e-12)
    total = sum(last.values())
    assert abs(summary["total_time_s"] - total) < 4e-8
    assert summary["mean_cycle_s"] == pytest.approx(summary["total_time_s"] / 2, abs=1e-12)
    # the terminal's box table: one row a box, the numbers of summary.json
    rows = [line.split() for line in text.splitlines() if line.split()[:1] in (["1"], ["2"]) and "heavy" in line]
    assert rows == [[str(c["box"]), c["slot"], c["box_type"], f"{c['loaded_s']:.3f}", f"{c['return_s']:.3f}",
                     f"{c['cycle_s']:.3f}"] for c in cycles]
    assert f"total: {summary['total_time_s']:.3f} s for 2 of 8 boxes" in text


def test_pallet_summary_names_its_version_units_and_joints(pallet):
    """`plan`'s summary.json had the tool, its version, the units and the joint names; palletize's had none
    of them (its per-joint lists and 'joint' numbers could not be read by name, nor a file told from another
    version's)."""
    out, summary, _ = pallet
    manifest = json.loads((out / ".toppra-app-manifest.json").read_text(encoding="utf-8"))
    assert summary["tool"] == manifest["tool"] == "toppra-app"
    assert summary["version"] == manifest["version"]
    header = (out / "move01_box01_loaded.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert ["q_" + n for n in summary["joint_names"]] == [h for h in header if h.startswith("q_")]
    assert len(summary["joint_names"]) == 7
    for m in summary["moves"]:                            # a worst value's joint number is in that list
        for w in m["worst"].values():
            if w["joint"] >= 0:
                assert summary["joint_names"][w["joint"]] == w["joint_name"]
    assert summary["units"]["time"] == "s" and summary["units"]["effort"] == "N·m or N"


def test_a_limit_the_robot_has_not_is_said_not_set_not_a_ratio_of_zero(pallet):
    """The iiwa 7 has no acceleration limits: each move's `worst` had an 'acceleration' entry of ratio 0.0 and
    joint −1 (nothing was compared); it is left out and named in `limits_not_set`, as the terminal says."""
    out, summary, text = pallet
    assert summary["limits_not_set"] == ["acceleration"]
    for m in summary["moves"]:
        assert m["limits_not_set"] == ["acceleration"] and set(m["worst"]) == {"torque", "velocity"}
        assert all(w["ratio"] > 0 and w["joint"] >= 0 and w["limit"] is not None for w in m["worst"].values())
    assert "(worst vs limit: iiwa7 has no acceleration limit, so none is compared)" in text.splitlines()


def test_cell_options_line_gives_the_change_with_its_sign(pallet):
    """Friction also helps to brake: this pallet plans 0.002 % faster with it than without, and the terminal
    read '(+-0.0 %' (a '+' written before the number's own sign)."""
    out, summary, text = pallet
    moves, cl = summary["moves"], summary["cell_options"]
    with_, without = (sum(m[key] for m in moves) for key in ("duration_s", "duration_without_cell_options_s"))
    assert cl["total_time_s"] == pytest.approx(with_, abs=1e-12) and with_ < without
    change = 100 * (with_ / without - 1)
    line = next(line for line in text.splitlines() if line.startswith("cell options (joint friction)"))
    assert line == (f"cell options (joint friction): pallet {with_:.3f} s instead of {without:.3f} s "
                    f"({change:+.1f} %, {cl['moves_slowed']} of 4 moves slowed)")
    assert "+-" not in text and "-+" not in text


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """Masses out of order and one twice, two offsets 4 mm apart; the figure kept for a look."""
    import scenarios.report as rp
    out = tmp_path_factory.mktemp("sweep") / "out"
    figures = []

    def keep(s):
        figures.append(draw(s))
        return figures[-1]
    draw = rp.sweep_figure
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rp, "sweep_figure", keep)
        code, text = _run(["payload-sweep", "--masses", "3,0,3", "--offsets", "0.004,0", "--out", str(out)])
    assert code == 0 and len(figures) == 1
    return out, _strict_json(out / "summary.json"), text, figures[0]


def test_sweep_values_each_once_and_in_order(sweep):
    """`--masses 1,1,0.5` printed a column of 'nan' under the second '1 kg' (`table` put each point in the first
    column of its value), and `--masses 6,0,3` drew every curve back and forth (6 → 0 → 3 kg); offsets 0 and
    0.004 m were both 'COM offset 0 cm' in the legend and '0.000' in the table."""
    out, summary, text, fig = sweep
    assert summary["masses_kg"] == [0.0, 3.0] and summary["com_offsets_m"] == [0.0, 0.004]
    assert "nan" not in text
    rows = np.loadtxt(out / "sweep.csv", delimiter=",", skiprows=1)
    assert len(rows) == len(summary["points"]) == 4
    lines = text.splitlines()
    head = next(k for k, line in enumerate(lines) if line.startswith("COM offset m"))
    assert lines[head].split()[3:] == ["0", "kg", "3", "kg"]
    for line in lines[head + 2:head + 4]:                 # each printed time is that point's in sweep.csv
        off, *times = line.split()
        for mass, shown in zip((0.0, 3.0), times):
            (row,) = rows[(rows[:, 0] == mass) & (rows[:, 1] == float(off))]
            assert shown == f"{row[2]:.3f}"
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["COM offset 0 cm", "COM offset 0.4 cm"]
    for curve in ax.get_lines():
        assert list(curve.get_xdata()) == [0.0, 3.0]
    assert summary["tool"] == "toppra-app" and summary["version"] and summary["units"]["mass"] == "kg"


def test_sweep_mass_over_the_rating_names_the_flag(tmp_path, capsys):
    """A mass over the robot's remaining payload was refused as 'masses: …', the library's argument, not the
    '--masses' the user typed (as '--box' already was); nothing is written."""
    out = tmp_path / "out"
    assert main(["payload-sweep", "--masses", "0,100", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["toppra-app payload-sweep: error: --masses: 100 kg exceeds what iiwa7 can carry "
                   "(6.4 kg = rated payload minus gripper)"]
    assert not out.exists()
