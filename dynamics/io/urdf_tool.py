"""Step 7 of `from_urdf`: the robot's tool frame — the one given (checked), or a default chosen from the bodies
and frames the tree walk made (docs/models.md, "Default tool frame")."""

from __future__ import annotations

import re
import warnings

from ..checks import ModelError, stacklevel_outside
from .urdf_as_found import URDFWarning

_FINGER = re.compile("finger|knuckle|thumb", re.IGNORECASE)


def tool_frame_of(path, tool_frame, bodies, frames, frame_dict, fingers):
    """The given tool frame (checked), or the last frame welded by fixed joints to the last body that is
    not a gripper's finger — a joint with a <mimic> or its leader, coupled or not (loaded with
    mimic="independent", the Panda's tool was panda_rightfinger, not panda_hand_tcp); without one, the last frame welded to it through locked
    joints from its own link and then fixed joints (a UR with wrist_3_joint locked: tool0, not the bare
    wrist_2_link, which put a payload 0.18 m from the flange; fingers locked further on are passed over);
    else that body itself. Frames named for a finger (a gripper welded on, the Kinova's finger tips beside its
    j2s6s200_end_effector) are passed over while another is left."""
    if tool_frame is None:
        last = len(bodies) - 1
        while last > 0 and bodies[last]["joint"]["name"] in fingers:    # a gripper's fingers at the end
            last -= 1
        tips = ([fname for fname, b, _, how in frames if b == last and how == 1]
                or [fname for fname, b, _, how in frames if b == last and how in (2, 3)])
        tips = [t for t in tips if not _FINGER.search(t)] or tips   # Kinova's end_effector, not a finger tip
        chosen = tips[-1] if tips else bodies[last]["link"]
        parents = {bd["parent"] for bd in bodies}
        ends = [bd["link"] for k, bd in enumerate(bodies) if k not in parents
                and bd["joint"]["name"] not in fingers and not _FINGER.search(bd["joint"]["name"] + bd["link"])]
        if len(ends) > 1:     # (Talos's was right_sole_link, Tiago's a finger: a payload without a frame went there)
            warnings.warn(f"{path}: the robot branches ({len(ends)} ends: {', '.join(ends[:4])}"
                          f"{', …' if len(ends) > 4 else ''}); its default tool frame is '{chosen}', the last "
                          f"body's: give tool_frame= (--tool-frame) for the end effector you mean", URDFWarning,
                          stacklevel=stacklevel_outside())
        return chosen
    if tool_frame not in frame_dict and tool_frame not in [bd["link"] for bd in bodies]:
        raise ModelError(f"{path}: tool_frame '{tool_frame}': no such link on a moving body", argument="tool_frame")
    return tool_frame
