"""Validation of the planner's scalar options: one line naming the option and what is wrong."""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def whole(value, name: str, lo: int, hi: int) -> int:
    """A whole number in [lo, hi] (bools, strings and non-integral floats refused)."""
    if isinstance(value, (bool, str)) or not np.isscalar(value):
        raise InputError(f"{name}: expected a whole number from {lo} to {hi}, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected a whole number from {lo} to {hi}, got {value!r}") from None
    if not np.isfinite(v) or v != int(v) or not lo <= v <= hi:
        raise InputError(f"{name}: expected a whole number from {lo} to {hi}, got {value!r}")
    return int(v)


def number(value, name: str, lo: float = 0.0, hi: float = 1e150) -> float:
    """A finite real number in [lo, hi]."""
    if isinstance(value, (bool, str)) or (not np.isscalar(value) and np.ndim(value) != 0):
        raise InputError(f"{name}: expected a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected a number, got {value!r}") from None
    if not (np.isfinite(v) and lo <= v <= hi):
        raise InputError(f"{name}: must be a finite number from {lo:g} to {hi:g}, got {value!r}")
    return v
