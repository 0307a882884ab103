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
    """Boxes 1 and 3."""
    out = tmp_path_factory.mktemp("pallet") / "out"
    code, text = _run(["palletize", "--boxes", "1,3", "--no-plots", "--no-report", "--out", str(out)])
    assert code == 0
    return out, _strict_json(out / "summary.json"), text


def _last_time(path) -> float:
    return float(np.loadtxt(path, delimiter=",", skiprows=1, usecols=0)[-1])


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
