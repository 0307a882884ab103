"""Output that never costs a user a file: a directory written whole or not at all, replacing only what
this tool wrote before.

Rules (docs/safety.md):

* ``--out DIR`` is checked *before* any planning (`check_output`): an empty name, a parent that is a
  file, an unwritable place or a name too long end with one line at once.
* A new or empty DIR is created by renaming a finished temporary directory onto it (all or nothing).
* A DIR this tool wrote (it holds a manifest, `MANIFEST`, naming every file, and nothing else) is
  replaced the same way; the old copy is removed after the rename.
* Any other non-empty DIR is refused unless ``--force``; with ``--force`` our files are added to it one by
  one, but no file that is not ours is ever overwritten or deleted (that is refused too); the files an
  earlier run of ours wrote there (its manifest lists them) and this run does not write again are removed.
* Never, even with ``--force``: the working directory, one of its ancestors, the home directory, ``/``,
  or a directory that contains one of the command's input files.
* Temporaries are named ``.DIR.tmp-PID-XXXX``; on any error or interrupt (SIGINT, SIGTERM: `cli`) they
  are removed, and those of killed runs (their PID gone) are removed by the next run into the same place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from . import interrupt
from .errors import InputError
from .manifest import (MANIFEST, MARK, TOOL, _dirs, _files, _manifest, _parents, _version,  # noqa: F401
                       _write_manifest, clean_stale, foreign_manifest, remove_listed)

_SUFFIX_ROOM = 40                       # characters the temporary names add to DIR's name


class OutputError(InputError):
    """The output cannot be written where asked: the path, and why."""


@dataclass(frozen=True)
class Target:
    path: Path                 # absolute DIR
    mode: str                  # "new", "empty", "ours" (replace), "merge" (--force into a foreign DIR)
    ours: frozenset            # files of an existing DIR that this tool wrote (from its manifest)


def _resolved(item) -> Path:
    """An input's real path; lexical for one that cannot be resolved (a symbolic-link loop: its reader says
    so in one line later, and it is no directory an output could be in)."""
    try:
        return Path(item).expanduser().resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(os.path.expanduser(str(item))))


def protected_reason(path: Path, inputs) -> str | None:
    """Why `path` may never be replaced or written into (None: it may)."""
    cwd = Path.cwd().resolve()
    if path == cwd:
        return "it is the working directory"
    if path in cwd.parents:
        return "it contains the working directory"
    if path == Path(path.anchor):
        return "it is the root directory"
    try:
        if path == Path.home().resolve():
            return "it is the home directory"
    except RuntimeError:
        pass
    for item in inputs:
        if not item:
            continue
        p = _resolved(item)
        if p == path or path in p.parents:
            return f"it contains the input {item}"
    return None


def check_path_length(out, flag: str = "--out") -> None:
    """Before the file system is asked anything (a name too long is an OSError, not False, for `stat`):
    no component over 255 bytes, the whole path with our temporary's suffix under 4096 bytes."""
    full = os.path.abspath(os.path.expanduser(str(out)))
    long = [part for part in Path(full).parts if len(part.encode()) > 255]
    if long:
        raise OutputError(f"{flag} {_short(out)}: the name '{long[0][:40]}…' is too long ({len(long[0].encode())} "
                          f"bytes; at most 255)")
    if len(full.encode()) + _SUFFIX_ROOM >= 4096:
        raise OutputError(f"{flag} {_short(out)}: the path is too long ({len(full.encode())} bytes; at most "
                          f"{4095 - _SUFFIX_ROOM})")


def check_name_room(parent: Path, names, out, flag: str = "--out") -> None:
    """Every one of `names`, to be made under the existing directory `parent`, still fits the file system's
    name limit there (PC_NAME_MAX) with our temporary's suffix."""
    try:
        name_max = os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    for part in names:
        if len(part.encode()) + _SUFFIX_ROOM > name_max:
            raise OutputError(f"{flag} {_short(out)}: the name '{part[:40]}…' is too long ({len(part.encode())} "
                              f"bytes; at most {name_max - _SUFFIX_ROOM} here)")


def _short(out) -> str:
    text = str(out)
    return text if len(text) <= 80 else text[:60] + "…"


