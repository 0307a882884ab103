"""The scenarios' sub-commands of `toppra-app` (palletize, payload-sweep, batch), found by `toppra_app.cli`."""

from __future__ import annotations

DT_MIN, DT_MAX = 1e-4, 0.1     # s: trajectory sample periods (1e-6 allocated 2 GB for the built-in cell: a hunt)


def check_dt(dt: float) -> None:
    """`--dt` of the trajectory files: a sample period from `DT_MIN` to `DT_MAX` (one line otherwise)."""
    from toppra_app.errors import InputError
    if not DT_MIN <= dt <= DT_MAX:
        raise InputError(f"--dt: expected a sampling period from {DT_MIN:g} to {DT_MAX:g} s, got {dt}")
