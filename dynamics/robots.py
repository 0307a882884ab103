"""Former home of `dynamics.io.robots`; re-exports it so that old imports keep working."""

from .io.robots import (PANDA_FRICTION_GAZ, PUMA560_JM, PUMA560_GEAR, BUILTIN_ROBOTS, load_robot)  # noqa: F401

__all__ = ["PANDA_FRICTION_GAZ", "PUMA560_JM", "PUMA560_GEAR", "BUILTIN_ROBOTS", "load_robot"]
