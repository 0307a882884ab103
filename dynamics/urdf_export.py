"""Former home of `dynamics.io.urdf_export`; re-exports it so that old imports keep working."""

from .io.urdf_export import (to_urdf_text, to_urdf)  # noqa: F401
from .spatial import rpy_from_matrix  # noqa: F401

__all__ = ["to_urdf_text", "to_urdf", "rpy_from_matrix"]
