"""Errors and input checks shared by the whole dynamics package (no dependency on any other module of it).

* `ModelError` (and its `PayloadError`): one-line messages naming the field, the joint or the link.
* File names given by users: `file_name` (a printable str).
* Field conversion for the model's constructor: `readonly`, `floats`, `vector`, `array`.
* Batched inputs of the algorithms: `as_batch`, `same_batch` (a configuration (n,) or a batch (N, n)).
* Warnings at the user's line: `stacklevel_outside`.
* Numbers written in files: `plain_number` (URDF attributes, waypoint CSVs).
* Switches: `switch` (True or False, nothing else).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:                     # only for annotations: checks must not import the model
    from .model import RobotModel

__all__ = ["ModelError", "PayloadError", "short_repr", "file_name", "readonly", "floats", "vector", "array",
           "as_batch", "same_batch", "finite_result", "stacklevel_outside", "plain_number", "switch",
           "over_text", "read_at_most"]


class ModelError(ValueError):
    """A robot model, or an input given to a dynamics function, is invalid. `argument`: the name of the
    loader's argument the message is about (e.g. "locked_joints", "tool_frame"), or None; a command line maps
    it to its own option."""

    def __init__(self, *args, argument: str | None = None):
        super().__init__(*args)
        self.argument = argument          # (pickled with the instance's __dict__, as any exception attribute)


class PayloadError(ModelError):
    """A payload is invalid, or too heavy for the robot it is given to."""


def short_repr(value, limit: int = 80) -> str:
    """A one-line, bounded repr of a user's value for error messages (arrays and long values shortened)."""
    if isinstance(value, np.ndarray):
        text = np.array2string(value, separator=", ", threshold=12, max_line_width=10**6)
        if value.ndim == 0:     # (a 0-d array printed as its number: "expected a number > 0, got 0.001")
            text = f"array({text})"
    else:
        try:
            with np.printoptions(legacy="1.25"):           # numpy scalars as plain numbers: 0, not np.int64(0)
                text = repr(value)
        except Exception:                                   # noqa: BLE001 — a hostile __repr__
            text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def file_name(where: str, path) -> str:
    """`path` (str, bytes or os.PathLike) as a str, else a one-line `ModelError` starting with `where`; a
    name with a newline or another unprintable character is refused too (it would break one-line errors,
    and `from_urdf` refuses to read such a file)."""
    try:
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError
        path = os.fsdecode(path)
    except TypeError:
        raise ModelError(f"{where}: expected a file name, got {type(path).__name__}") from None
    if not path.isprintable():
        raise ModelError(f"{where}: {short_repr(path)} is not a printable file name")
    return path


def readonly(a, dtype=float) -> np.ndarray:
    """A read-only copy of `a` (the model's arrays are immutable)."""
    a = np.array(a, dtype=dtype, copy=True)
    a.setflags(write=False)
    return a


def floats(name: str, value, expected: str) -> np.ndarray:
    """`value` as a float array; strings, dicts, booleans, complex numbers and objects are a `ModelError`."""
    if isinstance(value, (str, bytes, dict, bool)) or value is None:
        raise ModelError(f"{name}: expected {expected}, got {short_repr(value)}")
    try:
        if np.iscomplexobj(value) or np.asarray(value).dtype.kind in "bUS":     # (a list of text: numpy parsed
            raise TypeError                                                    # ['5'] * 7 as numbers)
        return np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError):          # (OverflowError: a Python int beyond a double)
        raise ModelError(f"{name}: expected {expected}, got {short_repr(value)}") from None


def vector(name: str, value, n: int, default: float | None, *, allow_inf: bool = True) -> np.ndarray:
    """A read-only (n,) vector from a scalar or n numbers (`default` when None; NaN refused)."""
    if value is None:
        if default is None:
            raise ModelError(f"{name}: required")
        value = np.full(n, default)
    arr = floats(name, value, f"a number or {n} numbers")
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ModelError(f"{name}: expected {n} values, got shape {arr.shape}")
    if np.isnan(arr).any() or (not allow_inf and not np.isfinite(arr).all()):
        raise ModelError(f"{name}: values must be finite numbers, got {arr.tolist()}")
    return readonly(arr)


def array(name: str, value, shape: tuple) -> np.ndarray:
    """`value` as a finite float array of `shape`, else a `ModelError` naming the field."""
    arr = floats(name, value, f"numbers of shape {shape}")
    # the same number of values in another shape of the same rank is a transposed or misordered array (coms given
    # as (3, n) was reshaped to (n, 3): every body's centre of mass scrambled); flat values are taken in order
    if arr.size != int(np.prod(shape)) or (arr.ndim == len(shape) > 1 and arr.shape != tuple(shape)):
        raise ModelError(f"{name}: expected shape {shape}, got shape {arr.shape}")
    arr = arr.reshape(shape)
    if not np.isfinite(arr).all():
        raise ModelError(f"{name}: values must be finite numbers")
    return arr


