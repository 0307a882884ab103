"""Robot models in and out: DH tables (`dh`), URDF files (`urdf`, `urdf_args`, `urdf_xml`, `urdf_as_found`,
`urdf_mimic`, `urdf_collision`, `urdf_export`, and `packages`: where `package://` and `$(find)` point; `new_file`:
written whole or not at all), the built-in robots (`robots`) and CHARMIE (`charmie`).

Each parser is a free function returning a `dynamics.model.RobotModel`; none of them is imported by the
model (the aliases ``RobotModel.from_urdf`` … are attached in `dynamics._aliases`). The modules'
former homes (`dynamics.urdf`, `dynamics.builders`, …) re-export them.
"""

from .dh import from_dh, from_mdh
from .robots import load_robot
from .urdf import from_urdf
from .urdf_export import to_urdf, to_urdf_text

__all__ = ["from_dh", "from_mdh", "from_urdf", "load_robot", "to_urdf", "to_urdf_text"]
