"""The user docs work as written (`benchmarks/docs_check.py`): every Python block of README.md and
docs/*.md runs in order within its page and its comments' claims hold, every command line shown parses
(its sub-command, options and choices exist), the `plan` and `draw` commands run, and every file, module,
attribute, test and section the docs name exists. The slow commands (palletize, payload-sweep, batch) run
with `python -m benchmarks.docs_check --run`."""

from __future__ import annotations

import textwrap

import pytest

from fixtures import docs_check, docs_commands

PAGES = docs_check.PAGES


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("page", PAGES)
def test_python_examples_run_as_written(page, tmp_path):
    assert docs_check.check_python(page, tmp_path) == []


@pytest.mark.parametrize("page", PAGES)
def test_commands_parse_and_references_exist(page):
    from benchmarks import docs_pages
    assert docs_check.check_commands(page) + docs_check.check_references(page, docs_pages.HISTORICAL) == []


def test_plan_and_draw_commands_run(tmp_path):
    problems = []
    for page in PAGES:
        problems += docs_commands.run_commands(page, tmp_path, only=docs_commands.QUICK)
    assert problems == []


def test_the_checker_finds_what_is_wrong(tmp_path):
    """A page with a failing call, a wrong keyword in a signature line, a wrong shape comment, an unknown
    option, a missing file, module attribute, class attribute, test and section: each is one problem."""
    page = tmp_path / "bad.md"
    page.write_text(textwrap.dedent('''\
        # Bad page

        ```python
        import numpy as np
        x = np.zeros((2, 3))          # (3, 2)
        np.linalg.norm(x, nope=1)
        y = np.linspace(0, 1, num=..., endpoints=True)
        ```

            toppra-app plan WAYPOINTS.csv --out DIR --no-such-option
            toppra-app bench [planner|nonsense]

        See `toppra_app/no_such_module.py`, `grid.NO_SUCH_CONSTANT`, `test_no_such_test`, `RateLimits.no_such`,
        [planner.md](docs/planner.md#no-such-section) and docs/planner.md "No such section".
        '''), encoding="utf-8")
    python = docs_check.check_python(str(page), tmp_path)
    assert len(python) == 3, python
    assert "shape (2, 3)" in python[0] and "nope" in python[1] and "endpoints" in python[2]
    commands = docs_check.check_commands(str(page))
    assert len(commands) == 2 and "--no-such-option" in commands[0] and "'nonsense'" in commands[1], commands
    refs = docs_check.check_references(str(page))
    assert len(refs) == 6, refs


def test_plan_help_names_the_planners_default_grid():
    """`toppra-app plan --help` said the adaptive grid was 200 intervals (the θ̈-constant size); the planner's
    default is grid.LINEAR_INTERVALS (docs/planner.md "Grid" step 2)."""
    from toppra_app.planning import grid
    _, subparsers = docs_check._subparsers()
    help_text = " ".join(subparsers["plan"]._option_string_actions["--grid"].help.split())
    assert f"{grid.LINEAR_INTERVALS} intervals" in help_text and "200" not in help_text
