"""Validation of the planner's scalar options: one line naming the option and what is wrong."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..errors import short_repr


def _scalar(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def whole(value, name: str, lo: int, hi: int) -> int:
    """A whole number in [lo, hi] (bools, strings and non-integral floats refused)."""
    if not _scalar(value):
        raise InputError(f"{name}: expected a whole number from {lo} to {hi}, got {short_repr(value)}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected a whole number from {lo} to {hi}, got {short_repr(value)}") from None
    if not np.isfinite(v) or v != int(v) or not lo <= v <= hi:
        raise InputError(f"{name}: expected a whole number from {lo} to {hi}, got {short_repr(value)}")
    return int(v)


def number(value, name: str, lo: float = 0.0, hi: float = 1e150) -> float:
    """A finite real number in [lo, hi]."""
    if not _scalar(value):
        raise InputError(f"{name}: expected a number, got {short_repr(value)}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected a number, got {short_repr(value)}") from None
    if not (np.isfinite(v) and lo <= v <= hi):
        raise InputError(f"{name}: must be a finite number from {lo:g} to {hi:g}, got {short_repr(value)}")
    return v


DEFAULT_SUBSTEPS = 8               # sub-samples per interval of the between-grid check
DEFAULT_TOL = 1e-3                 # allowed relative over-limit between grid points
