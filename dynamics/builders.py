"""Former home of `dynamics.io.dh`; re-exports it so that old imports keep working."""

from .io.dh import (mdh_transform, dh_transform, mdh_chain, dh_chain, as_inertias, from_mdh, from_dh)  # noqa: F401
from .inertial_parameters import cylinder_inertia, inertia_matrix  # noqa: F401
from .spatial import homogeneous, rotx, roty, rotz, rpy_matrix, trans  # noqa: F401

__all__ = ["mdh_transform", "dh_transform", "mdh_chain", "dh_chain", "as_inertias", "from_mdh", "from_dh",
           "inertia_matrix", "cylinder_inertia", "homogeneous", "rotx", "roty", "rotz", "rpy_matrix", "trans"]
