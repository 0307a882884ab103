"""Do the user docs work as written? Every Python block of README.md and docs/*.md run in order within its
page, every command line parsed (and, with ``--run``, run in a scratch directory), every file, module, test
and section the docs name looked up.

    python -m benchmarks.docs_check            # python blocks, command lines parsed, cross-references (~30 s)
    python -m benchmarks.docs_check --run      # also runs every command shown (palletize, batch, ...: minutes)

`tests/test_docs_examples.py` runs the quick part. A Python block runs after the page's prelude
(`docs_pages.PRELUDES`: the names a reader has by then — a robot, a path — and the files it names, from
example-robot-data); a statement with ``...`` as an argument is a signature, not code: its call is bound to
the function's signature instead (the argument names must exist). A comment that starts with a shape,
``# (100, 12, 12)``, is compared with the assigned value's shape; the page's further claims are asserted in
`docs_pages.CHECKS`. Each check returns a list of problems (one line each), empty when the docs hold."""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import inspect
import io
import os
import re
import shlex
import sys
import traceback
from pathlib import Path

from benchmarks import docs_pages
from benchmarks.docs_extract import (PAGES, Block, Command, commands, fenced_blocks, module_commands,  # noqa: F401
                                     page_text, working_directory)
from benchmarks.docs_refs import check_references  # noqa: F401


# ------------------------------------------------------------------------------------------ Python blocks
def _has_ellipsis(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(node))


def _bind_calls(stmt: ast.stmt, ns: dict) -> list[str]:
    """A signature line (`f(a, b, key=...)`): every call's function must exist and take those arguments."""
    problems = []
    for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
        name = ast.unparse(call.func)
        try:
            func = eval(compile(ast.Expression(call.func), "<doc>", "eval"), ns)
        except Exception as exc:
            problems.append(f"`{name}` does not exist ({type(exc).__name__}: {exc})")
            continue
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            continue
        if not call.keywords and [ast.unparse(a) for a in call.args] == ["..."]:
            continue                # `f(...)`: any arguments
        try:
            inspect.signature(func).bind_partial(*[None] * len(call.args), **{k.arg: None for k in call.keywords})
        except TypeError as exc:
            problems.append(f"`{name}(...)`: {exc}")
        except ValueError:          # no signature (a builtin)
            pass
    return problems


SHAPE_COMMENT = re.compile(r"#\s*\((\d+(?:,\s*\d+)*),?\)")


