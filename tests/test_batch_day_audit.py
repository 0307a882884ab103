"""`toppra-app batch` audited as a production day is planned: hostile manifests fail in one line within seconds,
naming the file that holds the wrong field."""

from __future__ import annotations

import time

import numpy as np

import pytest

import scenarios.palletizing as palletizing
from scenarios.batch.manifest import read_source
from scenarios.batch.run import load_cells
from toppra_app.errors import InputError

from test_batch import write_manifest


def test_a_bad_variant_is_found_before_any_pick_posture_is_solved(tmp_path, monkeypatch):
    """load_cells solved each cell's pick posture (~35 ms) right after reading it: a bad value in the 1000th
    variant of a sweep ended the batch after 41 s of IK on the 999 before it. Every cell is now read first."""
    solved = []
    monkeypatch.setattr(palletizing, "pick_posture", lambda cell, memo=None: solved.append(cell))
    spec = read_source(write_manifest(tmp_path, boxes="[1]", masses="[" + "2.0, " * 50 + "-1.0]"))
    t0 = time.perf_counter()
    with pytest.raises(InputError, match=r"default_cell~51: boxes\.heavy\.mass = -1\.0\]: boxes\.heavy\.mass: must be > 0"):
        load_cells(spec)
    assert solved == [] and time.perf_counter() - t0 < 2.0


def test_a_box_number_the_pallet_does_not_have_names_the_manifest(tmp_path):
    """`boxes = [99]` is the manifest's key, but the line named the cell file (`default_cell.toml: batch.boxes: …`),
    which has no such key."""
    manifest = write_manifest(tmp_path, boxes="[1, 99]", masses="[2.0]")
    with pytest.raises(InputError) as exc:
        load_cells(read_source(manifest))
    assert str(exc.value).startswith(f"{manifest}: batch.boxes: box 99 does not exist in ")
    assert "default_cell.toml" in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("name, why", [("nope.toml", "no such file"), ("sub", "is a directory, not a cell file")])
def test_a_missing_cell_file_names_the_manifest_and_its_key(tmp_path, name, why):
    """The line was `nope.toml: no such file`: neither the manifest nor batch.cells, where the name was written."""
    (tmp_path / "sub").mkdir()
    manifest = tmp_path / "day.toml"
    manifest.write_text(f'[batch]\ncells = ["{name}"]\n')
    with pytest.raises(InputError) as exc:
        read_source(manifest)
    assert str(exc.value) == f"{manifest}: batch.cells: {tmp_path / name}: {why}"


def test_a_run_stopped_as_it_creates_its_directory_can_be_resumed(tmp_path, monkeypatch):
    """moves.csv was created before the marker: a run stopped between the two (Ctrl-C, SIGKILL) left a directory
    with an empty moves.csv and no marker, which the same command then refused as not a batch of this tool."""
    from scenarios.batch.store import BatchStore
    fingerprint = read_source(write_manifest(tmp_path, boxes="[1]", masses="[2.0]")).fingerprint(dt=1e-3)
    out = tmp_path / "out"

    def stopped(self):
        raise KeyboardInterrupt
    with monkeypatch.context() as m:
        m.setattr(BatchStore, "_lock", stopped)
        with pytest.raises(KeyboardInterrupt):
            BatchStore(out, fingerprint).open("0")
    store = BatchStore(out, fingerprint)
    assert store.resuming
    assert store.open("0") == {}
    store.close()