def as_batch(robot: "RobotModel", value, name: str) -> tuple[np.ndarray, bool]:
    """``value`` of shape (n,) or (N, n) as a float (N, n) array, and whether it was a single sample."""
    try:
        raw = np.asarray(value)
        kind = ({"c": "complex", "b": "boolean", "U": "text", "S": "text"}.get(raw.dtype.kind)
                or ("masked" if np.ma.is_masked(value) else None))
        arr = np.asarray(raw, dtype=float) if kind is None else None
    except (TypeError, ValueError, OverflowError):                  # (OverflowError: an int beyond a double)
        kind, arr = "non-numeric", None
    if arr is None:  # (np.asarray would drop an imaginary part or a mask, read True as 1.0 or parse the text "1")
        raise ModelError(f"{name}: expected real numbers of shape (n,) or (N, n) with n = {robot.n}, "
                         f"got {kind} values")
    single = arr.ndim == 1
    if single:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != robot.n:
        raise ModelError(f"{name}: expected shape ({robot.n},) or (N, {robot.n}) for robot '{robot.name}', got {np.shape(value)}")
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ModelError(f"{name}: non-finite value at sample {bad[0]}, joint {bad[1]}")
    return arr, single


def same_batch(robot: "RobotModel", q, *others):
    """Check q and further arrays (name, value) to one common batch shape."""
    q2, single = as_batch(robot, q, "q")
    out = [q2]
    for name, v in others:
        v2, s2 = as_batch(robot, v, name)
        if s2 != single or v2.shape != q2.shape:
            raise ModelError(f"{name}: shape {np.shape(v)} does not match q's shape {np.shape(q)}")
        out.append(v2)
    return out, single


def finite_result(names: str, what: str, out: np.ndarray, *inputs) -> np.ndarray:
    """`out`, unless finite inputs overflowed it (rates of 1e160 square to inf): then a `ModelError`
    naming the arguments `names` and their largest magnitudes, instead of non-finite results."""
    if np.isfinite(out).all():
        return out
    sizes = ", ".join(f"{k} up to {np.abs(x).max(initial=0.0):.3g}" for k, x in zip(names.split(", "), inputs))
    raise ModelError(f"{names}: values too large: {what} overflows to non-finite values ({sizes})")


def stacklevel_outside(directory: str | None = None) -> int:
    """`warnings.warn`'s stacklevel, for a warning of the function calling this, that points at the first frame
    outside `directory` (a package's folder; default this one, dynamics/): the user's line however the warning was
    reached — `from_urdf` directly, `RobotModel.from_urdf` (a frame more) or a command line; the planner's
    warnings from inside toppra_app (`toppra_app.planning.diagnose`)."""
    import sys
    inside = os.path.abspath(directory or os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(1), 1             # (level 1: the function that warns)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inside):
        frame, level = frame.f_back, level + 1
    return level


_PLAIN = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_PLAIN_INF = re.compile(_PLAIN.pattern + r"|[+-]?inf", re.IGNORECASE)


def plain_number(text: str, inf: bool = False) -> float | None:
    """The value of a plain decimal number written in a file — ASCII digits, an optional exponent (with `inf`:
    or ±inf written out) — or None. float() alone also reads "1_0" as 10, other scripts' digits ("０.５") and
    "nan" (the URDF reader's and the waypoint CSVs' numbers; each judges the size of what it reads)."""
    return float(text) if (_PLAIN_INF if inf else _PLAIN).fullmatch(text) else None


def switch(name: str, value, error: type = ModelError) -> bool:
    """`value` if it is True or False (np.bool_ too), else a one-line `error` naming `name`: "no", 0 or None
    read as a truth value would silently pick a branch ("no" is truthy)."""
    if not isinstance(value, (bool, np.bool_)):
        raise error(f"{name}: expected True or False, got {short_repr(value)}")
    return bool(value)


def over_text(value, limit) -> str:
    """``value`` as ``:g`` prints it, or with every digit where that reads as ``limit`` does: a message refusing a
    value just over a limit read "mass 7 kg exceeds the rated payload 7 kg" (7.0000001 kg)."""
    text = f"{float(value):g}"
    return text if text != f"{float(limit):g}" else repr(float(value))


def read_at_most(fh, size: int, max_bytes: int) -> bytes:
    """The bytes of the open binary file `fh` whose size by its stat is `size`: at most ``max_bytes + 1`` of them
    (more than `max_bytes` means too large), read into a buffer of the file's size — ``read(n)`` allocates n bytes
    first, 256 MiB for every CSV read at its bound — and read on up to the bound where the file grew or its file
    system does not know its size (/proc: 0)."""
    data = fh.read(min(size, max_bytes) + 1)
    if len(data) > size:
        data += fh.read(max_bytes + 1 - len(data))
    return data
