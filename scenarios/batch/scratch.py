"""The local Dask workers' scratch directory: one per batch in $TMPDIR, removed when the batch exits, and by the
next batch when it was killed."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile


SCRATCH_PREFIX = "toppra-app-dask-"


def scratch_directory() -> str:
    """A fresh directory for the local workers' scratch space, ``$TMPDIR/toppra-app-dask-PID-XXXXXXXX``, removed
    when this process exits (Dask's default, $TMPDIR/dask-scratch-space, stayed behind after every run), and by
    the next batch if this one is killed (`remove_stale_scratch`)."""
    remove_stale_scratch(tempfile.gettempdir())
    path = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def remove_stale_scratch(root: str) -> list[str]:
    """Remove the scratch directories of batches killed with SIGKILL (no atexit; an OOM kill is one): ours by
    name (`SCRATCH_PREFIX`, PID, dash), owned by this user, of a process that no longer exists. Every killed
    --jobs batch left one behind for good (7 after a session of kill -9 tests)."""
    from toppra_app.manifest import _alive
    pattern = re.compile(rf"^{re.escape(SCRATCH_PREFIX)}(\d+)-[A-Za-z0-9_]+$")
    removed = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        try:
            ours = m is not None and entry.is_dir(follow_symlinks=False) and \
                entry.stat(follow_symlinks=False).st_uid == os.getuid()
        except OSError:
            continue
        if ours and not _alive(int(m.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.name)
    return removed
