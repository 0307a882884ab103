"""Former home of `dynamics.io.charmie`; re-exports it so that old imports keep working."""

from .io.charmie import (MM, PI, ACTUATORS, JOINT_NAMES, charmie_euler, charmie_robot, CharmieModels, charmie,  # noqa: F401
                         joint4_from_actuator, joint5_from_actuator, with_actuators)

__all__ = ["MM", "PI", "ACTUATORS", "JOINT_NAMES", "charmie_euler", "charmie_robot", "CharmieModels",
           "charmie", "joint4_from_actuator", "joint5_from_actuator", "with_actuators"]
