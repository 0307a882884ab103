"""Former home of `dynamics.io.urdf`; re-exports it so that old imports keep working."""

from .io.urdf import (MAX_URDF_BYTES, from_urdf, merge_inertials, URDFWarning, read_urdf_root, _Reader,  # noqa: F401
                      _MOVABLE)

__all__ = ["MAX_URDF_BYTES", "from_urdf", "merge_inertials", "URDFWarning", "read_urdf_root"]
