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
import importlib
import importlib.util
import inspect
import io
import os
import re
import shlex
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md",) + tuple(f"docs/{p}.md" for p in (
    "architecture", "batch", "controller", "dynamics", "export", "inverse_kinematics", "models", "palletizing",
    "planner", "planner_limits", "safety", "trees"))
PACKAGES = ("dynamics", "toppra_app", "scenarios", "benchmarks")
FENCE = re.compile(r"^\s*```\s*([\w-]*)\s*$")


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int          # first line of the code, 1-based


def page_text(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


def fenced_blocks(text: str) -> list[Block]:
    out, lang, start, lines = [], None, 0, []
    for i, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m and lang is None:
            lang, start, lines = m.group(1) or "text", i + 1, []
        elif m and line.strip() == "```":
            out.append(Block(lang, "\n".join(lines) + "\n", start))
            lang = None
        elif lang is not None:
            lines.append(line)
    return out


def outside_fences(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the page outside its fenced blocks."""
    out, inside = [], False
    for i, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
        elif not inside:
            out.append((i, line))
    return out


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


@contextlib.contextmanager
def working_directory(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def check_python(page: str, scratch: Path) -> list[str]:
    """Every ```python block of `page` run in order after its prelude (in `scratch`), then the page's checks."""
    from benchmarks import docs_pages
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
@dataclass(frozen=True)
class Command:
    page: str
    line: int
    text: str
    synopsis: bool      # a usage line ([optional], A | B, …): options checked, never run


def _clean(cmd: str) -> str:
    return re.split(r"\s{2,}#|\s#\s", cmd)[0].strip()


def commands(page: str) -> list[Command]:
    """`toppra-app …` lines of code blocks and indented lines (commands), and in backticks (usage lines)."""
    text = page_text(page)
    out = []
    fenced = {b.line + k: ln for b in fenced_blocks(text) if b.lang in ("text", "sh", "bash", "shell")
              for k, ln in enumerate(b.code.splitlines())}
    candidates = sorted(fenced.items()) + [(i, ln) for i, ln in outside_fences(text) if ln.startswith("    ")]
    all_lines = text.splitlines()
    for i, line in candidates:
        for part in line.split("&&"):
            part = part.strip()
            if not re.match(r"toppra-app [a-z]", part) or re.match(r"toppra-app [\w-]+:", part):
                continue            # prose or an error message shown
            # a usage line may continue on the next, more indented lines
            j = i
            while j < len(all_lines) and all_lines[j].startswith(" " * 8) and not all_lines[j].strip().startswith(
                    ("toppra-app", "#")):
                part += " " + all_lines[j].strip()
                j += 1
            cmd = _clean(part)
            out.append(Command(page, i, cmd, bool(re.search(r"[\[\]…|]|\.\.\.", cmd))))
    for i, line in outside_fences(text):
        for m in re.finditer(r"`(toppra-app [a-z][^`]*)`", line):
            if not re.match(r"toppra-app [\w-]+:", m.group(1)):
                out.append(Command(page, i, m.group(1), True))
    return out


def module_commands(page: str) -> list[tuple[int, str]]:
    """`python -m pkg.module` named by the page."""
    return [(i, m.group(1)) for i, line in enumerate(page_text(page).splitlines(), 1)
            for m in re.finditer(r"python3? -m ([\w.]+)", line) if m.group(1) not in ("venv", "pip", "pytest")]


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
def _files_named(name: str) -> list[Path]:
    return [p for pkg in (*PACKAGES, "tests", "docs") for p in (ROOT / pkg).rglob(name)]


def _path_exists(ref: str) -> bool:
    """A file or module path as the docs write it: from the root, or inside a package (`socp/scaling.py`),
    with or without `.py` (`io/dh`), or a bare file name anywhere in the packages."""
    ref = ref.rstrip("/")
    if "*" in ref or ref.startswith("/") or ref.startswith("shared/"):
        return True         # a pattern, a machine path, or the seed material outside this repository
    bases = [ROOT] + [ROOT / p for p in PACKAGES] + [ROOT / "toppra_app" / p for p in ("planning", "socp")]
    for base in bases:
        for cand in (ref, ref + ".py"):
            if (base / cand).exists():
                return True
    if "/" not in ref:
        return bool(_files_named(ref))
    return any(str(p).endswith("/" + ref) or str(p).endswith("/" + ref + ".py")
               for p in _files_named(ref.rsplit("/", 1)[1] + ("" if ref.endswith(".py") else ".py")))


def _resolve_dotted(ref: str) -> bool:
    parts = ref.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        try:
            for attr in parts[k:]:
                obj = getattr(obj, attr)
            return True
        except AttributeError:
            return False
    return False


PATH_REF = re.compile(r"`([\w./-]+\.(?:py|md|toml)|(?:tests|docs|dynamics|toppra_app|scenarios|benchmarks)/[\w./-]*"
                      r"|(?:io|ik|socp|planning|limits|objectives|palletizing|batch|commands|scenarios)/\w+)`")
BARE_PATH = re.compile(r"(?<![\w/`.])((?:tests|docs|dynamics|toppra_app|scenarios|benchmarks)/[\w/]+\.(?:py|md|toml))")
DOTTED_REF = re.compile(r"`((?:dynamics|toppra_app|scenarios|benchmarks)(?:\.\w+)+)")
TEST_REF = re.compile(r"`(test_\w+)(…)?`")
LINK_REF = re.compile(r"\]\(([\w./-]+\.md)(?:#([\w-]+))?\)")
SECTION_REF = re.compile(r"\b([\w/]+\.md)\)?,?\s+\"([^\"]+)\"")


ATTR_REF = re.compile(r"`([a-z_]\w*)\.([A-Za-z_]\w*)[`(]")
SAME_PAGE_REF = re.compile(r"(?:below|above),?\s+\"([A-Z][^\"]+)\"|(?<!\.md )(?<!\.md, )\"([A-Z][^\"]+)\",? step")
NOT_MODULES = {"plan", "planner", "controller", "run", "report", "robot", "path", "cell", "res", "sweep", "args"}
FILE_SUFFIXES = {"py", "md", "toml", "csv", "json", "html", "png", "yaml", "urdf", "xacro"}


def _module_index() -> dict[str, list[str]]:
    """Module base name → the dotted names of the modules so named (`grid` → toppra_app.planning.grid)."""
    out: dict[str, list[str]] = {}
    for pkg in PACKAGES[:3]:
        for p in (ROOT / pkg).rglob("*.py"):
            if p.stem != "__init__":
                out.setdefault(p.stem, []).append(".".join(p.relative_to(ROOT).with_suffix("").parts))
    return out


def _attribute_exists(modules: list[str], attr: str) -> bool:
    for name in modules:
        try:
            if hasattr(importlib.import_module(name), attr):
                return True
        except ImportError:
            pass
    return False


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return s.replace(" ", "-")


def sections(doc: Path) -> list[str]:
    """Headings and bold paragraph titles of a page."""
    text = doc.read_text(encoding="utf-8")
    return [m.group(1).strip() for m in re.finditer(r"^#+\s+(.+)$", text, re.M)] + \
        [m.group(1).strip() for m in re.finditer(r"\*\*([^*]+)\*\*", text)]


def _doc_path(page: str, ref: str) -> Path:
    for base in ((ROOT / page).parent, ROOT, ROOT / "docs"):
        if (base / ref).exists():
            return base / ref
    return ROOT / "docs" / Path(ref).name


def _test_names() -> set[str]:
    names = set()
    for p in (ROOT / "tests").glob("test_*.py"):
        names |= set(re.findall(r"^\s*def (test_\w+)", p.read_text(encoding="utf-8"), re.M))
    return names


def check_references(page: str, historical=()) -> list[str]:
    """Files, modules, module attributes (`grid.PER_TURN`), tests, links and quoted sections the page names;
    `historical`: names the page gives as removed."""
    text = page_text(page)
    problems = []
    tests = _test_names()
    modules = _module_index()
    own_sections = sections(ROOT / page)
    for i, line in enumerate(text.splitlines(), 1):
        where = f"{page}:{i}"
        for m in PATH_REF.finditer(line):
            ref = m.group(1).split(":")[0]
            if not _path_exists(ref):
                problems.append(f"{where}: `{ref}` does not exist")
        for m in BARE_PATH.finditer(line):
            if not _path_exists(m.group(1)):
                problems.append(f"{where}: {m.group(1)} does not exist")
        for m in DOTTED_REF.finditer(line):
            if not _resolve_dotted(m.group(1)):
                problems.append(f"{where}: `{m.group(1)}` does not exist")
        for m in ATTR_REF.finditer(line):
            base, attr = m.groups()
            if base in modules and base not in NOT_MODULES and attr not in FILE_SUFFIXES and \
                    f"{base}.{attr}" not in historical and not _attribute_exists(modules[base], attr):
                problems.append(f"{where}: `{base}.{attr}`: no {attr} in {' or '.join(modules[base])}")
        for m in SAME_PAGE_REF.finditer(line):
            title = m.group(1) or m.group(2)
            if not any(s.startswith(title) for s in own_sections):
                problems.append(f"{where}: no section \"{title}\" on this page")
        for m in TEST_REF.finditer(line):
            name, prefix = m.group(1), m.group(2)
            if not (any(t.startswith(name.rstrip("_")) for t in tests) if prefix else name in tests):
                problems.append(f"{where}: no test `{name}` in tests/")
        for m in LINK_REF.finditer(line):
            doc = _doc_path(page, m.group(1))
            if not doc.exists():
                problems.append(f"{where}: link to {m.group(1)}, which does not exist")
            elif m.group(2) and m.group(2) not in {slug(s) for s in sections(doc)}:
                problems.append(f"{where}: {m.group(1)} has no section #{m.group(2)}")
        for m in SECTION_REF.finditer(line):
            doc = _doc_path(page, m.group(1))
            if not doc.exists():
                problems.append(f"{where}: {m.group(1)} does not exist")
            elif not any(s.startswith(m.group(2)) for s in sections(doc)):
                problems.append(f"{where}: {m.group(1)} has no section \"{m.group(2)}\"")
    return problems


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
            from benchmarks import docs_pages
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
