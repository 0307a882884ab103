"""Built-in robot models, each typed in from a cited public source (see docs/models.md and
shared/reference/robots.md).

    load_robot("iiwa7")    KUKA LBR iiwa 7 R800 (default): Drake link frames and inertias, KST kinematics
    load_robot("panda")    Franka Emika Panda: Franka's modified DH + Gaz et al. (RA-L 2019) dynamics
    load_robot("ur5e")     Universal Robots UR5e: UR's standard DH + masses/COMs; tensors from UR's ROS 2 description
    load_robot("puma560")  Unimation PUMA 560: Corke's standard-DH model (Corke & Armstrong-Helouvry 1994)
    load_robot("planar4")  Nicolato's 4-link planar arm (0.2 m links); inertial data assumed

Every model has a frame named ``flange`` (the mechanical tool flange, or the arm tip for planar4), which is
also its ``tool_frame``. Models are immutable, so the same object is returned on every call.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..checks import ModelError, short_repr
from ..inertial_parameters import cylinder_inertia
from ..model import RobotModel
from ..spatial import homogeneous, rpy_matrix, trans
from .dh import from_dh, from_mdh

__all__ = ["load_robot", "BUILTIN_ROBOTS"]

_DEG = np.pi / 180.0
_PI = np.pi


# ----------------------------------------------------------------------------------------- iiwa 7
def _iiwa7() -> RobotModel:
    """KUKA LBR iiwa 7 R800.

    Link frames and inertial data: Drake, ``manipulation/models/iiwa_description/iiwa7/
    iiwa7_no_collision.sdf`` (link poses at q = 0 in the base frame; inertia about the COM along the
    link axes, products zero). Kinematics checked against the modified DH table of the KUKA Sunrise
    Toolbox (``Matlab_client/constDhDataOf7R800.m``: d = 0.34, 0, 0.40, 0, 0.40, 0, 0.126, a = 0,
    α = 0, −π/2, π/2, π/2, −π/2, −π/2, π/2), which is also KUKA's data-sheet geometry. Drake puts the
    link-2 and link-6 origins, and so the horizontal axes A2 and A6, at z = 0.3405 and 1.1395 m, 0.5 mm
    above KUKA's 0.340 and 1.140 m; here those two link origins are moved down to KUKA's axes (their
    COMs, given in the link frames, move with them by 0.5 mm). With that change the flange pose equals
    the MDH chain to rounding (tests/test_models.py).
    Limits: epfl-lasa/iiwa_ros ``iiwa_description/urdf/iiwa7.xacro``. Rated payload 7 kg.
    """
    # (origin z in the base frame at q = 0, rpy) of links 1..7 (Drake), A2/A6 corrected to KUKA's axes
    origins = [
        (0.1575, (0.0, 0.0, 0.0)),
        (0.3400, (_PI / 2, 0.0, -_PI)),   # Drake: 0.3405
        (0.5245, (0.0, 0.0, 0.0)),
        (0.7400, (_PI / 2, 0.0, 0.0)),
        (0.9240, (0.0, 0.0, -_PI)),
        (1.1400, (_PI / 2, 0.0, -_PI)),   # Drake: 1.1395
        (1.2200, (0.0, 0.0, 0.0)),
    ]
    world = [homogeneous(rpy_matrix(*rpy), (0.0, 0.0, z)) for z, rpy in origins]
    place = [world[0]] + [np.linalg.solve(world[i - 1], world[i]) for i in range(1, 7)]
    masses = [2.7025, 2.7258, 3.175, 2.73, 1.69, 1.8, 0.4]
    coms = [(0, -0.0347, 0.113), (0, 0.0668, 0.0344), (0, 0.0296, 0.1265), (0, 0.067, 0.034),
            (0.0001, 0.021, 0.076), (0, 0.0026, 0.0005), (0, 0, 0.0294)]
    inertias = [np.diag(v) for v in [(0.0171, 0.0163, 0.006), (0.0170, 0.0162, 0.0061),
                                     (0.025, 0.0238, 0.0076), (0.017, 0.0162, 0.0061),
                                     (0.01, 0.0087, 0.00449), (0.0051, 0.0049, 0.0035),
                                     (0.0004, 0.0004, 0.0005)]]
    # (base link 0 — 3.863 kg, COM (−0.013, 0, 0.07) — is fixed and does not enter the dynamics)
    # Flange: MDH d7 = 0.126 m beyond the A6 axis (z = 1.14) -> z = 1.266, i.e. 0.046 m along z7 from
    # Drake's link-7 origin (z = 1.22). The media flange (electric/pneumatic/IO) adds 0.035 m.
    flange = trans(z=1.266 - 1.22)
    return RobotModel.create(
        name="iiwa7",
        parents=np.arange(-1, 6),
        joint_types=["revolute"] * 7,
        placement_rotations=[T[:3, :3] for T in place],
        placement_translations=[T[:3, 3] for T in place],
        axes=np.tile([0.0, 0.0, 1.0], (7, 1)),
        masses=masses, coms=coms, inertias=inertias,
        joint_names=[f"iiwa_joint_{i}" for i in range(1, 8)],
        link_names=[f"iiwa_link_{i}" for i in range(1, 8)],
        base_name="iiwa_link_0",
        q_max=np.array([170, 120, 170, 120, 170, 120, 175]) * _DEG,
        q_min=-np.array([170, 120, 170, 120, 170, 120, 175]) * _DEG,
        qd_max=np.array([98, 98, 100, 130, 140, 180, 180]) * _DEG,
        tau_max=[176, 176, 110, 110, 110, 40, 40],
        frames={"flange": (6, flange), "media_flange": (6, flange @ trans(z=0.035))},
        tool_frame="flange",
        rated_payload=7.0,
    )


# ----------------------------------------------------------------------------------------- Panda
# Gaz et al. friction model (github.com/marcocognetti/FrankaEmikaPandaDynModel, get_FrictionTorque.m):
# τ_f = FI/(1+exp(−FII(q̇+FIII))) − FI/(1+exp(−FII·FIII)). Kept here for users who need it.
PANDA_FRICTION_GAZ = {
    "FI": (0.54615, 0.87224, 0.64068, 1.2794, 0.83904, 0.30301, 0.56489),
    "FII": (5.1181, 9.0657, 10.136, 5.5903, 8.3469, 17.133, 10.336),
    "FIII": (0.039533, 0.025882, -0.04607, 0.036194, 0.026226, -0.021047, 0.0035526),
}


def _panda() -> RobotModel:
    """Franka Emika Panda.

    Modified DH table, flange (d = 0.107 m) and limits: frankaemika.github.io/docs/control_parameters.html
    (``control-parameters-joint-panda.csv``). Dynamics: Gaz, Cognetti, Oliva, Robuffo Giordano,
    De Luca, "Dynamic identification of the Franka Emika Panda robot with retrieval of feasible
    parameters using penalty-based optimization", RA-L 2019 (github.com/marcocognetti/
    FrankaEmikaPandaDynModel, ``matlab/ConvertDynPars2VREP/DynPars2VREP.m``): COM in the Craig link
    frame, inertia about the COM. Link-1 COM z = −0.04762 as in MuJoCo Menagerie (irrelevant for a
    fixed base). Friction: the identified sigmoid model (`PANDA_FRICTION_GAZ`) tends to ±FI/2
    (to within FI·σ(FII·FIII) − FI/2) away from zero speed; its symmetric Coulomb equivalent FI/2 is
    used. Rated payload 3 kg.
    """
    alpha = [0, -_PI / 2, _PI / 2, _PI / 2, -_PI / 2, _PI / 2, _PI / 2]
    a = [0, 0, 0, 0.0825, -0.0825, 0, 0.088]
    d = [0.333, 0, 0.316, 0, 0.384, 0, 0]
    masses = [4.970684, 0.646926, 3.228604, 3.587895, 1.225946, 1.666555, 0.735522]
    coms = [(3.875e-3, 2.081e-3, -4.762e-2), (-3.141e-3, -2.872e-2, 3.495e-3),
            (2.7518e-2, 3.9252e-2, -6.6502e-2), (-5.317e-2, 1.04419e-1, 2.7454e-2),
            (-1.1953e-2, 4.1065e-2, -3.8437e-2), (6.0149e-2, -1.4117e-2, -1.0517e-2),
            (1.0517e-2, -4.252e-3, 6.1597e-2)]
    # Ixx, Iyy, Izz, Ixy, Ixz, Iyz
    inertias = [(.70337, .70661, 9.117e-3, -1.39e-4, 6.772e-3, 1.9169e-2),
                (7.962e-3, 2.811e-2, 2.5995e-2, -3.925e-3, 1.0254e-2, 7.04e-4),
                (3.7242e-2, 3.6155e-2, 1.083e-2, -4.761e-3, -1.1396e-2, -1.2805e-2),
                (2.5853e-2, 1.9552e-2, 2.8323e-2, 7.796e-3, -1.332e-3, 8.641e-3),
                (3.5549e-2, 2.9474e-2, 8.627e-3, -2.117e-3, -4.037e-3, 2.29e-4),
                (1.964e-3, 4.354e-3, 5.433e-3, 1.09e-4, -1.158e-3, 3.41e-4),
                (1.2516e-2, 1.0027e-2, 4.815e-3, -4.28e-4, -1.196e-3, -7.41e-4)]
    return from_mdh(
        "panda", alpha, a, d, None, masses, coms, inertias,
        q_min=[-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973],
        q_max=[2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973],
        qd_max=[2.175] * 4 + [2.61] * 3,
        qdd_max=[15, 7.5, 10, 12.5, 15, 20, 20],
        tau_max=[87] * 4 + [12] * 3,
        coulomb=np.array(PANDA_FRICTION_GAZ["FI"]) / 2.0,
        flange=0.107,
        rated_payload=3.0,
        joint_names=[f"panda_joint{i}" for i in range(1, 8)],
        link_names=[f"panda_link{i}" for i in range(1, 8)],
        base_name="panda_link0",
    )


# ----------------------------------------------------------------------------------------- UR5e
def _ur5e() -> RobotModel:
    """Universal Robots UR5e.

    Standard DH table, masses and COMs (in the DH link frames): universal-robots.com, "DH parameters
    for calculations of kinematics and dynamics". That article gives no inertia tensors. The tensors
    here are those of UR's ROS 2 description (github.com/UniversalRobots/
    Universal_Robots_ROS2_Description, ``config/ur5e/physical_parameters.yaml``, CAD-derived, about
    the COM). That file expresses them in an inertial frame rotated by ``inertia_parameters.rotation``
    from the ROS link frame; composing that rotation with the ROS-link-to-DH axis map stated in the
    same file's COM comments (e.g. shoulder: x = model.x, y = −model.z, z = model.y, roll π/2) gives
    the DH link frame for every link, so the six entries are used as DH-frame tensors unchanged.
    ⚠ Assumed: that frame reading, and the tensors themselves (CAD estimates, not identified).
    (An older version of the same file modelled each link as a cylinder; see docs/models.md.)
    Limits: ``config/ur5e/joint_limits.yaml`` of the same repository. Rated payload 5 kg.
    """
    alpha = [_PI / 2, 0, 0, _PI / 2, -_PI / 2, 0]
    a = [0, -0.425, -0.3922, 0, 0, 0]
    d = [0.1625, 0, 0, 0.1333, 0.0997, 0.0996]
    masses = [3.761, 8.058, 2.846, 1.37, 1.3, 0.365]
    coms = [(0, -0.02561, 0.00193), (0.2125, 0, 0.11336), (0.15, 0, 0.0265),
            (0, -0.0018, 0.01634), (0, 0.0018, 0.01634), (0, 0, -0.001159)]
    # Ixx, Iyy, Izz, Ixy, Ixz, Iyz
    inertias = [(0.00700210, 0.00648091, 0.00657286, 0.00000073, -0.00001053, 0.00049994),
                (0.01505885, 0.33388086, 0.33247207, -0.00005400, 0.00000563, -0.00000181),
                (0.00399632, 0.07879254, 0.07848510, -0.00001365, 0.00137272, -0.00000660),
                (0.00165491, 0.00135962, 0.00126279, -0.00000282, -0.00000438, 0.00010157),
                (0.00135617, 0.00127827, 0.00096614, -0.00000274, 0.00000444, -0.00005048),
                (0.00018694, 0.00018908, 0.00025756, 0.00000006, -0.00000017, -0.00000092)]
    qlim = np.array([360, 360, 180, 360, 360, 360]) * _DEG
    return from_dh(
        "ur5e", alpha, a, d, None, masses, coms, inertias,
        q_min=-qlim, q_max=qlim, qd_max=np.pi, tau_max=[150, 150, 150, 28, 28, 28],
        rated_payload=5.0,
        joint_names=["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint",
                     "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"],
        link_names=["shoulder_link", "upper_arm_link", "forearm_link",
                    "wrist_1_link", "wrist_2_link", "wrist_3_link"],
        base_name="base_link",
    )


# ----------------------------------------------------------------------------------------- PUMA 560
PUMA560_JM = (200e-6, 200e-6, 200e-6, 33e-6, 33e-6, 33e-6)          # motor rotor inertia, kg m² (Corke)
PUMA560_GEAR = (-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686)


def _puma560() -> RobotModel:
    """Unimation PUMA 560: Corke's model as published, rotor inertia included.

    Source: Corke, Robotics Toolbox for Python, ``roboticstoolbox/models/DH/Puma560.py`` (numbers from
    Corke & Armstrong-Helouvry, ICRA 1994; joint limits from Wang & Chen 1991). Standard DH, COM in the
    DH link frame, inertia about the COM.

    The published numbers are used unchanged, with their two oddities (shared/reference/robots.md): link 1
    has no mass and only I_yy = 0.35 kg m² (its moment about the joint-1 axis), and link 3's principal
    moments (0.066, 0.086, 0.0125) violate the triangle inequality. No mass distribution has these, but the
    dynamics need only positive semi-definite inertias (as in Pinocchio), so the model is built with
    ``realisable_inertias=False``.

    Rotor inertia: each motor's J_m reflected through its gear ratio G, G²·J_m (0.78, 2.33, 0.58, 0.19,
    0.17, 0.19 kg m²), is the joint's ``armature``, added to M's diagonal as Corke's ``inertia``/``rne`` do.
    Friction: Corke's motor-side values referred to the link side, viscous G²B and Coulomb |G|·mean(|Tc⁺|,
    |Tc⁻|) (the asymmetry of Tc is averaged away). No velocity or torque limits are given by the source:
    they are unlimited (set them with `RobotModel.with_limits`).
    """
    alpha = [_PI / 2, 0, -_PI / 2, _PI / 2, -_PI / 2, 0]
    a = [0, 0.4318, 0.0203, 0, 0, 0]
    d = [0.672, 0, 0.15005, 0.4318, 0, 0]
    masses = [0.0, 17.4, 4.8, 0.82, 0.34, 0.09]
    coms = [(0, 0, 0), (-0.3638, 0.006, 0.2275), (-0.0203, -0.0141, 0.070), (0, 0.019, 0),
            (0, 0, 0), (0, 0, 0.032)]
    inertias = [(0, 0.35, 0), (0.13, 0.524, 0.539), (0.066, 0.086, 0.0125),
                (1.8e-3, 1.3e-3, 1.8e-3), (0.3e-3, 0.4e-3, 0.3e-3), (0.15e-3, 0.15e-3, 0.04e-3)]
    G = np.array(PUMA560_GEAR)
    B = np.array([1.48e-3, .817e-3, 1.38e-3, 71.2e-6, 82.6e-6, 36.7e-6])
    Tc = np.array([[.395, -.435], [.126, -.071], [.132, -.105], [11.2e-3, -16.9e-3],
                   [9.26e-3, -14.5e-3], [3.96e-3, -10.5e-3]])
    qlim = np.array([[-160, 160], [-45, 225], [-225, 45], [-110, 170], [-100, 100], [-266, 266]]) * _DEG
    return from_dh(
        "puma560", alpha, a, d, None, masses, coms, inertias,
        q_min=qlim[:, 0], q_max=qlim[:, 1],
        coulomb=np.abs(G) * np.abs(Tc).mean(axis=1), viscous=G**2 * B,
        armature=G**2 * np.array(PUMA560_JM), realisable_inertias=False,
    )


# ----------------------------------------------------------------------------------------- planar 4R
def _planar4() -> RobotModel:
    """Nicolato et al.'s planar 4R arm (seed paper shared/seeds/nicolato-2005-…: four revolute joints
    about z, link lengths 0.2 m, joint range ±π).

    ⚠ Assumed (the paper has no dynamics): each link a uniform solid cylinder of 1 kg, length 0.2 m,
    radius 0.01 m, along its link x axis; qd_max 3 rad/s, tau_max 20, 10, 5, 2.5 N·m. Gravity is
    (0, 0, −9.81), perpendicular to the plane of motion, so g(q) = 0. ``flange`` is the arm tip.
    """
    n, L, m, r = 4, 0.2, 1.0, 0.01
    return RobotModel.create(
        name="planar4",
        parents=np.arange(-1, n - 1),
        joint_types=["revolute"] * n,
        placement_rotations=np.tile(np.eye(3), (n, 1, 1)),
        placement_translations=[(0.0, 0.0, 0.0)] + [(L, 0.0, 0.0)] * (n - 1),
        axes=np.tile([0.0, 0.0, 1.0], (n, 1)),
        masses=[m] * n,
        coms=[(L / 2, 0.0, 0.0)] * n,
        inertias=[cylinder_inertia(m, r, L, axis=0)] * n,
        q_min=-np.pi, q_max=np.pi, qd_max=3.0, tau_max=[20.0, 10.0, 5.0, 2.5],
        frames={"flange": (n - 1, trans(L))},
        tool_frame="flange",
    )


def _charmie() -> RobotModel:
    """CHARMIE (Gonçalves et al. 2022, Table 2), kinematics only; see dynamics/charmie.py."""
    from .charmie import charmie_robot
    return charmie_robot()


_BUILDERS = {"iiwa7": _iiwa7, "panda": _panda, "ur5e": _ur5e, "puma560": _puma560, "planar4": _planar4,
             "charmie": _charmie}
BUILTIN_ROBOTS = tuple(_BUILDERS)


@lru_cache(maxsize=None)
def _load(key: str) -> RobotModel:
    return _BUILDERS[key]()


def load_robot(name: str = "iiwa7") -> RobotModel:
    """A built-in robot model by name (case-insensitive): iiwa7 (default), panda, ur5e, puma560, planar4."""
    key = str(name).strip().lower().replace("-", "").replace("_", "")
    aliases = {"iiwa": "iiwa7", "lbriiwa7": "iiwa7", "iiwa7r800": "iiwa7", "puma": "puma560",
               "frankapanda": "panda"}
    key = aliases.get(key, key)
    if key not in _BUILDERS:
        # (short_repr: a name with a newline, an array or a 400-digit int must still give one short line)
        raise ModelError(f"robot {short_repr(name)}: unknown built-in robot (known: {', '.join(BUILTIN_ROBOTS)})")
    return _load(key)
