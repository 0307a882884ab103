"""`toppra-app plan`: outputs written whole, CSV errors on one line naming file, row and field."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from benchmarks.cases import BENCH_PATHS
from fixtures import default_sigint
from toppra_app.cli import main


def write_csv(path, rows, header=None):
    with open(path, "w") as fh:
        fh.write("# test waypoints\n")
        if header:
            fh.write(",".join(header) + "\n")
        for r in rows:
            fh.write(",".join(str(v) for v in r) + "\n")
    return str(path)


def test_plan_writes_summary_trajectory_and_plots(tmp_path, capsys):
    W = BENCH_PATHS["panda"]["pick-place"]
    csv_file = write_csv(tmp_path / "wp.csv", W, header=[f"j{k}" for k in range(1, 8)])
    out = tmp_path / "result"
    rc = main(["plan", csv_file, "--robot", "panda", "--out", str(out), "--payload-mass", "1.5",
               "--payload-com", "0", "0", "0.05"])
    assert rc == 0
    files = sorted(os.listdir(out))
    assert files == sorted(["summary.json", "trajectory.csv", "report.html", "torques.png", "velocities.png",
                            "accelerations.png", "phase_plane.png", ".toppra-app-manifest.json"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["robot"] == "panda" and summary["payload_mass"] == 1.5
    assert summary["worst_ratio"] <= 1.001 and summary["duration"] > 0
    table = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1)
    header = (out / "trajectory.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "t" and len(header) == 1 + 4 * 7 and table.shape[1] == len(header)
    assert np.allclose(np.diff(table[:-1, 0]), 1e-3, atol=1e-9)
    assert table[-1, 0] == pytest.approx(summary["duration"], abs=1e-6)
    np.testing.assert_allclose(table[0, 1:8], W[0], atol=1e-8)
    np.testing.assert_allclose(table[-1, 1:8], W[-1], atol=1e-6)
    for png in ("torques.png", "phase_plane.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "duration" in capsys.readouterr().out
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".result")]     # no temporary leftovers


def test_plan_replaces_its_own_output_directory_only(tmp_path):
    csv_file = write_csv(tmp_path / "wp.csv", BENCH_PATHS["iiwa7"]["straight"])
    out = tmp_path / "out"
    assert main(["plan", csv_file, "--out", str(out), "--no-plots", "--no-report"]) == 0
    (out / "summary.json").write_text("stale")                   # ours (in the manifest): replaced
    assert main(["plan", csv_file, "--out", str(out), "--no-plots", "--no-report", "--grid", "150", "--sd-end", "0.2"]) == 0
    assert sorted(os.listdir(out)) == [".toppra-app-manifest.json", "summary.json", "trajectory.csv"]
    (out / "stale.txt").write_text("old")                        # the user's: the directory is refused
    assert main(["plan", csv_file, "--out", str(out), "--no-plots"]) == 2
    assert (out / "stale.txt").read_text() == "old"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sd_end"] == 0.2 and summary["grid_points"] >= 151


@pytest.mark.parametrize("content, message", [
    ("q1,q2,q3,q4,q5,q6,q7\n0,0,0,-1.5,0,1.5,0\n0.5,0,abc,-1.5,0,1.5,0\n", "row 3, field 'q3': 'abc' is not a plain number"),
    ("0,0,0,-1.5,0,1.5,0\n0.5,0,,-1.5,0,1.5,0\n", "row 2, field 'q3': is empty"),
    ("0,0,0,-1.5,0,1.5,0\n0.5,0,0,-1.5,0,1.5\n", "row 2: expected 7 fields, got 6"),
    ("0,0,0,-1.5,0,1.5\n0.5,0,0,-1.5,0,1.5\n", "6 joint columns but the robot has 7 joints"),
    ("0,0,0,-1.5,0,1.5,0\n", "need at least 2 waypoints"),
    ("s,a,b,c,d,e,f,g\n0,0,0,0,-1.5,0,1.5,0\n0,0.5,0,0,-1.5,0,1.5,0\n", "row 3, field 's': the path parameter must increase"),
    ("0,0,0,-1.5,0,1.5,0\n0,nan,0,-1.5,0,1.5,0\n", "row 2, field 'q2'"),
    # issue 11: a typo or a unit in the FIRST row used to make it a header (one waypoint silently dropped)
    ("abc,0,0,-1.5,0,1.5,0\n0.5,0,0,-1.5,0,1.5,0\n0.6,0,0,-1.5,0,1.5,0\n", "row 1, field 'q1': 'abc' is not a plain"),
    ("0.4rad,0,0,-1.5,0,1.5,0\n0.5,0,0,-1.5,0,1.5,0\n0.6,0,0,-1.5,0,1.5,0\n", "'0.4rad' is not a plain number"),
    ("0.1_5,0,0,-1.5,0,1.5,0\n0.5,0,0,-1.5,0,1.5,0\n", "'0.1_5' is not a plain number"),
    ("0x1A,0,0,-1.5,0,1.5,0\n0.5,0,0,-1.5,0,1.5,0\n", "'0x1A' is not a plain number"),
    # full-width and Arabic-Indic digits: float() reads them, \d in the number pattern matched them
    ("\uff10.\uff15,0,0,-1.5,0,1.5,0\n0.5,0,0,-1.5,0,1.5,0\n", "'\uff10.\uff15' is not a plain number"),
    ("0,0,0,-1.5,0,1.5,0\n\u0660.\u0665,0,0,-1.5,0,1.5,0\n", "row 2, field 'q1'"),
    ("0,0,0,-1.5,0,1.5,0\n0.5,0,inf,-1.5,0,1.5,0\n", "'inf' is not a plain number"),
    ("a,b,c,d,e,f,a\n0,0,0,-1.5,0,1.5,0\n0.5,0,0,-1.5,0,1.5,0\n", "the column name 'a' appears twice"),
    ("a,b,c,d,e,f,1 g\n0,0,0,-1.5,0,1.5,0\n0.5,0,0,-1.5,0,1.5,0\n", "row 1: '1 g' is neither a number nor a column name"),
])
def test_csv_errors_are_one_line(tmp_path, capsys, content, message):
    """Each bad file: exit 2, one line naming the file, the row and the field."""
    f = tmp_path / "bad.csv"
    f.write_text(content)
    out = tmp_path / "out"
    rc = main(["plan", str(f), "--robot", "panda", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1, err
    assert str(f) in err and message in err, err
    assert not out.exists() and not [p for p in os.listdir(tmp_path) if p.startswith(".out")]


def test_missing_file_and_infeasible_path(tmp_path, capsys):
    assert main(["plan", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o")]) == 2
    assert "nope.csv: no such file" in capsys.readouterr().err
    csv_file = write_csv(tmp_path / "wp.csv", BENCH_PATHS["iiwa7"]["straight"])
    assert main(["plan", csv_file, "--out", str(tmp_path / "o"), "--sd-start", "50"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toppra-app plan: error: --sd-start 50 is too fast") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
    assert main(["plan", csv_file, "--out", str(tmp_path / "o"), "--payload-mass", "-1"]) == 2
    assert "--payload-mass" in capsys.readouterr().err


def test_a_value_too_large_is_one_line_naming_the_row_and_field(tmp_path, capsys):
    """1e308 in a CSV: two numpy overflow warnings and a message naming neither the file nor the row (a hunt)."""
    (tmp_path / "huge.csv").write_text("0,0,0,0,0,0,0\n1e308,0,0,0,0,0,0\n")
    assert main(["plan", str(tmp_path / "huge.csv"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "huge.csv: row 2, field 'q1': '1e308' is too large" in err
    from toppra_app.waypoints import read_waypoints          # a path parameter may span far more (up to 1e13)
    (tmp_path / "s.csv").write_text("s,q1,q2\n0,0,0\n1e9,0.5,0.2\n")
    assert read_waypoints(str(tmp_path / "s.csv"))[1][-1] == 1e9


def test_a_waypoint_outside_a_joints_range_names_the_file_the_waypoint_and_the_joint(tmp_path, capsys):
    """A file in degrees read as radians: the planner said only "path leaves the position range of joint …"
    (a hunt); now the file, the waypoint and the joint, with a hint."""
    csv_file = write_csv(tmp_path / "deg.csv", [[0, 30, 0, -70, 0, 60, 0], [20, 40, 10, -50, 5, 70, 10]])
    assert main(["plan", csv_file, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "deg.csv: waypoint 1: joint iiwa_joint_2 = 30 rad is outside its range" in err and "--degrees" in err
    assert main(["plan", csv_file, "--out", str(tmp_path / "o"), "--degrees", "--no-plots", "--no-report"]) == 0


@pytest.mark.parametrize("raw, rows", [
    (b"\xef\xbb\xbfq1,q2,q3,q4,q5,q6,q7\n0,0,0,-1.5,0,1.5,0\n0.5,0,0,-1.5,0,1.5,0\n", 2),   # Excel "CSV UTF-8"
    (b"\xef\xbb\xbf0,0,0,-1.5,0,1.5,0\n0.5,0,0,-1.5,0,1.5,0\n0.6,0,0,-1.5,0,1.5,0\n", 3),   # BOM, no header
    (b"# comment\n\nj1,j2,j3,j4,j5,j6,j7\r\n0,0,0,-1.5,0,1.5,0\r\n+.5,0,0,-1.5,0,1.5,1e-1\r\n", 2),
])
def test_csv_that_is_fine(tmp_path, raw, rows):
    from toppra_app.waypoints import read_waypoints
    f = tmp_path / "ok.csv"
    f.write_bytes(raw)
    W, s, names = read_waypoints(str(f), 7)
    assert W.shape == (rows, 7) and s is None and len(names) == 7


@pytest.mark.parametrize("raw, message", [
    ("0,0,0,-1.5,0,1.5,0\n0.5,0,0,-1.5,0,1.5,0\n".encode("utf-16"), "UTF-16"),
    (b"\x00\x01\x02binary", "binary data"),
    (b"0,0,0,-1.5,0,1.5,0\n0.5,\xe9,0,-1.5,0,1.5,0\n", "row 2: not UTF-8"),
])
def test_csv_encodings_that_are_refused(tmp_path, capsys, raw, message):
    f = tmp_path / "bad.csv"
    f.write_bytes(raw)
    assert main(["plan", str(f), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("make, message", [
    (lambda d: d, "is a directory"),
    (lambda d: "/dev/zero", "not a regular file"),
])
def test_csv_that_is_not_a_file(tmp_path, capsys, make, message):
    assert main(["plan", str(make(tmp_path)), "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--dt", "1e-9"], "--dt"), (["--dt", "nan"], "--dt"), (["--sd-end", "1e300"], "--sd-end: must be a finite number"),
    (["--grid", "10000000"], "grid"), (["--grid", "nan"], "grid"),
])
def test_absurd_sizes_are_refused_at_once(tmp_path, capsys, args, message):
    f = write_csv(tmp_path / "wp.csv", BENCH_PATHS["iiwa7"]["straight"])
    import time
    t0 = time.perf_counter()
    assert main(["plan", f, "--out", str(tmp_path / "out"), "--no-plots", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and time.perf_counter() - t0 < 10


def test_a_payload_over_the_rating_names_the_command_line_option(tmp_path, capsys):
    """It said "pass allow_overload=True to plan anyway", the library's keyword, at the command line."""
    f = write_csv(tmp_path / "wp.csv", BENCH_PATHS["iiwa7"]["straight"])
    out = tmp_path / "out"
    assert main(["plan", f, "--out", str(out), "--payload-mass", "50"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--payload-mass: 50 kg exceeds the rated payload 7 kg" in err and "(--allow-overload to plan anyway)" in err
    assert "allow_overload=True" not in err and len(err.splitlines()) == 1 and not out.exists()
    assert main(["plan", f, "--out", str(out), "--payload-mass", "7.5", "--allow-overload", "--no-plots",
                 "--no-report"]) == 0


@pytest.mark.parametrize("args, message", [
    (["--dt", "abc"], "argument --dt: invalid float value"), (["--waypoint-tolerance", "x"], "--waypoint-tolerance"),
    (["--mimic", "sometimes"], "argument --mimic: invalid choice"), ([], "the following arguments are required"),
])
def test_malformed_arguments_are_one_line(tmp_path, capsys, args, message):
    """argparse's own errors (a number that is not one, a bad choice, a missing argument) in one line naming
    the argument, not after its whole usage text."""
    f = write_csv(tmp_path / "wp.csv", BENCH_PATHS["iiwa7"]["straight"])
    with pytest.raises(SystemExit) as exc:
        main(["plan", f, *args] if args else ["plan"])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and message in err and len(err.splitlines()) == 1


def test_a_solver_failure_in_any_command_is_one_line(monkeypatch, capsys):
    """`plan` caught a failed solver chain; `palletize` (a cell with energy_weight = 1e300, a hunt) ended in a
    SolverError traceback. Every command now ends in one line and exit code 3."""
    from toppra_app.commands import draw
    from toppra_app.socp.solvers import SolverError

    def failing(args):
        raise SolverError("the time-optimal problem could not be solved (CLARABEL: failed; SCS: failed)")
    monkeypatch.setattr(draw, "run", failing)
    assert main(["draw", "iiwa7"]) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("toppra-app draw: error: the time-optimal problem")


def test_an_interrupt_while_the_command_starts_is_one_line():
    """Ctrl-C while the command's modules load (before `main`): one line and status 130, not the traceback of an
    import (a hunt hit it 20–50 ms after the start). Imported as a library the handler is not installed, and `main`
    hands SIGINT back to KeyboardInterrupt (its own one-line handling)."""
    code = ("import os, signal, sys, time; sys.argv[0] = '/venv/bin/toppra-app'; import toppra_app.cli; "
            "os.kill(os.getpid(), signal.SIGINT); time.sleep(5); print('not stopped')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         preexec_fn=default_sigint)
    assert run.returncode == 130 and run.stderr == "toppra-app: interrupted; nothing was written\n", run
    assert "not stopped" not in run.stdout
    code = "\n".join(["import contextlib, io, signal, sys", "import toppra_app.cli as cli",
                      "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)",
                      "signal.signal(signal.SIGINT, cli._interrupted_while_starting)",
                      "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):",
                      "    cli.main(['--help'])",
                      "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"])
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         preexec_fn=default_sigint)
    assert run.stdout == "True\nTrue\n", run


IIWA_JOINTS = [f"iiwa_joint_{k}" for k in range(1, 8)]
IIWA_ROWS = [[0, 0.3, 0, -1.2, 0, 0.8, 0], [1.2, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5]]


def test_a_header_naming_the_joints_in_another_order_is_applied_by_name(tmp_path):
    """A header's names were read and then ignored: a header naming the joints in another order was applied in the
    robot's order (the wrong joints). The columns are now matched by name; the same motion as without a header."""
    order = [2, 0, 6, 1, 5, 3, 4]
    permuted = write_csv(tmp_path / "permuted.csv", [[row[k] for k in order] for row in IIWA_ROWS],
                         header=[IIWA_JOINTS[k] for k in order])
    plain = write_csv(tmp_path / "plain.csv", IIWA_ROWS)
    for name, f in (("p", permuted), ("n", plain)):
        assert main(["plan", f, "--out", str(tmp_path / name), "--no-plots", "--no-report"]) == 0
    a, b = ((tmp_path / d / "trajectory.csv").read_text() for d in ("p", "n"))
    assert a == b
    from toppra_app.waypoints import read_waypoints
    W, _, names = read_waypoints(permuted, 7, joint_names=IIWA_JOINTS)
    assert names == IIWA_JOINTS and np.array_equal(W, np.array(IIWA_ROWS, float))


@pytest.mark.parametrize("header, message", [
    (["bogus_a", "bogus_b", "c", "d", "e", "f", "g"], "columns 'bogus_a', 'bogus_b', 'c', 'd', 'e', 'f', 'g' are not "
                                                      "joints of the robot; name the columns by the robot's joints "
                                                      "('iiwa_joint_1', "),
    (IIWA_JOINTS[:6] + ["iiwa_joint_8"], "column 'iiwa_joint_8' is not a joint of the robot; no column for "
                                         "'iiwa_joint_7'; "),
    (["q2", "q1", "q3", "q4", "q5", "q6", "q7"], "the generic column names q1 … q7 must be in their order"),
    (["t"] + IIWA_JOINTS[:6], "column 't' is not a joint"),
])
def test_a_header_that_does_not_name_the_joints_is_refused(tmp_path, capsys, header, message):
    f = write_csv(tmp_path / "named.csv", IIWA_ROWS, header=header)
    assert main(["plan", f, "--out", str(tmp_path / "out"), "--no-plots", "--no-report"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"named.csv: row 2: {message}" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("header", [[f"q{k}" for k in range(1, 8)], [f"J{k}" for k in range(1, 8)],
                                    [j.upper() for j in IIWA_JOINTS], ["s"] + IIWA_JOINTS[::-1]])
def test_generic_headers_and_the_path_parameter_still_plan(tmp_path, header):
    rows = [([k] if header[0] == "s" else []) + (row[::-1] if header[0] == "s" else row) for k, row in enumerate(IIWA_ROWS)]
    f = write_csv(tmp_path / "wp.csv", rows, header=header)
    assert main(["plan", f, "--out", str(tmp_path / "out"), "--no-plots", "--no-report"]) == 0
    first = (tmp_path / "out" / "trajectory.csv").read_text().splitlines()[1].split(",")
    assert [float(v) for v in first[1:8]] == IIWA_ROWS[0]


def test_a_waypoint_on_a_joint_limit_written_to_8_digits_plans_as_in_the_library(tmp_path, capsys):
    """170° written as 2.96705973 rad is 1.6e-9 above the iiwa's limit (2.9670597284): the library plans it (its
    position check allows 1e-6 of the range), the command line refused it as "2.96706 rad is outside its range
    [-2.96706, 2.96706]". A waypoint clearly outside is still refused, with digits that show by how much."""
    on = write_csv(tmp_path / "on.csv", [[0, 0.3, 0, -1.2, 0, 0.8, 0], [2.96705973, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5]])
    assert main(["plan", on, "--out", str(tmp_path / "o"), "--no-plots", "--no-report"]) == 0
    out = write_csv(tmp_path / "out.csv", [[0, 0.3, 0, -1.2, 0, 0.8, 0], [2.9671, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5]])
    capsys.readouterr()
    assert main(["plan", out, "--out", str(tmp_path / "o2")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "waypoint 2: joint iiwa_joint_1 = 2.9671 rad is outside its range [-2.96705973, 2.96705973]" in err