def _shape_claim(stmt: ast.stmt, lines: list[str], ns: dict) -> str | None:
    """`X = ...  # (100, 12, 12)`: the shape X has."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    line = lines[stmt.end_lineno - 1]
    m = SHAPE_COMMENT.match(line[line.index("  #") + 2:]) if "  #" in line else None
    if not m:
        return None
    import numpy as np
    claimed = tuple(int(v) for v in m.group(1).split(","))
    actual = np.shape(ns[stmt.targets[0].id])
    if actual != claimed:
        return f"`{stmt.targets[0].id}` has shape {actual}, the comment says {claimed}"
    return None


def run_block(block: Block, ns: dict, page: str, substitutions=()) -> list[str]:
    """Run the block's statements in `ns` one by one; the problems found (a failing statement is reported and
    the next one still runs)."""
    code = block.code
    for old, new in substitutions:
        code = code.replace(old, new)
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return [f"{page}:{block.line + (exc.lineno or 1) - 1}: syntax error: {exc.msg}"]
    lines = code.splitlines()
    problems = []
    for stmt in tree.body:
        where = f"{page}:{block.line + stmt.lineno - 1}"
        if _has_ellipsis(stmt):
            problems += [f"{where}: {p}" for p in _bind_calls(stmt, ns)]
            continue
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(ast.Module([stmt], []), f"{page}:{block.line}", "exec"), ns)
        except Exception as exc:
            problems.append(f"{where}: `{lines[stmt.lineno - 1].strip()}` raised {type(exc).__name__}: {exc}")
            continue
        claim = _shape_claim(stmt, lines, ns)
        if claim:
            problems.append(f"{where}: {claim}")
    return problems


def check_python(page: str, scratch: Path) -> list[str]:
    """Every ```python block of `page` run in order after its prelude (in `scratch`), then the page's checks."""
    blocks = [b for b in fenced_blocks(page_text(page)) if b.lang == "python"]
    if not blocks and page not in docs_pages.CHECKS:
        return []
    ns: dict = {"__name__": "__doc_example__"}
    problems = []
    with working_directory(scratch):
        try:
            exec(docs_pages.PRELUDES.get(page, ""), ns)
        except Exception:
            return [f"{page}: the checker's prelude failed: {traceback.format_exc(limit=2)}"]
        for block in blocks:
            problems += run_block(block, ns, page, docs_pages.SUBSTITUTIONS.get(page, ()))
        check = docs_pages.CHECKS.get(page)
        if check is not None:
            problems += [f"{page}: {p}" for p in check(ns)]
    return problems


# ------------------------------------------------------------------------------------------ command lines

def _subparsers():
    from toppra_app.cli import build_parser
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return parser, action.choices


def check_command(cmd: Command, subparsers) -> list[str]:
    """The sub-command, its options and their choices exist; a command (not a usage line) parses."""
    where = f"{cmd.page}:{cmd.line}: `{cmd.text}`"
    tokens = cmd.text.replace("[", " ").replace("]", " ").split()
    sub = subparsers.get(tokens[1])
    if sub is None:
        return [f"{where}: no sub-command {tokens[1]!r}"]
    problems = []
    options = sub._option_string_actions
    positional_choices = [a.choices for a in sub._actions if not a.option_strings and a.choices]
    previous = None
    for tok in tokens[2:]:
        if tok.startswith("--"):
            name = tok.split("=")[0]
            if name not in options:
                problems.append(f"{where}: `{tokens[1]}` has no option {name}")
            previous = options.get(name)
            continue
        words = [w for w in tok.split("|") if w]
        if "|" in tok and all(re.fullmatch(r"[a-z][\w-]*", w) for w in words):
            allowed = previous.choices if previous is not None and previous.choices else \
                (positional_choices[0] if positional_choices else None)
            for w in words:
                if allowed is not None and w not in allowed:
                    problems.append(f"{where}: {w!r} is not one of {sorted(allowed)}")
        previous = None
    if not cmd.synopsis and not problems:
        try:
            with contextlib.redirect_stderr(open(os.devnull, "w")):
                sub.parse_args(shlex.split(cmd.text)[2:])
        except SystemExit:
            problems.append(f"{where}: does not parse (toppra-app {tokens[1]} --help)")
    return problems


def check_commands(page: str) -> list[str]:
    _, subs = _subparsers()
    problems = []
    for cmd in commands(page):
        problems += check_command(cmd, subs)
    for line, module in module_commands(page):
        if importlib.util.find_spec(module) is None:
            problems.append(f"{page}:{line}: `python -m {module}`: no such module")
    return problems


# ------------------------------------------------------------------------------------------ cross-references

def main(argv=None) -> int:
    import argparse
    import tempfile
    parser = argparse.ArgumentParser(prog="python -m benchmarks.docs_check", description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="store_true", help="also run every command shown (minutes)")
    parser.add_argument("pages", nargs="*", default=list(PAGES))
    args = parser.parse_args(argv)
    problems = []
    with tempfile.TemporaryDirectory(prefix="docs-check-") as tmp:
        for page in args.pages:
            problems += check_references(page, docs_pages.HISTORICAL) + check_commands(page)
            problems += check_python(page, Path(tmp))
            if args.run:
                from benchmarks import docs_commands
                problems += docs_commands.run_commands(page, Path(tmp))
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s) in {len(args.pages)} page(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