def test_a_resumed_batch_removes_its_own_temporaries_only(tmp_path):
    """Resuming removed every `.*.tmp-*` file anywhere in DIR — a user's notes/.draft.tmp-2-ab too — where only the
    batch's temporaries of a killed run (`.NAME.tmp-PID-XXXXXX` of its own files) are stale."""
    from scenarios.batch.store import BatchStore
    out = tmp_path / "out"
    store = BatchStore(out, "f")
    store.open("0")
    store.close()
    user = [out / ".draft.tmp-2-ab", out / "notes" / ".move001_box001_loaded.csv.tmp-1-abc",
            out / "trajectories" / ".plan.tmp-3-ff"]
    ours = [out / "..toppra-app-batch.json.tmp-12-a1b2c3", out / ".batch_summary.json.tmp-12-a1b2c3",
            out / "trajectories" / "line~1" / ".move001_box001_loaded.csv.tmp-12-a1b2c3"]
    for p in user + ours:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    store = BatchStore(out, "f")
    store.open("0")
    store.close()
    assert [p.exists() for p in user] == [True] * 3 and [p.exists() for p in ours] == [False] * 3


def test_a_cell_whose_moves_all_failed_is_not_summarised_as_within_its_limits():
    """batch_summary.json gave a cell whose every move failed within_limits true, total 0.0 s and worst ratio 0.0:
    read by a script, a good cell. Nothing was planned, so there is nothing to judge: null."""
    from types import SimpleNamespace
    from scenarios.batch.summary import summarise
    ok = dict(cell="good", move="1", box="1", kind="loaded", status="ok", duration_s="1.5", worst_ratio="0.9",
              within_limits="true", limit_ratio="0.9", limit_problems="", error="")
    bad = dict(cell="bad", move="1", box="1", kind="loaded", status="failed", duration_s="", worst_ratio="",
               error="unreachable")
    out = summarise([ok, bad, dict(bad, move="2", kind="return")], SimpleNamespace(cells=()), {}, "f")
    assert out["cells"]["bad"]["failed"] == 2
    assert out["cells"]["bad"]["within_limits"] is None and out["cells"]["bad"]["total_time_s"] is None
    assert out["cells"]["bad"]["worst_ratio"] is None
    assert out["cells"]["good"]["within_limits"] is True and out["cells"]["good"]["total_time_s"] == 1.5


def test_sweep_variants_of_one_robot_and_pick_solve_the_pick_posture_once(tmp_path, monkeypatch):
    """Every variant's pick posture was solved again (~37 ms a variant: 38 s of IK before the first move of a
    1000-variant sweep) though the box masses swept do not change it. Now it is solved once, and every
    variant's posture, pick pose and grasp turn equal a fresh solve of that variant's cell to the bit."""
    from scenarios.palletizing import moves
    calls = []
    real = moves._solve_pose
    monkeypatch.setattr(moves, "_solve_pose", lambda *a, **k: calls.append(1) or real(*a, **k))
    loaded, failed = load_cells(read_source(write_manifest(tmp_path, boxes="[1]", masses="[2.0, 3.0, 4.0, 5.0]")))
    assert len(loaded) == 4 and failed == [] and len(calls) == 1
    cs, cell, _ = loaded[-1]
    fresh = palletizing.cell_from_document(cs.document, cs.source, cs.base_dir, cs.default_name, check_reach=False)
    palletizing.pick_posture(fresh)
    for k, (_, c, _) in enumerate(loaded):
        assert np.array_equal(c.q_pick, fresh.q_pick) and np.array_equal(c.pick, fresh.pick)
        assert c.grasp_turn == fresh.grasp_turn and (k == 0 or c.q_pick is not loaded[0][1].q_pick)


def test_a_batch_resumed_by_another_version_says_so(tmp_path):
    """The fingerprint holds the inputs and options, not the tool's version: a batch resumed after an upgrade
    appended the new version's moves to the old one's without a word (the batch audit). It now warns, naming both."""
    import warnings
    from scenarios.batch.store import BatchStore
    out = tmp_path / "out"
    store = BatchStore(out, "f")
    store.open("1.0")
    store.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for version in ("1.0", "1.1"):
            store = BatchStore(out, "f")
            store.open(version)
            store.close()
    notes = [str(w.message) for w in caught]
    assert len(notes) == 1 and "begun by toppra-app 1.0 with 1.1" in notes[0] and "\n" not in notes[0]
