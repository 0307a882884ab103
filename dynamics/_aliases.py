"""The documented aliases of the free builder, parser and payload functions as `RobotModel` methods.

``RobotModel.from_dh``, ``from_mdh``, ``from_urdf`` (class methods), ``robot.with_payload`` and
``robot.to_urdf`` are part of the public API (README, design.md). They are attached here, imported once
by `dynamics/__init__.py`, so that `dynamics.model` stays plain data and imports none of the modules that
build models (no import circle model ↔ builders/urdf/payload).
"""

from __future__ import annotations

from .io.dh import from_dh, from_mdh
from .io.urdf import from_urdf
from .io.urdf_export import to_urdf, to_urdf_text
from .model import RobotModel
from .payload import with_payload


def _from_mdh(cls, *args, **kwargs):
    """Model from a modified (Craig) DH table; see `dynamics.from_mdh`."""
    return from_mdh(*args, **kwargs)


def _from_dh(cls, *args, **kwargs):
    """Model from a standard DH table; see `dynamics.from_dh`."""
    return from_dh(*args, **kwargs)


def _from_urdf(cls, path, locked_joints=None, **kwargs):
    """Model from a URDF file; see `dynamics.from_urdf`."""
    return from_urdf(path, locked_joints=locked_joints, **kwargs)


def _with_payload(self, payload, frame=None, **kwargs):
    """New model with a carried object merged into the body holding `frame`; see `dynamics.with_payload`."""
    return with_payload(self, payload, frame=frame, **kwargs)


def _to_urdf(self, path=None) -> str:
    """The model as URDF text, or written to a new file `path` (never overwriting); see
    `dynamics.to_urdf` for what URDF can and cannot hold."""
    return to_urdf_text(self) if path is None else to_urdf(self, path)


RobotModel.from_mdh = classmethod(_from_mdh)
RobotModel.from_dh = classmethod(_from_dh)
RobotModel.from_urdf = classmethod(_from_urdf)
RobotModel.with_payload = _with_payload
RobotModel.to_urdf = _to_urdf
