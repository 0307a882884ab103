"""The scenarios' sub-commands of `toppra-app` (palletize, payload-sweep, batch), found by `toppra_app.cli`."""

from __future__ import annotations

DT_MIN, DT_MAX = 1e-4, 0.1     # s: trajectory sample periods (1e-6 allocated 2 GB for the built-in cell: a hunt)


def check_dt(dt: float) -> None:
    """`--dt` of the trajectory files: a sample period from `DT_MIN` to `DT_MAX` (one line otherwise)."""
    from toppra_app.errors import InputError
    if not DT_MIN <= dt <= DT_MAX:
        raise InputError(f"--dt: expected a sampling period from {DT_MIN:g} to {DT_MAX:g} s, got {dt}")


def robot_file(document, base_dir) -> list:
    """The robot file a parsed cell document reads, `[cell] urdf` relative to `base_dir` ([] for a built-in robot or
    a value that is not a name: the cell's reader says what is wrong with it)."""
    import os
    cell = document.get("cell") if isinstance(document, dict) else None
    urdf = cell.get("urdf") if isinstance(cell, dict) else None
    return [os.path.join(str(base_dir), urdf)] if isinstance(urdf, str) and urdf and urdf.isprintable() else []


def cell_inputs(cell_file) -> list:
    """The files a cell file makes a run read, which `--out` may never name or contain (docs/safety.md): the cell
    file and its robot URDF (`--out` the URDF's directory with `--force` was written into). A file that cannot be
    read adds nothing here: the cell's reader names its problem."""
    if not cell_file:
        return []
    from pathlib import Path
    from toppra_app.errors import InputError
    from toppra_app.textfile import read_toml
    try:
        document = read_toml(cell_file, 1 << 20, "a cell file (TOML)")
    except InputError:
        return [cell_file]
    return [cell_file, *robot_file(document, Path(cell_file).parent)]
