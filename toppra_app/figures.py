"""The one way figures are written: whole or not at all (a temporary file in the same directory, then
renamed), marked as ours (PNG text chunk ``Software: toppra-app``, which `output.check_output_file` reads
before it replaces a file), readable by others (the umask's permissions, not mkstemp's 0600)."""

from __future__ import annotations

import errno
import os
import tempfile

DPI = 110                  # every figure's resolution (the plots' envelopes are sized for it, `decimate.figure_bins`)


def plain_text(text) -> str:
    """A user's name (robot, joint, cell, box type, ``--title``) as matplotlib shows it literally: its "$" escaped.
    Matplotlib reads text between two "$" as mathtext: "cell $\\foo{$" failed the whole run with a three-line
    ParseFatalException, and "$5 / $10 boxes" was drawn as italic maths."""
    return str(text).replace("$", r"\$")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def save_figure(fig, path, dpi: int = DPI, tight: bool = False, replaceable=None) -> str:
    """Write the matplotlib figure `fig` to `path` (format from the extension, PNG by default); returns
    the path. ``tight`` crops to the drawn area (draws twice: slower). With `replaceable` (a test of the file
    found at `path`) the figure becomes `path` only if nothing is there when it is done, or what is there passes
    the test (`FileExistsError` otherwise): a file that appeared while the figure was drawn is not replaced."""
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
        if replaceable is None:
            os.replace(tmp, path)
        else:
            _publish(tmp, path, replaceable)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def _publish(tmp: str, path: str, replaceable) -> None:
    """`tmp` becomes `path`: as a new file (a hard link, which fails if `path` exists: `link_new`), or over the
    file there if `replaceable(path)` still says it may be replaced."""
    from dynamics.io.new_file import link_new
    try:
        link_new(tmp, path)
    except FileExistsError:
        if not replaceable(path):
            raise FileExistsError(errno.EEXIST, "it appeared while the figure was drawn and was not written by this "
                                  "tool", path) from None
        os.replace(tmp, path)
    else:
        os.remove(tmp)
