"""Former home of `dynamics.io.urdf_as_found`; re-exports it so that old imports keep working."""

from .io.urdf_as_found import (read_urdf_root, URDFWarning, CLIP_TOL, CLIP_ABS, lenient_inertia,  # noqa: F401
                               warn_corrections)

__all__ = ["read_urdf_root", "URDFWarning", "CLIP_TOL", "CLIP_ABS", "lenient_inertia", "warn_corrections"]
