"""Checks of scalar (and real-array) arguments shared by the whole application: one line naming the argument and what is wrong.

`real` (a number in a range) and `whole` (a whole number in a range), each with open or closed bounds, refuse
what Python or numpy would silently read as a number — True/False and np.bool_ (as 1/0), text ("0.001"),
bytes, complex, None — and NaN and ±inf (unless `allow_inf`); `reals` refuses the same as the elements of an
array. Leaf module: it imports nothing from the application but its errors, so `trajectory`, `path`,
`planning.options` and the objectives can all use it.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import InputError, short_repr


def is_real(value) -> bool:
    """Whether `value` is a real scalar: Python int/float, numpy integer/floating (`numbers.Real`), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _span(lo, hi, bounds: str) -> str:
    """" > 0", " from 0 to 1", " in (0, 1]", … ("" without bounds)."""
    if lo is not None and hi is not None:
        return f" from {lo:g} to {hi:g}" if bounds == "[]" else f" in {bounds[0]}{lo:g}, {hi:g}{bounds[1]}"
    if lo is not None:
        return f" {'>' if bounds[0] == '(' else '>='} {lo:g}"
    if hi is not None:
        return f" {'<' if bounds[1] == ')' else '<='} {hi:g}"
    return ""


def _inside(v: float, lo, hi, bounds: str) -> bool:
    above = lo is None or (v > lo if bounds[0] == "(" else v >= lo)
    below = hi is None or (v < hi if bounds[1] == ")" else v <= hi)
    return above and below


def real(value, name: str, lo: float | None = None, hi: float | None = None, *, bounds: str = "[]",
         unit: str = "", allow_inf: bool = False) -> float:
    """`value` as a float in the range from `lo` to `hi` (None: unbounded on that side); `bounds` "[]", "(]", "[)"
    or "()" says which ends are closed. `unit` (e.g. " of seconds") follows "number" in the message. Refused
    with an `InputError` naming `name`: anything but a real scalar (`is_real`), NaN, ±inf (unless
    `allow_inf`, which still applies the range), and values outside the range."""
    assert bounds in ("[]", "(]", "[)", "()"), bounds
    span = _span(lo, hi, bounds)
    if not is_real(value):
        raise InputError(f"{name}: expected a number{unit}{span}, got {short_repr(value)}")
    try:
        v = float(value)
    except (OverflowError, ValueError, TypeError):        # an int past 1.8e308; a hostile __float__
        v = math.nan
    if math.isnan(v) or not (allow_inf or math.isfinite(v)) or not _inside(v, lo, hi, bounds):
        finite = "" if allow_inf else "finite "
        raise InputError(f"{name}: must be a {finite}number{unit}{span}, got {short_repr(value)}")
    return v


def whole(value, name: str, lo: int | None = None, hi: int | None = None, *, bounds: str = "[]") -> int:
    """`value` as an int in the range from `lo` to `hi` (as `real`); integral floats (3.0) are taken, other
    floats, NaN, inf, bools, text, complex and None refused with an `InputError` naming `name`."""
    assert bounds in ("[]", "(]", "[)", "()"), bounds
    span = _span(lo, hi, bounds)
    if is_real(value):
        try:
            v = float(value)
        except (OverflowError, ValueError, TypeError):
            v = math.nan
        if math.isfinite(v) and v == int(v) and _inside(v, lo, hi, bounds):
            return int(value) if isinstance(value, numbers.Integral) else int(v)
    raise InputError(f"{name}: expected a whole number{span}, got {short_repr(value)}")


def reals(value, name: str, what: str) -> np.ndarray:
    """`value` as a float array, refused in one line naming `name` unless its elements are real numbers (integer or
    floating dtype): not booleans (True read as 1), text ("0.5" read as 0.5, also inside a list), complex (its
    imaginary part dropped with a ComplexWarning), objects or ragged lists. Waypoints, `s`, a plan's times `t`."""
    if isinstance(value, dict):
        raise InputError(f"{name}: expected {what}, got a dict")
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):                    # ragged lists
        raw = None
    if raw is None or raw.dtype.kind not in "iuf":
        raise InputError(f"{name}: expected {what}, got {short_repr(value)}")
    return raw.astype(float)
