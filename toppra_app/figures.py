"""The one way figures are written: whole or not at all (a temporary file in the same directory, then
renamed), marked as ours (PNG text chunk ``Software: toppra-app``, which `output.check_output_file` reads
before it replaces a file), readable by others (the umask's permissions, not mkstemp's 0600)."""

from __future__ import annotations

import os
import tempfile

DPI = 110                  # every figure's resolution (the plots' envelopes are sized for it, `decimate.figure_bins`)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def save_figure(fig, path, dpi: int = DPI, tight: bool = False) -> str:
    """Write the matplotlib figure `fig` to `path` (format from the extension, PNG by default); returns
    the path. ``tight`` crops to the drawn area (draws twice: slower)."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    ext = os.path.splitext(path)[1].lstrip(".").lower() or "png"
    fd, tmp = tempfile.mkstemp(prefix=".fig-", suffix="." + ext, dir=folder)
    os.close(fd)
    try:
        meta = ({"Software": "toppra-app"} if ext == "png" else {"Creator": "toppra-app"}
                if ext in ("pdf", "svg", "ps", "eps") else None)         # (JPEG, TIFF, WebP take none: an error)
        fig.savefig(tmp, dpi=dpi, format=ext, metadata=meta, **({"bbox_inches": "tight"} if tight else {}))
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path
