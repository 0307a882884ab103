"""`toppra-app batch` as a user planning a production day meets it (an audit): two runs into one directory, a
Ctrl-C while the local workers start, schedulers that are not Dask schedulers, a task whose workers die."""

from __future__ import annotations

import csv
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from scenarios.batch.manifest import read_source
from scenarios.batch.store import BatchStore
from toppra_app.cli import main

from test_batch import write_manifest


def test_a_second_batch_into_the_same_directory_is_refused(tmp_path, capsys):
    """The same command started again while the first still ran appended the same moves again (52 rows for
    32 moves; batch_summary.json then counted the pallet times twice) and could remove the first's temporaries."""
    manifest = write_manifest(tmp_path, boxes="[1]", masses="[2.0]")
    out = tmp_path / "out"
    first = BatchStore(out, read_source(manifest).fingerprint(dt=1e-3, trajectories=True))
    first.open("0")
    try:
        t0 = time.perf_counter()
        assert main(["batch", str(manifest), "--out", str(out), "--serial"]) == 2
        assert time.perf_counter() - t0 < 5
    finally:
        first.close()
    err = capsys.readouterr().err.strip()
    assert "another toppra-app batch is writing into it" in err and "\n" not in err
    with open(out / "moves.csv", newline="") as fh:
        assert list(csv.DictReader(fh)) == []
    assert main(["batch", str(manifest), "--out", str(out), "--serial", "--no-report"]) == 0   # then it resumes
