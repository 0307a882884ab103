"""Former home of `dynamics.io.urdf_collision`; re-exports it so that old imports keep working."""

from .io.urdf_collision import (Shape, resolve_uri, collision_shapes)  # noqa: F401

__all__ = ["Shape", "resolve_uri", "collision_shapes"]
