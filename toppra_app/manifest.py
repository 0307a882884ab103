"""What this tool wrote: the manifest listing the files of an output directory, and removing exactly those
files again — from a stale temporary of a killed run (`clean_stale`), or our earlier files that a run with
``--force`` did not write again (`remove_listed`) — never a file it does not list (docs/safety.md). Used by
`toppra_app.output`."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
from pathlib import Path

MANIFEST = ".toppra-app-manifest.json"
MARK = ".toppra-app-incomplete"         # inside a temporary directory until it is complete
TOOL = "toppra-app"


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("toppra-app")
    except Exception:                                    # noqa: BLE001 — not installed: source checkout
        return "unknown"


def _files(directory: Path) -> set[str]:
    out = set()
    for root, dirs, names in os.walk(directory):
        for name in names + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            out.add(os.path.relpath(os.path.join(root, name), directory))
    return out


def _dirs(directory: Path) -> set[str]:
    """Every sub-directory (not a link) under `directory`, relative to it."""
    out = set()
    for root, dirs, _ in os.walk(directory):
        out |= {os.path.relpath(os.path.join(root, d), directory) for d in dirs
                if not os.path.islink(os.path.join(root, d))}
    return out


def _parents(files) -> set[str]:
    """The directories that hold `files` (relative paths), at every depth."""
    return {str(p) for f in files for p in Path(f).parents if str(p) != "."}


def _manifest(directory: Path) -> frozenset | None:
    """The files listed by our manifest in `directory`, or None when there is no valid one."""
    try:
        with open(directory / MANIFEST, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("tool") != TOOL or not isinstance(data.get("files"), list):
        return None
    files = [f for f in data["files"] if isinstance(f, str)]
    if any(os.path.isabs(f) or ".." in Path(f).parts for f in files):
        return None
    return frozenset(files)


def _write_manifest(directory: Path, files) -> None:
    """The manifest written beside its final name and renamed onto it: never through a symbolic link of that name
    (with --force it truncated the file the link pointed to), never torn by a full disk or a kill (our files
    would be left unlisted, then refused as the user's)."""
    data = dict(tool=TOOL, version=_version(), files=sorted(files),
                note="written by toppra-app; the directory may be replaced by the next run with the same --out "
                     "as long as it holds only these files")
    tmp = directory / f".{MANIFEST}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        with open(tmp, "x", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
        os.replace(tmp, directory / MANIFEST)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def foreign_manifest(directory: Path) -> bool:
    """A file (or link) by our manifest's name in `directory` that is not a manifest of ours: the user's."""
    p = directory / MANIFEST
    return os.path.islink(p) or (os.path.lexists(p) and _manifest(directory) is None)


def clean_stale(path: Path) -> list[str]:
    """Remove temporaries of killed runs next to `path`: ``.NAME.tmp-PID-*`` / ``.NAME.old-PID-*``
    directories whose process is gone and that carry our marker or manifest (`_remove_stale`), or are empty (a
    run killed between creating one and marking it)."""
    pattern = re.compile(rf"^\.{re.escape(path.name)}\.(tmp|old)-(\d+)-[0-9a-f]+$")
    removed = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if not m or not entry.is_dir(follow_symlinks=False) or _alive(int(m.group(2))):
            continue
        d = Path(entry.path)
        if (d / MARK).exists() or _manifest(d) is not None:
            _remove_stale(d)
            removed.append(entry.name)
        else:                   # killed between its mkdir and its marker: empty (rmdir takes nothing else)
            with contextlib.suppress(OSError):
                d.rmdir()
                removed.append(entry.name)
    return removed + _clean_manifest_temporaries(path)


def _clean_manifest_temporaries(path: Path) -> list[str]:
    """`_write_manifest`'s temporaries in `path` (``..toppra-app-manifest.json.tmp-PID-*``, files) of runs killed
    while writing one there (--force: the user's directory), their process gone."""
    pattern = re.compile(rf"^\.{re.escape(MANIFEST)}\.tmp-(\d+)-[0-9a-f]+$")
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(path):
            m = pattern.match(entry.name)
            if m and entry.is_file(follow_symlinks=False) and not _alive(int(m.group(1))):
                os.unlink(entry.path)
                removed.append(entry.name)
    return removed


def _remove_stale(d: Path) -> None:
    """A stale temporary with a manifest loses only the files listed there (then the manifest, the marker
    and the directories left empty): a file someone put beside them stays, and so does `d` then. One of a
    run killed before it wrote its manifest (the marker only) is removed whole."""
    listed = _manifest(d)
    if listed is None:
        shutil.rmtree(d, ignore_errors=True)
        return
    remove_listed(d, listed | {MANIFEST, MARK})
    with contextlib.suppress(OSError):
        os.rmdir(d)


def remove_listed(d: Path, listed) -> set[str]:
    """Remove from `d` the files `listed` (paths relative to `d`, from our manifest) — never through a link to
    a directory elsewhere, never a directory — then the sub-directories that held them if that left them empty.
    Returns the listed files that are still there (they could not be removed)."""
    real = os.path.realpath(d)
    left = set()
    for f in sorted(listed):
        p = d / f
        if not os.path.lexists(p) or (p.is_dir() and not p.is_symlink()):
            continue
        if os.path.realpath(p.parent) == os.path.normpath(os.path.join(real, os.path.dirname(f))):
            try:
                p.unlink()
                continue
            except OSError:
                pass
        left.add(f)
    for sub in sorted(_parents(listed), key=lambda x: -len(Path(x).parts)):
        with contextlib.suppress(OSError):
            os.rmdir(d / sub)
    return left


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True
