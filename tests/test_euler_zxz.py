"""Gonçalves et al. (2022): ZXZ Euler-angle forward kinematics, the CHARMIE model, and drawings."""

from __future__ import annotations

import numpy as np
import pytest

import dynamics
from dynamics.charmie import (ACTUATORS, JOINT_NAMES, charmie, charmie_euler, charmie_robot, joint4_from_actuator,
                              joint5_from_actuator, with_actuators)
from dynamics.euler_zxz import EulerLink, euler_points, from_euler_zxz, revolute, to_robot_model, zxz_euler
from dynamics.model import ModelError

MM = 1e-3


def Rx(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def Rz(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def Ry(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def test_zxz_euler_eq2_eq3():
    rng = np.random.default_rng(0)
    a = rng.uniform(-np.pi, np.pi, (10, 3))
    R = zxz_euler(a[:, 0], a[:, 1], a[:, 2])
    for k in range(10):
        assert np.allclose(R[k], Rz(a[k, 0]) @ Rx(a[k, 1]) @ Rz(a[k, 2]), atol=1e-14)
    assert np.allclose(R @ np.swapaxes(R, 1, 2), np.eye(3), atol=1e-14)
    t = 0.7
    assert np.allclose(zxz_euler(0, t, 0), Rx(t))                       # eq. 3, x
    assert np.allclose(zxz_euler(np.pi / 2, t, 0), Ry(t) @ Rz(np.pi / 2))  # eq. 3, y (turns x′ into y)
    assert np.allclose(zxz_euler(0, 0, t), Rz(t))                       # eq. 3, z


def test_charmie_builds():
    models = charmie()
    assert models.euler.n == 21 and models.euler.joint_names == JOINT_NAMES
    robot = models.robot
    assert robot.n == 19 and robot.joint_names == JOINT_NAMES[:19] and not robot.is_serial
    assert "".join("P" if t == "prismatic" else "R" for t in robot.joint_types) == "PPRPR" + "R" * 14
    assert {"flange", "flange_b", "tool_a", "tool_b", "head_top", "link9c"} <= set(robot.frame_names)
    assert robot.tool_frame == "flange"
    assert np.all(robot.masses == 0)                                    # kinematics only
    assert isinstance(charmie_robot(), dynamics.RobotModel)


def _charmie_points(q):
    q = np.asarray(q, float)
    P = euler_points(charmie_euler(), np.concatenate((q, np.zeros(21 - q.size))) if q.size < 21 else q)
    return P


def test_charmie_fk_hand_computed_zero():
    """q = 0: the arms stretch sideways (T-pose). Table 2 offsets, in mm:
    z: 36.8 (link 0) + 290 (link 3) + 434 (link 4) + 460 (B5a) = 1220.8; x: 200 + 30 + 61.5 + 145 + 145
    + 140 + 140 + 15 + 125 (claw centre, 140 from A′12) = 1001.5."""
    P = _charmie_points(np.zeros(21))
    assert np.allclose(P.point("link12a", "tool"), np.array([-1001.5, 3, 1220.8]) * MM, atol=1e-12)
    assert np.allclose(P.point("link12b", "tool"), np.array([1001.5, 3, 1220.8]) * MM, atol=1e-12)
    # head top: 760.8 + 495 + 46.3 + 18.3 + 201 = 1521.4; x = 14.8 − 14.75, y = −5.3 + 20
    assert np.allclose(P.point("link9c", "A"), np.array([0.05, 14.7, 1521.4]) * MM, atol=1e-12)
    assert np.allclose(P.point("link5", "A"), np.array([0, 0, 760.8]) * MM, atol=1e-12)


def test_charmie_fk_hand_computed_base_motion():
    """d1 = 0.1 m, d2 = 0.2 m, θ3 = 90°: the body turns about z at (100, 200) mm."""
    q = np.zeros(21)
    q[:3] = 0.1, 0.2, np.pi / 2
    P = _charmie_points(q)
    assert np.allclose(P.point("link12a", "tool"), np.array([97.0, -801.5, 1220.8]) * MM, atol=1e-12)
    assert np.allclose(P.point("link3", "A"), np.array([100.0, 200.0, 36.8]) * MM, atol=1e-12)


def test_charmie_fk_hand_computed_tilt_and_head():
    """θ5 = 0.3 (torso tilt about x′ at link 5's origin), θ7c = 0.25 (pan), θ8c = −0.2 (tilt)."""
    t5, t7, t8 = 0.3, 0.25, -0.2
    q = np.zeros(21)
    q[JOINT_NAMES.index("theta5")] = t5
    q[JOINT_NAMES.index("theta7c")] = t7
    q[JOINT_NAMES.index("theta8c")] = t8
    P = _charmie_points(q)
    neck = np.array([0, 0, 495 + 46.3])                  # A′7c relative to A′5
    head = neck + Rz(t7) @ np.array([14.8, -5.3, 18.3])  # A′8c
    top = head + Rz(t7) @ Rx(t8) @ np.array([-14.75, 20, 201])
    expect = np.array([0, 0, 760.8]) + Rx(t5) @ top
    assert np.allclose(P.point("link9c", "A"), expect * MM, atol=1e-12)


def test_charmie_claws():
    """Claw halves ZXZEuler(π/2, ±θ13, 0) open symmetrically; tips 125 mm from the pivot."""
    t = 0.4
    q = np.zeros(21)
    q[JOINT_NAMES.index("theta13a")] = t
    P = _charmie_points(q)
    pivot = np.array([-876.5, 3, 1220.8])
    assert np.allclose(P.point("link13a1", "tip"), (pivot + 125 * np.array([-np.cos(t), np.sin(t), 0])) * MM)
    assert np.allclose(P.point("link13a2", "tip"), (pivot + 125 * np.array([-np.cos(t), -np.sin(t), 0])) * MM)


def test_charmie_robotmodel_matches_euler_fk():
    E, robot = charmie()
    q = np.random.default_rng(1).uniform(-1.5, 1.5, (6, 21))
    P = euler_points(E, q)
    T = dynamics.forward_kinematics(robot, q[:, :19])
    for b, name in enumerate(robot.link_names):
        assert np.allclose(T[:, b, :3, 3], P.point(name, "A"), atol=1e-12)
        assert np.allclose(T[:, b, :3, :3], P.R[name], atol=1e-12)
    for frame, (link, point) in {"tool_a": ("link12a", "tool"), "tool_b": ("link12b", "tool"),
                                 "head_top": ("link9c", "A"), "flange": ("link13a1", "A")}.items():
        assert np.allclose(dynamics.frame_pose(robot, q[:, :19], frame)[:, :3, 3], P.point(link, point), atol=1e-12)
    single = euler_points(E, q[0])
    assert np.allclose(single.point("link12b", "tool"), P.point("link12b", "tool")[0])


def test_charmie_actuated_joints():
    """Eq. 14 by hand, and the actuators close: |E3 F4| = c3 and |G4 E5| = c4 (Section 4.2) over the
    validation motion of Section 4.4 (c3: 400 → 500 mm, c4: 350 → 400 mm in 20 s)."""
    assert np.isclose(joint4_from_actuator(0.4), (383 - 99.5 + 290 - np.sqrt(400 ** 2 - 95 ** 2)) * MM)
    upright = np.hypot(122.5 - 87.5, 434 + 380 - 383) * MM              # E5 straight above B4
    assert abs(joint5_from_actuator(upright)) < 1e-12
    t = np.linspace(0, 20, 9)
    c3, c4 = 0.4 + 0.005 * t, 0.35 + 0.0025 * t
    q = with_actuators(np.zeros((t.size, 21)), c3, c4)
    P = euler_points(charmie_euler(), q)
    (l3a, l3b), (l4a, l4b) = ACTUATORS
    assert np.allclose(np.linalg.norm(P.point(*l3a) - P.point(*l3b), axis=-1), c3, atol=1e-12)
    assert np.allclose(np.linalg.norm(P.point(*l4a) - P.point(*l4b), axis=-1), c4, atol=1e-12)
    assert np.all(np.diff(q[:, 4]) > 0)                                  # longer c4: torso straightens
    with pytest.raises(ModelError):
        joint4_from_actuator(0.05)
    with pytest.raises(ModelError):
        joint5_from_actuator(1.0)


def test_euler_model_checks():
    base = EulerLink("base", points={"B": (0, 0, 1)})
    with pytest.raises(ModelError, match="no connection point"):
        from_euler_zxz("bad", [base, EulerLink("arm", "base", "X", joint="q1", **revolute("z"))])
    with pytest.raises(ModelError, match="must come before"):
        from_euler_zxz("bad", [EulerLink("arm", "base", "B", joint="q1", **revolute("z")), base])
    twins = from_euler_zxz("twins", [base, EulerLink("f1", "base", "B", joint="q", gains=(0, 1, 0)),
                                     EulerLink("f2", "base", "B", joint="q", gains=(0, -1, 0))])
    with pytest.raises(ModelError, match="moves links"):
        to_robot_model(twins)
    assert to_robot_model(twins, exclude=("f2",)).n == 1
    with pytest.raises(ModelError, match=r"expected shape \(1,\) or \(N, 1\)"):
        euler_points(twins, np.zeros(3))


def test_inertials_are_merged():
    """A fixed link's mass is carried by its moving parent (parallel-axis theorem)."""
    links = [EulerLink("base", points={"B": (0, 0, 0.1)}),
             EulerLink("arm", "base", "B", joint="q1", **revolute("x"), points={"B": (0, 0, 0.5)}),
             EulerLink("hand", "arm", "B")]
    m = from_euler_zxz("pendulum", links)
    I = np.diag([0.01, 0.01, 0.002])
    robot = to_robot_model(m, inertials={"arm": (2.0, (0, 0, 0.25), I), "hand": (1.0, (0, 0, 0), np.zeros((3, 3)))})
    assert robot.masses[0] == 3.0 and np.allclose(robot.coms[0], [0, 0, 1.0 / 3.0])
    Mq = dynamics.mass_matrix(robot, np.zeros(1))
    assert np.isclose(Mq[0, 0], 0.01 + 2.0 * 0.25 ** 2 + 1.0 * 0.5 ** 2)


def test_draw_png(tmp_path):
    from toppra_app.drawing import draw_robot, save_figure
    out = tmp_path / "charmie.png"
    q = np.zeros(21)
    q[JOINT_NAMES.index("theta8a")] = 1.0
    ax = draw_robot(charmie_euler(), q, extra_lines=ACTUATORS)
    save_figure(ax.figure, out)
    assert out.exists() and out.stat().st_size > 1000
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".draw-")]
    ax = draw_robot(charmie_robot(), np.zeros(19))
    save_figure(ax.figure, tmp_path / "robot.png")
    assert (tmp_path / "robot.png").stat().st_size > 1000


def test_draw_command(tmp_path, capsys):
    from toppra_app.cli import main
    out = tmp_path / "c.png"
    assert main(["draw", "charmie", "--q", ",".join(["0.1"] * 19), "--out", str(out)]) == 0
    assert out.stat().st_size > 1000
    assert main(["draw", "charmie", "--q", "1,2,3", "--out", str(out)]) == 2
    assert "--q" in capsys.readouterr().err
    # accepted silently before (a hunt): a NaN joint value, --lock on a built-in robot, a NaN view angle
    for args, flag in ((["--q", "1,2,nan,0,0,0,0"], "--q: value 3 is nan"), (["--lock", "j1=0"], "--lock: only for"),
                       (["--elev", "nan"], "--elev"), (["--azim", "inf"], "--azim")):
        assert main(["draw", "iiwa7", *args, "--out", str(tmp_path / "x.png")]) == 2
        err = capsys.readouterr().err.strip()
        assert flag in err and len(err.splitlines()) == 1
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("q, what", [
    (np.full(21, np.nan), "non-finite value at sample 0, joint 0"),
    ("0," * 21, "text"), ([True] * 21, "boolean"), ([10 ** 400] * 21, "non-numeric"),
    (np.zeros(3), "expected shape (21,) or (N, 21)"), (np.zeros((2, 2, 21)), "expected shape (21,) or (N, 21)")])
def test_euler_points_refuses_bad_q_in_one_line(q, what):
    """Before: NaN and booleans were drawn as NaN/1-rad points, text gave numpy's bare "could not convert",
    a huge int an OverflowError."""
    with pytest.raises(ModelError) as err:
        euler_points(charmie_euler(), q)
    assert str(err.value).startswith("q: ") and what in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("bad", ["a", None, np.nan, True, 10 ** 400, 1j])
def test_zxz_euler_refuses_non_angles(bad):
    with pytest.raises(ModelError, match=r"^zxz_euler: x2: expected finite real angles"):
        zxz_euler(0.1, bad, 0.2)


@pytest.mark.parametrize("bad", [np.nan, np.inf, [0.4, np.nan], None, True, "0.4"])
@pytest.mark.parametrize("which", ["c3", "c4"])
def test_actuator_lengths_that_are_not_finite_numbers_are_refused(which, bad):
    """Eq. 7–23 turned NaN into a NaN joint value and True into a 1 m actuator without a word; with_actuators
    passed them on to the model's q."""
    convert = joint4_from_actuator if which == "c3" else joint5_from_actuator
    with pytest.raises(ModelError, match=f"^{which}: "):
        convert(bad)
    if bad is not None:                                   # (None: with_actuators leaves that joint as it is)
        with pytest.raises(ModelError, match=f"^{which}: "):
            with_actuators(np.zeros(21), **{which: bad})


def test_eq3_about_y_turns_the_link_axes_as_documented():
    """docs/trees.md: revolute("y") is eq. 3 as printed, Ry(θ) Rz(π/2); euler=(π/2, 0, −π/2) with the same gains
    is Ry(θ) itself (explicit rotation matrices)."""
    t = np.linspace(-2.0, 2.0, 7)
    c, s, z, o = np.cos(t), np.sin(t), np.zeros_like(t), np.ones_like(t)
    Ry = np.stack([np.stack([c, z, s], -1), np.stack([z, o, z], -1), np.stack([-s, z, c], -1)], -2)
    Rz90 = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    (a1, a2, a3), (g1, g2, g3) = revolute("y")["euler"], revolute("y")["gains"]
    assert np.allclose(zxz_euler(a1 + g1 * t, a2 + g2 * t, a3 + g3 * t), Ry @ Rz90, atol=1e-15)
    assert np.allclose(zxz_euler(np.pi / 2 + 0 * t, t, -np.pi / 2 + 0 * t), Ry, atol=1e-15)
