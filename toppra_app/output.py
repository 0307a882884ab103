"""Output written whole or not at all: a directory built under a temporary name, then renamed."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from .errors import InputError


@contextlib.contextmanager
def atomic_directory(out):
    """Yield a fresh temporary directory next to ``out``; on success it replaces ``out`` in one rename
    (an existing ``out`` is moved aside first and removed afterwards); on any error it is deleted, so
    no partial output is ever left under the final name."""
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out: {out} exists and is not a directory")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    mask = os.umask(0o022)
    os.umask(mask)
    os.chmod(tmp, 0o777 & ~mask)                  # mkdtemp creates 0700; the result gets the usual mode
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.rmdir(old)
        os.rename(out, old)
    try:
        os.rename(tmp, out)
    except BaseException:
        if old is not None:
            os.rename(old, out)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
