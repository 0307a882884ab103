"""Run the commands the docs show (`docs_check.commands`, not the usage lines), each in a fresh scratch
directory holding the files they name: WAYPOINTS.csv (the iiwa 7's pick-place waypoints), my_cell.toml and
cells/ (the built-in cell), line3.toml (batch.md's manifest, over line1.toml and line2.toml: the built-in
cell with one box a layer), profile.toml (a [controller] table), path/to/robot.urdf (an arm with a joint
`finger_joint`). `--scheduler` needs a cluster and `bench` runs for minutes: those are only started (the
option is checked by `docs_check`); every other command must exit with 0 (`batch` too: batch.md's example
sweep plans every move; its earlier `cell.robot` sweep put the UR5e at the iiwa 7's pallet, where it collides)."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.cases import BENCH_PATHS
from benchmarks.docs_extract import ROOT, commands, fenced_blocks, page_text

QUICK = ("plan", "draw")         # sub-commands of a few seconds (the test runs these)
START_ONLY_SECONDS = 20.0        # `bench`, `--scheduler`: started, and stopped after this if still running


def _small_cell(text: str) -> str:
    return text.replace("rows = 2 ", "rows = 1 ").replace("columns = 2 ", "columns = 1 ")


ROBOT_URDF = """<robot name="arm">
  <link name="base"/>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="finger"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" velocity="2" effort="50"/></joint>
  <joint name="finger_joint" type="prismatic"><parent link="l1"/><child link="finger"/><origin xyz="0.3 0 0"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.04" velocity="0.1" effort="20"/></joint>
</robot>
"""


def prepare(directory: Path) -> None:
    """The files the docs' commands name, in `directory`."""
    rows = BENCH_PATHS["iiwa7"]["pick-place"]
    (directory / "WAYPOINTS.csv").write_text("".join(",".join(f"{v:g}" for v in r) + "\n" for r in rows))
    cell = (ROOT / "scenarios" / "default_cell.toml").read_text(encoding="utf-8")
    (directory / "my_cell.toml").write_text(cell)
    (directory / "cells").mkdir()
    (directory / "cells" / "line1.toml").write_text(_small_cell(cell))
    for name in ("line1.toml", "line2.toml"):
        (directory / name).write_text(_small_cell(cell))
    manifest = next(b.code for b in fenced_blocks(page_text("docs/batch.md")) if b.lang == "toml")
    (directory / "line3.toml").write_text(manifest)
    (directory / "profile.toml").write_text("[controller]\ntorque_rate_max = 1000.0\ntorque_headroom = 0.9\n")
    (directory / "path" / "to").mkdir(parents=True)
    (directory / "path" / "to" / "robot.urdf").write_text(ROBOT_URDF)


def run_command(text: str, directory: Path, timeout: float = 900.0) -> str | None:
    """Run `toppra-app ...` in `directory`; None when it ends with 0 (or, start-only, still runs after
    START_ONLY_SECONDS without an error), else what went wrong."""
    argv = [sys.executable, "-m", "toppra_app.cli"] + shlex.split(text)[1:]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start_only = " bench" in text or "--scheduler" in text
    proc = subprocess.Popen(argv, cwd=directory, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=START_ONLY_SECONDS if start_only else timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        out, err = proc.communicate()
        return None if start_only else f"still running after {timeout:.0f} s"
    lines = err.strip().splitlines()
    if "--scheduler" in text and proc.returncode == 2 and len(lines) == 1 and "--scheduler" in lines[0]:
        return None             # no cluster there: one line naming it, as batch.md says
    if proc.returncode != 0:
        return f"exit code {proc.returncode}: {(lines or ['(no message)'])[-1]}"
    return None


def run_commands(page: str, scratch: Path, only=None) -> list[str]:
    """Every command of `page` (those whose sub-command is in `only`, if given), each in a fresh directory."""
    problems = []
    for cmd in commands(page):
        sub = cmd.text.split()[1]
        if cmd.synopsis or (only is not None and sub not in only):
            continue
        directory = Path(tempfile.mkdtemp(prefix="cmd-", dir=scratch))
        prepare(directory)
        try:
            why = run_command(cmd.text, directory)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        if why:
            problems.append(f"{page}:{cmd.line}: `{cmd.text}`: {why}")
    return problems
