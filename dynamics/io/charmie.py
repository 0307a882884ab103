"""CHARMIE, the mobile manipulator of Gonçalves et al. (Robotics 2022), from the paper's tables.

Kinematic chain (Figure 8, Table 2): the base slides in x and y (d₁, d₂) and turns about z (θ₃);
the torso lifts (prismatic d₄, along −z′ of link 3) and tilts (θ₅ about x′); link 5 carries the left
arm (a), the right arm (b) and the head (c). Each arm has six revolute joints θ₇…θ₁₂ (z, x, z, x, z, x)
and a claw whose two halves turn by ±θ₁₃ about y′ (ZXZEuler(π/2, ±θ₁₃, 0)); the head pans (θ₇c, z)
and tilts (θ₈c, x). Joints 4 and 5 are driven through linear actuators c₃ and c₄ (Section 4.2,
`joint4_from_actuator`, `joint5_from_actuator`).

Points B′ᵢ are from Table 2, the head's points from Table 1 (B′₈c = (−14.75, 20, 201) mm, which
Table 2 rounds to −14.8), the actuator points from Tables 3 and 4. The paper gives no other link
geometry: drawing-only points are marked below. The claw centre ``tool`` = (0, 0, 140) mm in link 12
is the point of the paper's validation (Section 4.4), so the claw halves are drawn 125 mm long.
The paper's tables are in millimetres; the models here are in metres (SI).

The paper gives no inertial data, so the models are kinematics-only (zero masses) unless
``inertials`` (link name → (mass, centre of mass, inertia about it), local axes, metres) is given.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..euler_zxz import EulerLink, EulerModel, from_euler_zxz, revolute, to_robot_model
from ..checks import floats, short_repr
from ..model import ModelError, RobotModel

MM = 1e-3
PI = np.pi

#: actuators drawn as lines between points of two links: c₃ (E′₃ → F′₄), c₄ (G′₄ → E′₅)
ACTUATORS = ((("link3", "E"), ("link4", "F")), (("link4", "G"), ("link5", "E")))

# Table 1: the head (link 8c), local coordinates in mm
_HEAD = dict(B=(-14.75, 20, 201), C=(-11.83, 15.23, 75.68), E=(0, 0, 41), F=(55.25, 0, 41),
             G=(-84.75, 0, 41), H=(55.25, 0, -9), I=(-84.75, 0, -9), J=(55.25, 110, -9), K=(55.25, -70, -9),
             L=(-84.75, -70, -9), M=(-84.75, 110, -9), N=(55.25, 110, 201), O=(55.25, -70, 201),
             Q=(-84.75, -70, 201), R=(-84.75, 110, 201))
_HEAD_LINES = (("A", "E"), ("F", "G"), ("F", "H"), ("G", "I"), ("H", "I"),
               ("J", "K"), ("K", "L"), ("L", "M"), ("M", "J"), ("N", "O"), ("O", "Q"), ("Q", "R"), ("R", "N"),
               ("J", "N"), ("K", "O"), ("L", "Q"), ("M", "R"))


def _arm(side: str, shoulder: str, mount: tuple, claw_sign: float) -> list:
    """Links 6–13 of one arm (Table 2): 6 fixed, 7–12 revolute z, x, z, x, z, x, 13₁/13₂ the claw."""
    s = side
    links = [dict(name=f"link6{s}", parent="link5", attach=shoulder, euler=mount, points={"B": (0, 0, 30)})]
    lengths = (61.5, 145, 145, 140, 140, 15)
    for k, (axis, length) in enumerate(zip("zxzxzx", lengths)):
        pts = {"B": (0, 0, length)}
        if k == 5:
            pts["tool"] = (0, 0, 140)                 # claw centre (Section 4.4)
        links.append(dict(name=f"link{7 + k}{s}", parent=f"link{6 + k}{s}", attach="B",
                          joint=f"theta{7 + k}{s}", points=pts, **revolute(axis)))
    for half, sign in ((1, claw_sign), (2, -claw_sign)):
        links.append(dict(name=f"link13{s}{half}", parent=f"link12{s}", attach="B", euler=(PI / 2, 0, 0),
                          gains=(0, sign, 0), joint=f"theta13{s}", points={"tip": (0, 0, 125)}))  # drawing only
    return links


def _links_mm() -> list:
    links = [
        dict(name="link0", points={"B": (0, 0, 36.8)}),
        dict(name="link1", parent="link0", attach="B", joint="d1", slide=(1, 0, 0), points={"B": (0, 0, 0)}),
        dict(name="link2", parent="link1", attach="B", joint="d2", slide=(0, 1, 0), points={"B": (0, 0, 0)}),
        dict(name="link3", parent="link2", attach="B", joint="theta3", **revolute("z"),
             points={"B": (0, 0, 290), "E": (0, 257.5, 99.5), "e": (0, 0, 99.5)},        # e: drawing only
             lines=(("A", "B"), ("e", "E"))),
        dict(name="link4", parent="link3", attach="B", joint="d4", slide=(0, 0, -1),
             points={"B": (0, 0, 434), "F": (0, 162.5, 383), "G": (0, 87.5, 383), "f": (0, 0, 383)},
             lines=(("A", "B"), ("f", "F"))),
        dict(name="link5", parent="link4", attach="B", joint="theta5", **revolute("x"),
             points={"B5a": (-200, 3, 460), "B5b": (200, 3, 460), "B5c": (0, 0, 495), "E": (0, 122.5, 380),
                     "s": (0, 3, 460)},                                                     # s: drawing only
             lines=(("A", "s"), ("s", "B5a"), ("s", "B5b"), ("s", "B5c"), ("A", "E"))),
    ]
    links += _arm("a", "B5a", (PI / 2, -PI / 2, 0), 1.0)
    links += _arm("b", "B5b", (PI / 2, PI / 2, 0), -1.0)
    links += [
        dict(name="link6c", parent="link5", attach="B5c", points={"B": (0, 0, 46.3)}),
        dict(name="link7c", parent="link6c", attach="B", joint="theta7c", **revolute("z"),
             points={"B": (14.8, -5.3, 18.3)}),
        dict(name="link8c", parent="link7c", attach="B", joint="theta8c", **revolute("x"),
             points=_HEAD, lines=_HEAD_LINES),
        dict(name="link9c", parent="link8c", attach="B"),
    ]
    # recursion order: parents first, the claws last so that the first 19 joints are the RobotModel's
    claws = [lk for lk in links if lk["name"].startswith("link13")]
    return [lk for lk in links if not lk["name"].startswith("link13")] + claws


JOINT_NAMES = ("d1", "d2", "theta3", "d4", "theta5",
               *(f"theta{k}a" for k in range(7, 13)), *(f"theta{k}b" for k in range(7, 13)),
               "theta7c", "theta8c", "theta13a", "theta13b")


def charmie_euler() -> EulerModel:
    """The Euler-angle model (21 joint variables, ``JOINT_NAMES``; lengths in metres)."""
    links = []
    for lk in _links_mm():
        lk = dict(lk)
        lk["points"] = {k: np.asarray(v, float) * MM for k, v in lk.get("points", {}).items()}
        links.append(EulerLink(**lk))
    return from_euler_zxz("charmie", links, JOINT_NAMES)


def charmie_robot(inertials=None) -> RobotModel:
    """CHARMIE as a `RobotModel` for `forward_kinematics`: the 19 joints d1 … theta8c (the first 19 of
    ``JOINT_NAMES``), with the claws replaced by their centre as in the paper's validation
    (Section 4.4). Frames: ``flange`` (the tool frame, as for every built-in robot) and ``flange_b``
    at the claw pivots B′₁₂ of the left and right arm, ``tool_a``, ``tool_b`` at the claw centres,
    ``head_top`` (B′₈c), and the fixed links 6a, 6b, 6c, 9c."""
    return to_robot_model(charmie_euler(), inertials=inertials,
                          exclude=("link13a1", "link13a2", "link13b1", "link13b2"),
                          frames={"flange": ("link12a", "B"), "flange_b": ("link12b", "B"),
                                  "tool_a": ("link12a", "tool"), "tool_b": ("link12b", "tool"),
                                  "head_top": ("link8c", "B")},
                          tool_frame="flange")


class CharmieModels(NamedTuple):
    euler: EulerModel
    robot: RobotModel


def charmie(inertials=None) -> CharmieModels:
    """Both forms: the Euler-angle model (with the claws, 21 joints) and the RobotModel (19 joints)."""
    return CharmieModels(charmie_euler(), charmie_robot(inertials))


# ------------------------------------------------------------------ indirectly actuated joints
def _actuator_length(name: str, value) -> np.ndarray:
    """An actuator length [m], a number or an array of them, in mm; NaN, inf, text, None and booleans are a
    `ModelError` naming it (NaN went through eq. 7–23 as a NaN joint value, True as a 1 m actuator)."""
    arr = floats(name, value, "actuator lengths in metres")
    if not np.isfinite(arr).all():
        raise ModelError(f"{name}: actuator length must be a finite number of metres, got {short_repr(value)}")
    return arr / MM


def joint4_from_actuator(c3) -> np.ndarray:
    """Torso lift d₄ [m] from the length c₃ [m] of its linear actuator (eq. 7–14, Table 3)."""
    c3 = _actuator_length("c3", c3)
    E3y, E3z, F3y, D3z, F4z = 257.5, 99.5, 162.5, 290.0, 383.0
    a3 = F3y - E3y                                        # eq. 7
    if np.any(c3 < abs(a3)):
        raise ModelError(f"c3: actuator length must be at least {abs(a3) * MM} m, got {np.min(c3) * MM}")
    alpha3 = np.arccos(a3 / c3)                           # eq. 8
    b3 = c3 * np.sin(alpha3)                              # eq. 9
    F3z = E3z + b3                                        # eq. 10
    e3 = F3z - D3z                                        # eq. 11
    b4 = F4z - 0.0                                        # eq. 12 (A′₄ = 0)
    return (b4 - e3) * MM                                 # eq. 13–14


def joint5_from_actuator(c4) -> np.ndarray:
    """Torso tilt θ₅ [rad] from the length c₄ [m] of its linear actuator (eq. 15–23, Table 4).

    H′₄ (the actuator's end on link 5, in link 4's axes) is an intersection of the circles about G′₄
    (radius c₄) and B′₄ (radius a₅). Eq. 21 is used as h₄ = √(c₄² − l₄²) and eq. 23 with −h₄/e₄ so that
    H′₄ lies on both circles (the printed forms lack the root and the sign); of the two intersections
    this is the one that gives θ₅ = 0 for the upright torso. Angles by atan2."""
    c4 = _actuator_length("c4", c4)
    B4y, B4z, G4y, G4z, E5y, E5z = 0.0, 434.0, 87.5, 383.0, 122.5, 380.0
    a5 = np.hypot(E5y, E5z)                               # eq. 18 (A′₅ = 0)
    e4 = np.hypot(B4y - G4y, B4z - G4z)                   # eq. 19
    if np.any(c4 < abs(a5 - e4)) or np.any(c4 > a5 + e4):
        raise ModelError(f"c4: actuator length must be in [{abs(a5 - e4) * MM:.4f}, {(a5 + e4) * MM:.4f}] m")
    l4 = (c4 ** 2 - a5 ** 2 + e4 ** 2) / (2 * e4)         # eq. 20
    h4 = np.sqrt(c4 ** 2 - l4 ** 2)                       # eq. 21
    H4y = l4 / e4 * (B4y - G4y) + h4 / e4 * (B4z - G4z) + G4y      # eq. 22
    H4z = l4 / e4 * (B4z - G4z) - h4 / e4 * (B4y - G4y) + G4z      # eq. 23
    alpha4 = np.arctan2(H4z - B4z, H4y - B4y)             # eq. 16
    beta5 = np.arctan2(E5y, E5z)                          # eq. 17
    return alpha4 + beta5 - PI / 2                        # eq. 15


def with_actuators(q, c3=None, c4=None) -> np.ndarray:
    """A copy of CHARMIE joint values (…, 19 or 21) with d₄ and θ₅ set from actuator lengths [m]."""
    q = np.array(q, dtype=float)
    if c3 is not None:
        q[..., 3] = joint4_from_actuator(c3)
    if c4 is not None:
        q[..., 4] = joint5_from_actuator(c4)
    return q