def check_output(out, inputs=(), force: bool = False, flag: str = "--out", writes=()) -> Target:
    """Validate the output directory before any work; `OutputError` (one line) when it cannot be used —
    also, with --force into a directory with files of the user's, when one of them has the name of a file the
    run will write (`writes`: those known before it plans; the rest are refused when the run ends)."""
    if out is None or str(out).strip() == "":
        raise OutputError(f"{flag}: empty path; give a directory name, e.g. {flag} results")
    if "\0" in str(out):
        raise OutputError(f"{flag} {out!r}: contains a NUL character")
    check_path_length(out, flag)
    try:
        target = _check_output(out, inputs, force, flag)
    except OSError as exc:                              # anything else the file system refuses: one line
        raise OutputError(f"{flag} {_short(out)}: cannot be used ({exc.strerror or exc})") from None
    clash = sorted(f for f in writes if target.mode == "merge" and f not in target.ours and
                   os.path.lexists(target.path / f))
    if target.mode == "merge" and foreign_manifest(target.path):   # (written over, through a link too)
        clash.insert(0, MANIFEST)
    if clash:
        raise OutputError(f"{flag} {out}: refused to overwrite {', '.join(clash[:3])} (not written by this tool); "
                          f"choose a new directory")
    return target


def resolved_out(out, flag: str = "--out") -> Path:
    """An output directory's path resolved (~ expanded, links followed), refused in one line where it is a
    dangling symbolic link (resolved, its target was created: `batch` wrote there) or cannot be resolved."""
    raw = Path(os.path.expanduser(str(out)))
    if raw.is_symlink() and not raw.exists():
        raise OutputError(f"{flag} {out}: is a dangling symbolic link")
    try:
        return raw.resolve()
    except (OSError, RuntimeError) as exc:               # symlink loops
        raise OutputError(f"{flag} {out}: cannot be resolved ({exc})") from None


