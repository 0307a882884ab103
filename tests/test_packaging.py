"""What a packager and a new user get: the sdist and the wheel built from this tree (setuptools' own build
backend, no network), `toppra-app --version` and `python -m toppra_app`.

The oracle of the sdist is git: every file it tracks. The wheel's is the source tree: every file of the four
packages that is not Python source (the built-in cell, the benchmark robots) is data the code reads at run time."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from fixtures import default_sigint

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("dynamics", "toppra_app", "scenarios", "benchmarks")


def _tracked() -> list[str]:
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout (an unpacked sdist) or no git: no list of tracked files to compare with")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return sorted(p for p in out.decode().split("\0") if p and (ROOT / p).is_file())


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(tracked files, sdist names, wheel names, unpacked wheel), built from a copy of the tracked files (no
    build/ or egg-info in the checkout) by the installed setuptools: the sdist as pip or `python -m build` would
    call it; the wheel's files as its bdist_wheel gathers them (build_py, egg_info's metadata: the entry points),
    since setuptools before 70.1 has no bdist_wheel without the `wheel` package."""
    tracked = _tracked()
    src, dist = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("dist")
    for name in tracked:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    site, meta = dist / "site", tmp_path_factory.mktemp("meta")
    runs = [subprocess.run([sys.executable, "-c", code, *args], cwd=src, capture_output=True, text=True, timeout=300)
            for code, args in (("import sys, setuptools.build_meta as b; print(b.build_sdist(sys.argv[1]))", [dist]),
                               ("import setuptools; setuptools.setup()",
                                ["-q", "egg_info", "--egg-base", meta, "build_py", "--build-lib", site]))]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    sdist_name = runs[0].stdout.split()[-1]
    with tarfile.open(dist / sdist_name) as tar:
        top = sdist_name.removesuffix(".tar.gz") + "/"
        sdist = {m.name.removeprefix(top) for m in tar.getmembers() if m.isfile()}
    wheel = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    for info in meta.glob("*.egg-info"):
        shutil.copytree(info, site / info.name)
    return tracked, sdist, wheel, site


def test_the_sdist_holds_every_tracked_file(built):
    """The sdist held the packages and tests/test_*.py only: not tests/fixtures.py (every test imports it),
    tests/data/, docs/ (the README's links, tests/test_docs_examples.py) nor .ci/run, so a packager's test
    run from it failed at collection. MANIFEST.in now adds them."""
    tracked, sdist, _, _ = built
    missing = sorted(set(tracked) - sdist)
    assert not missing, f"{len(missing)} tracked files not in the sdist: {missing[:10]}"
    assert not [n for n in sdist if "__pycache__" in n or n.endswith(".pyc")]


def test_the_wheel_holds_the_packages_and_their_data_only(built):
    """Every file of the four packages (modules, the built-in cell, the benchmark robots) is in the wheel, and
    nothing else at its top level: no tests/ or docs/."""
    tracked, _, wheel, _ = built
    wanted = {n for n in tracked if n.split("/")[0] in PACKAGES}
    assert sorted(wanted - wheel) == []
    assert {n.split("/")[0] for n in wheel} == set(PACKAGES)


def test_the_demo_runs_from_the_wheels_files(built, tmp_path):
    """`python -m toppra_app palletize` from the wheel's files alone (its entry points, its default_cell.toml),
    in a directory outside the checkout."""
    *_, site = built
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-m", "toppra_app", "palletize", "--boxes", "1", "--no-plots",
                          "--no-report", "--no-compare"], cwd=work, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert f"({site / 'scenarios' / 'default_cell.toml'})" in run.stdout
    assert (work / "palletize_out" / "summary.json").is_file()


def test_version_and_python_m_toppra_app():
    """`toppra-app --version` ended with "the following arguments are required: COMMAND" (code 2), and
    `python -m toppra_app` with "No module named toppra_app.__main__" (code 1). Now the installed
    distribution's version, code 0, and the same command as `toppra-app`."""
    expected = importlib.metadata.version("toppra-app")
    for args in (["-m", "toppra_app", "--version"], ["-m", "toppra_app.cli", "--version"]):
        run = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert (run.returncode, run.stdout, run.stderr) == (0, f"toppra-app {expected}\n", ""), run
    run = subprocess.run([sys.executable, "-m", "toppra_app"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 2 and run.stderr.startswith("toppra-app: error: ") and run.stderr.count("\n") == 1


def test_python_m_toppra_app_is_one_line_on_an_early_interrupt():
    """Run as `python -m toppra_app` (its `__main__` module's spec names it), a Ctrl-C while the modules load is
    one line and status 130, as for `toppra-app` (tests/test_planner_cli.py)."""
    code = ("import importlib.util, os, signal, sys, time, types; main = types.ModuleType('__main__'); "
            "main.__spec__ = importlib.util.find_spec('toppra_app.__main__'); sys.modules['__main__'] = main; "
            "import toppra_app.cli; os.kill(os.getpid(), signal.SIGINT); time.sleep(5); print('not stopped')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         preexec_fn=default_sigint)
    assert run.returncode == 130 and run.stderr == "toppra-app: interrupted; nothing was written\n", run


def test_a_missing_extra_names_it_by_the_distribution(monkeypatch, capsys):
    """`bench` without the test extras said `pip install -e ".[test]"`, which only works in a checkout: after
    `pip install toppra-app` (a wheel) it ends in "does not appear to be a Python project". Now the extra by the
    distribution's name, which pip resolves against the installed toppra-app in both cases (batch's Dask:
    tests/test_batch.py)."""
    from toppra_app.cli import main
    monkeypatch.setitem(sys.modules, "pinocchio", None)                   # as if not installed
    assert main(["bench", "dynamics", "--quick"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "pinocchio is missing" in err
    assert 'pip install "toppra-app[test]"' in err and "-e" not in err.split("pip install")[1]


def test_help_lists_the_exit_codes_of_docs_safety(capsys):
    """`toppra-app --help` began "Command line: ``toppra-app <command> ...``." (the module's docstring, reST
    quotes and all) and said nothing of the exit codes scripts test; now what the tool does and, row for row,
    the codes of docs/safety.md's table."""
    import re

    from toppra_app.cli import main
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "``" not in out and "Minimum-time robot motions" in out
    page = (ROOT / "docs" / "safety.md").read_text(encoding="utf-8")
    table = page.split("The exit codes of the commands:")[1].strip().split("\n\n")[0].splitlines()[2:]
    documented = [re.findall(r"\d+", line.split("|")[1]) for line in table]
    listed = [re.findall(r"\d+", line[:14]) for line in out.split("exit codes")[1].splitlines()[1:]]
    assert documented == listed and len(listed) == 6


def test_every_command_and_option_says_what_it_is_in_its_help():
    """`toppra-app bench --help` had no description and its WHAT no help, `draw --title` none either: now every
    sub-command (built-in and entry points) has a description and every argument a help text."""
    import argparse

    from toppra_app.cli import build_parser, command_modules
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(command_modules())
    for name, parser in sub.choices.items():
        assert parser.description, name
        silent = [a.dest for a in parser._actions if not a.help]
        assert silent == [], f"toppra-app {name}: {silent} without help"
