"""The files, modules, module and class attributes, tests, links and quoted sections the user docs name must
exist (for `docs_check`)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from benchmarks.docs_extract import PACKAGES, ROOT, page_text

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


CLASS_REF = re.compile(r"`([A-Z]\w*)\.(\w+)")
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


def _class_index() -> dict[str, list[str]]:
    """Class name → the modules defining a class so named (`RateLimits` → toppra_app.limits.rates)."""
    out: dict[str, list[str]] = {}
    for pkg in PACKAGES[:3]:
        for p in (ROOT / pkg).rglob("*.py"):
            for m in re.finditer(r"^class (\w+)", p.read_text(encoding="utf-8"), re.M):
                out.setdefault(m.group(1), []).append(".".join(p.relative_to(ROOT).with_suffix("").parts))
    return out


def _class_has(modules: list[str], cls: str, attr: str) -> bool:
    """`Class.attr`: a method, property, class attribute or dataclass field of the class."""
    for name in modules:
        c = getattr(importlib.import_module(name), cls, None)
        if c is not None and (hasattr(c, attr) or attr in getattr(c, "__dataclass_fields__", {}) or
                              attr in getattr(c, "__annotations__", {})):
            return True
    return False


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
    modules, classes = _module_index(), _class_index()
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
        for m in CLASS_REF.finditer(line):
            cls, attr = m.groups()
            if cls in classes and not _class_has(classes[cls], cls, attr):
                problems.append(f"{where}: `{cls}.{attr}`: the class {cls} has no {attr}")
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
