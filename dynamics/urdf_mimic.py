"""Former home of `dynamics.io.urdf_mimic`; re-exports it so that old imports keep working."""

from .io.urdf_mimic import (MODES, read_mimic, resolve, coordinates)  # noqa: F401

__all__ = ["MODES", "read_mimic", "resolve", "coordinates"]
