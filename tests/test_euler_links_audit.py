"""Gonçalves et al.'s Euler-angle models as a kinematics user writes them (audit): the link fields are checked
when the model is built, and `to_robot_model` gives the kinematics `euler_points` gives (eq. 1–6) also when a
link hangs at a connection point that a prismatic joint moves."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics.euler_zxz import EulerLink, euler_points, from_euler_zxz, revolute, to_robot_model, zxz_euler
from dynamics.forward_kinematics import frame_pose
from dynamics.model import ModelError


def _rail_with_sensor(sensor_kind: str):
    """A carriage on a rail (prismatic, eq. 1, slide v′ in the base's axes) and, hanging at the same connection
    point 'D' of the base, a second link: a camera (fixed) or an arm (revolute about its local x, eq. 3) — both
    carried along by the slide in the paper's recursion (they hang at B′ = D′ + d v′)."""
    v = np.array([1.0, 2.0, 2.0]) / 3.0
    links = [EulerLink("base", points={"D": (0.1, -0.2, 0.5)}),
             EulerLink("carriage", "base", "D", euler=(0.3, -0.7, 1.1), joint="d", slide=tuple(v),
                       points={"T": (0.0, 0.1, 0.2)})]
    sensor = dict(name="sensor", parent="base", attach="D", euler=(-0.4, 0.9, 0.2), points={"E": (0.3, 0.0, 0.1)})
    if sensor_kind == "revolute":
        sensor.update(joint="th", **{**revolute("x"), "euler": (-0.4, 0.9, 0.2)})
    links.append(EulerLink(**sensor))
    # listed before the carriage too: the recursion order of siblings is free
    return from_euler_zxz("rail", links), from_euler_zxz("rail2", [links[0], links[2], links[1]])


@pytest.mark.parametrize("sensor_kind", ["fixed", "revolute"])
def test_a_link_at_a_slid_connection_point_moves_with_the_slide(sensor_kind):
    """Oracle: the paper's recursion (`euler_points`, eq. 1–6: the sensor at B′ = D′ + d v′, turned by its own ZXZ
    angles, eq. 2–4), and the slide written out by hand. Before, `to_robot_model` left the sensor on the base at
    D′: at d = 0.4 m its point E was 0.4 m off (the RobotModel's forward kinematics, Jacobians and Λ wrong)."""
    for model in _rail_with_sensor(sensor_kind):
        robot = to_robot_model(model, frames={"E": ("sensor", "E"), "T": ("carriage", "T")})
        rng = np.random.default_rng(7)
        for _ in range(5):
            q = rng.uniform(-1.0, 1.0, model.n)
            P = euler_points(model, q)
            qr = np.array([q[model.joint_names.index(j)] for j in robot.joint_names])
            for frame, link, point in (("E", "sensor", "E"), ("T", "carriage", "T")):
                T = frame_pose(robot, qr, frame)
                np.testing.assert_allclose(T[:3, 3], P.point(link, point), atol=1e-12)
                np.testing.assert_allclose(T[:3, :3], P.R[link], atol=1e-12)
            # by hand: E = D′ + d v′ + R_sensor (E′ − A′), R_sensor = ZXZ(euler + gains·θ)
            d = q[model.joint_names.index("d")]
            angles = np.array((-0.4, 0.9, 0.2)) + (np.array((0, 1.0, 0)) * q[model.joint_names.index("th")]
                                                   if sensor_kind == "revolute" else 0.0)
            E = np.array((0.1, -0.2, 0.5)) + d * np.array([1.0, 2.0, 2.0]) / 3.0 + zxz_euler(*angles) @ [0.3, 0, 0.1]
            np.testing.assert_allclose(P.point("sensor", "E"), E, atol=1e-12)


@pytest.mark.parametrize("field, link, message", [
    ("euler", dict(euler=(0.1, 0.2)), "euler: expected shape (3,), got shape (2,)"),
    ("euler", dict(euler=(np.nan, 0, 0)), "euler: values must be finite numbers"),
    ("gains", dict(gains=(0, 1)), "gains: expected shape (3,), got shape (2,)"),
    ("gains", dict(gains="001"), "gains: expected numbers of shape (3,), got '001'"),
    ("point", dict(points={"E": (1.0, 2.0)}), "point 'E': expected shape (3,), got shape (2,)"),
    ("point", dict(points={"E": (1.0, 2.0, np.nan)}), "point 'E': values must be finite numbers"),
    ("slide", dict(slide=(0.0, 1.0), gains=(0, 0, 0)), "slide: expected shape (3,), got shape (2,)"),
])
def test_bad_link_fields_are_one_line_naming_model_link_and_field(field, link, message):
    """Before: numpy's broadcast or reshape errors naming no link (a wrong number of angles, gains, point or slide
    coordinates), a NaN point drawn as NaN, and gains="001" read character by character as (0, 0, 1)."""
    base = EulerLink("base", points={"D": (0, 0, 1)})
    kw = dict(joint="j", gains=(0, 0, 1))
    kw.update(link)
    with pytest.raises(ModelError) as err:
        from_euler_zxz("m", [base, EulerLink("arm", "base", "D", **kw)])
    text = str(err.value)
    assert text == f"model 'm', link 'arm': {message}" and "\n" not in text
