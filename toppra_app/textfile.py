"""Reading a user's text file (waypoint CSV, cell file) without surprises: a regular file of bounded size,
UTF-8 with or without a byte-order mark; anything else is one `InputError` line naming the file."""

from __future__ import annotations

import os
import stat

from dynamics.checks import read_at_most

from .errors import InputError


def read_text(path, max_bytes: int, what: str, line_word: str = "line") -> str:
    """The file's text; `what` names the expected kind ("a cell file (TOML)"), `line_word` how its lines
    are called in messages ("row" for CSV)."""
    source = str(path)
    if not source.isprintable():                             # a newline would break the one-line errors
        from .errors import short_repr
        source = short_repr(source)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{source}: no such file") from None
    except OSError as exc:                                   # symlink loops, permissions, ...
        raise InputError(f"{source}: cannot read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise InputError(f"{source}: is {kind}; expected {what}")
    if st.st_size > max_bytes:
        raise InputError(f"{source}: {st.st_size} bytes; {what} may have at most {max_bytes} bytes")
    try:
        with open(path, "rb") as fh:
            raw = read_at_most(fh, st.st_size, max_bytes)
    except OSError as exc:
        raise InputError(f"{source}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > max_bytes:
        raise InputError(f"{source}: more than {max_bytes} bytes; {what} may have at most {max_bytes} bytes")
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError(f"{source}: UTF-16 text; save it as UTF-8")
    nul = raw.find(b"\0")
    if nul >= 0:
        raise InputError(f"{source}: binary data (a NUL byte at offset {nul}); expected {what}")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise InputError(f"{source}: {line_word} {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); save it "
                         f"as UTF-8") from None


def read_toml(path, max_bytes: int, what: str, source: str | None = None) -> dict:
    """A small UTF-8 TOML file (`read_text`) as a dict, or one `InputError` line naming `source` (default
    the path) for anything else."""
    import tomllib
    source = str(path) if source is None else source
    text = read_text(path, max_bytes, what)
    try:
        return tomllib.loads(text, parse_float=_finite_float)
    except _Overflow as exc:
        line = text[:text.find(exc.args[0])].count("\n") + 1 if exc.args[0] in text else "?"
        raise InputError(f"{source}: line {line}: the number {exc.args[0][:40]} is beyond the largest float "
                         f"(~1.8e308); write inf for no limit") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{source}: not valid TOML ({exc})") from None
    except RecursionError:
        raise InputError(f"{source}: not valid TOML (arrays or tables nested too deeply)") from None


class _Overflow(ValueError):
    """A TOML float literal too large for a float (the literal)."""


def _finite_float(literal: str) -> float:
    """tomllib's float, except that a number too large for one is refused: tomllib read ``jerk_max = 1e309`` as
    inf — no limit, silently (as `dynamics` refuses ``effort="1e400"`` in a URDF); ``inf`` written out stays inf."""
    value = float(literal)
    if value in (float("inf"), float("-inf")) and "inf" not in literal:
        raise _Overflow(literal)
    return value