def _check_output(out, inputs, force: bool, flag: str) -> Target:
    path = resolved_out(out, flag)
    if not path.name:
        raise OutputError(f"{flag} {out}: not a usable directory name")
    for item in inputs:
        if item and _resolved(item) == path:
            raise OutputError(f"{flag} {out}: refused, {flag} names the input file {item}; choose a new directory")
    why = protected_reason(path, inputs)
    if why is not None and (path.exists() or why.startswith("it contains the input")):
        raise OutputError(f"{flag} {out}: refused, {why} (even with --force); choose a new directory")
    # the nearest existing ancestor must be a writable directory
    parent = path.parent
    while not parent.exists():
        if parent.is_symlink():
            raise OutputError(f"{flag} {out}: {parent} is a dangling symbolic link")
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"{flag} {out}: {parent} is not a directory")
    check_name_room(parent, path.relative_to(parent).parts, out, flag)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{flag} {out}: {parent} is not writable")
    if not path.exists() and not path.is_symlink():
        return Target(path, "new", frozenset())
    if not path.is_dir():                 # (resolved: a dangling link was refused by `resolved_out`)
        raise OutputError(f"{flag} {out}: exists and is not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputError(f"{flag} {out}: {path} is not writable")
    try:
        present, folders = _files(path), _dirs(path)
    except OSError as exc:
        raise OutputError(f"{flag} {out}: cannot be listed ({exc.strerror})") from None
    if not present and not folders:
        return Target(path, "empty", frozenset())
    ours = _manifest(path)
    # a directory counts as ours only if its every file is in the manifest and every sub-directory holds
    # one of them: an empty directory the user made inside it is theirs (it would be deleted with ours)
    if ours is not None and present <= ours | {MANIFEST} and folders <= _parents(ours):
        return Target(path, "ours", ours)
    if not force:
        raise OutputError(f"{flag} {out}: exists and holds files or directories this tool did not write; choose a "
                          f"new directory (or --force to add our files to it, never touching the others)")
    return Target(path, "merge", ours or frozenset())


def check_output_file(out, inputs=(), flag: str = "--out") -> Path:
    """A single output file (a figure): new, or a PNG this tool wrote (its "Software" text chunk says
    toppra-app); anything else is refused, never overwritten."""
    if out is None or str(out).strip() == "":
        raise OutputError(f"{flag}: empty path; give a file name, e.g. {flag} robot.png")
    raw = Path(os.path.expanduser(str(out)))
    if raw.is_symlink():                 # (resolved, a dangling link passed as new and was replaced by the figure)
        raise OutputError(f"{flag} {out}: exists (a symbolic link) and was not written by this tool; choose a "
                          f"new file name")
    if str(out).endswith(("/", os.sep)) or raw.is_dir():          # (found after drawing: "Is a directory")
        raise OutputError(f"{flag} {out}: names a directory; give a file name, e.g. {flag} robot.png")
    path = raw.resolve()
    for item in inputs:
        if item and _resolved(item) == path:
            raise OutputError(f"{flag} {out}: refused, it is the input {item}")
    parent = path.parent
    if not parent.is_dir():
        raise OutputError(f"{flag} {out}: {parent} is not an existing directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{flag} {out}: {parent} is not writable")
    check_name_room(parent, [path.name], out, flag)
    if path.exists() or path.is_symlink():
        if path.is_file() and path.suffix.lower() not in ("", ".png"):   # (a figure of ours carries no mark there)
            raise OutputError(f"{flag} {out}: exists; only a PNG this tool wrote is replaced (a {path.suffix} file "
                              f"cannot be told from yours); choose a new file name")
        if not path.is_file() or path.is_symlink() or not _our_png(path):
            raise OutputError(f"{flag} {out}: exists and was not written by this tool; choose a new file name")
    return path


def _our_png(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return False
    return head.startswith(b"\x89PNG") and b"Software\x00" + TOOL.encode() in head


def write_error(exc: OSError) -> str:
    """Why a write failed, in words (a full disk, a read-only file system, ...)."""
    return {errno.ENOSPC: "no space left on the device", errno.EROFS: "read-only file system",
            errno.EDQUOT: "disk quota exceeded"}.get(exc.errno, exc.strerror or str(exc))


def _fail(target: Target, exc: OSError) -> OutputError:
    where = exc.filename or target.path
    return OutputError(f"--out {target.path}: cannot write {where}: {write_error(exc)}; nothing was written")


WRITTEN: list = []      # the directories `atomic_directory` put in place in this process, in order (`cli`: an
                        # interrupt after that says so instead of "nothing was written")


@contextlib.contextmanager
def atomic_directory(out, inputs=(), force: bool = False, target: Target | None = None):
    """Yield a fresh temporary directory; on success it becomes `out` by the rules above, on any error or
    interrupt it is removed. Pass the `Target` from `check_output` (done before planning) when there is one."""
    target = check_output(out, inputs, force) if target is None else target
    path = target.path
    created = []                                        # parents this call made (removed again on failure)
    tmp = old = None
    try:
        p = path.parent
        missing = []
        while not p.exists():
            missing.append(p)
            p = p.parent
        for p in reversed(missing):
            p.mkdir()
            created.append(p)
        clean_stale(path)
        tmp = path.parent / f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        tmp.mkdir()
        os.chmod(tmp, 0o777 & ~_umask())
        (tmp / MARK).touch()
        yield tmp
        interrupt.check()           # a Ctrl-C swallowed while the output was made (`interrupt`): nothing is moved
        files = _files(tmp) - {MARK}    # (the marker stays until the manifest is in: a temporary killed between
                                        # the two carried neither, and no later run removed it)
        # what is there now (another run may have written), no foreign file of any name this run wrote
        now = check_output(path, inputs, force, writes=files)
        if now.mode == "merge":
            _write_manifest(path, set(now.ours) | files)     # ours at every moment, should the run stop here
            for f in sorted(files):
                (path / f).parent.mkdir(parents=True, exist_ok=True)
                os.replace(tmp / f, path / f)
            # our files of an earlier run that this one did not write again go (the manifest lists them: the
            # user's files never), so the manifest lists exactly what is there from us
            left = remove_listed(path, now.ours - files - {MANIFEST, MARK})
            _write_manifest(path, files | left)
            WRITTEN.append(path)
            shutil.rmtree(tmp)
            tmp = None
            return
        _write_manifest(tmp, files)
        (tmp / MARK).unlink()
        if now.mode == "ours":
            old = path.parent / f".{path.name}.old-{os.getpid()}-{secrets.token_hex(4)}"
            os.rename(path, old)
            try:
                os.rename(tmp, path)
            except BaseException:
                os.rename(old, path)
                old = None
                raise
            tmp = None
            shutil.rmtree(old, ignore_errors=True)
            old = None
        else:                                           # new, or an empty directory: one atomic rename
            os.rename(tmp, path)
            tmp = None
        WRITTEN.append(path)
        created.clear()
    except BrokenPipeError:                             # stdout closed (`| head`), not a write of ours: `cli`
        raise
    except OSError as exc:
        raise _fail(target, exc) from None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not path.exists():
            with contextlib.suppress(OSError):
                os.rename(old, path)
        for p in reversed(created):
            with contextlib.suppress(OSError):
                p.rmdir()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
