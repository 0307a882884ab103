"""A finished temporary file becomes a new file, never replacing one (`link_new`): how `to_urdf` and
`toppra-app bench --json/--markdown` write whole or not at all."""

from __future__ import annotations

import os

__all__ = ["link_new"]


def link_new(tmp: str, path: str) -> None:
    """`tmp` becomes `path` only if `path` does not exist (`FileExistsError` otherwise): a hard link, one atomic
    step; where the file system has none (FAT, some FUSE), an exclusive create and a synced copy whose file is
    removed on any failure (a full disk, a Ctrl-C), so no partial file is left."""
    try:
        os.link(tmp, path)
        return
    except FileExistsError:
        raise
    except OSError:                                  # no hard links here: create exclusively and copy
        pass
    with open(tmp, "rb") as src, open(path, "xb") as dst:
        try:                                         # (the file is ours from here)
            dst.write(src.read())
            dst.flush()
            os.fsync(dst.fileno())
        except BaseException:
            dst.close()
            os.unlink(path)
            raise
