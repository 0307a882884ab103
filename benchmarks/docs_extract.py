"""The code of the user docs (README.md, docs/*.md): fenced blocks, the `toppra-app` command lines of code
blocks and indented lines, usage lines in backticks, `python -m` modules (for `docs_check`)."""

from __future__ import annotations

import contextlib
import os
import re
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


@contextlib.contextmanager
def working_directory(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


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
