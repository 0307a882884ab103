"""Former grab-bag of shared helpers, kept so that old imports keep working.

Input checks now live in `dynamics.checks`, cross products and rotations in `dynamics.spatial`, the
world-frame quantities and body poses in `dynamics.kinematics`; new code imports from those.
"""

from .checks import as_batch, same_batch  # noqa: F401
from .kinematics import (World, WorldT, _axis_frames, _sin_cos, body_poses, world_quantities,  # noqa: F401
                         world_quantities_into, world_quantities_t)
from .spatial import axis_rotation, cross, cross3  # noqa: F401
