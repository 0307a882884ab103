"""URDF reader: frames and rpy, fixed-joint merging, locked joints, limits/friction, and one clear error
per malformed file."""

import textwrap

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import dynamics as dyn
from dynamics import ModelError, RobotModel
from dynamics.urdf import from_urdf
from fixtures import assert_rel, random_states


def write(tmp_path, body, name="robot.urdf"):
    p = tmp_path / name
    p.write_text(f'<?xml version="1.0"?>\n<robot name="test">\n{textwrap.dedent(body)}\n</robot>\n')
    return str(p)


def inertial(mass, xyz="0 0 0", rpy="0 0 0", ixx=0.01, iyy=0.02, izz=0.025, ixy=0.001, ixz=-0.002, iyz=0.003):
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/></inertial>')


def joint(name, parent, child, jtype="revolute", xyz="0 0 0.1", rpy="0 0 0", axis="0 0 1", extra=None):
    limit = '<limit lower="-2" upper="2" velocity="3" effort="40"/>' if extra is None else extra
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{limit}</joint>')


def R_urdf(r, p, y):
    """Independent oracle: URDF rpy = extrinsic rotations about x, y, z."""
    return Rotation.from_euler("xyz", [r, p, y]).as_matrix()


def inertia_tensor(ixx=0.01, iyy=0.02, izz=0.025, ixy=0.001, ixz=-0.002, iyz=0.003):
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


# ------------------------------------------------------------------------------ frames and rpy
def test_rpy_and_axis_handling(tmp_path):
    rpy1, rpy2 = (0.3, -0.7, 1.9), (-1.2, 0.4, 2.5)
    path = write(tmp_path, f"""
        <link name="base"/>
        <link name="a">{inertial(1.0, "0.1 0.2 0.3", "0.5 0.6 0.7")}</link>
        <link name="b">{inertial(2.0)}</link>
        {joint("j1", "base", "a", xyz="0.1 -0.2 0.3", rpy=" ".join(map(str, rpy1)), axis="0 1 1")}
        {joint("j2", "a", "b", jtype="continuous", xyz="0.4 0 0", rpy=" ".join(map(str, rpy2)), extra="")}
        """)
    robot = from_urdf(path)
    assert robot.joint_names == ("j1", "j2") and robot.link_names == ("a", "b") and robot.base_name == "base"
    assert np.allclose(robot.placement_rotations[0], R_urdf(*rpy1), atol=1e-15)
    assert np.allclose(robot.placement_rotations[1], R_urdf(*rpy2), atol=1e-15)
    assert np.allclose(robot.placement_translations[0], [0.1, -0.2, 0.3])
    assert np.allclose(robot.axes[0], [0, 1 / np.sqrt(2), 1 / np.sqrt(2)])
    # inertial origin rpy rotates the tensor into the link frame
    Ri = R_urdf(0.5, 0.6, 0.7)
    assert np.allclose(robot.inertias[0], Ri @ inertia_tensor() @ Ri.T, atol=1e-15)
    assert np.allclose(robot.coms[0], [0.1, 0.2, 0.3])
    # continuous: no position limits (and no <limit> needed), default axis would be x
    assert robot.q_min[1] == -np.inf and robot.q_max[1] == np.inf and robot.tau_max[1] == np.inf
    # forward kinematics against transforms composed here
    q = np.array([0.7, -1.1])
    T1 = np.eye(4)
    T1[:3, :3] = R_urdf(*rpy1) @ Rotation.from_rotvec(0.7 * robot.axes[0]).as_matrix()
    T1[:3, 3] = [0.1, -0.2, 0.3]
    T2 = np.eye(4)
    T2[:3, :3] = R_urdf(*rpy2) @ Rotation.from_rotvec(-1.1 * np.array([0, 0, 1.0])).as_matrix()
    T2[:3, 3] = [0.4, 0, 0]
    assert_rel(dyn.forward_kinematics(robot, q), np.array([T1, T1 @ T2]), 1e-14, "fk")


def test_defaults_limits_friction_massless(tmp_path):
    path = write(tmp_path, f"""
        <link name="base"/>
        <link name="a"/>
        <link name="b">{inertial(1.0)}</link>
        <joint name="j1" type="prismatic"><parent link="base"/><child link="a"/>
          <limit lower="-0.1" upper="0.4" velocity="0.5" effort="200"/>
          <dynamics friction="3.5" damping="12"/></joint>
        {joint("j2", "a", "b")}
        """)
    robot = RobotModel.from_urdf(path)
    assert robot.joint_types == ("prismatic", "revolute")
    assert np.allclose(robot.axes[0], [1, 0, 0])                       # default axis
    assert np.allclose(robot.placement_translations[0], 0) and np.allclose(robot.placement_rotations[0], np.eye(3))
    assert robot.masses[0] == 0 and not robot.inertias[0].any()          # no <inertial>: massless
    assert (robot.q_min[0], robot.q_max[0], robot.qd_max[0], robot.tau_max[0]) == (-0.1, 0.4, 0.5, 200)
    assert (robot.coulomb[0], robot.viscous[0]) == (3.5, 12) and (robot.coulomb[1], robot.viscous[1]) == (0, 0)
    assert robot.tool_frame == "b" and robot.name == "test"


# ------------------------------------------------------------------------------ fixed joints
def _merged_by_hand(parts):
    """(mass, com, inertia about com) of rigid parts given in one frame — written out independently."""
    m = sum(p[0] for p in parts)
    c = sum(p[0] * np.asarray(p[1]) for p in parts) / m
    I = np.zeros((3, 3))
    for mi, ci, Ii in parts:
        d = np.asarray(ci) - c
        I += Ii + mi * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return m, c, I


def test_fixed_joint_merge_equals_hand_merged_body(tmp_path):
    """A link with two fixed children (one via a chain of two fixed joints, rotated origins and rotated
    inertial frames) gives the same model as one link carrying the merged inertial written by hand."""
    rpy_tool, xyz_tool = (0.4, -1.0, 2.2), np.array([0.05, 0.1, 0.25])
    rpy_in, xyz_in = (1.1, 0.2, -0.6), np.array([0.02, -0.03, 0.04])
    ext = dict(ixx=0.004, iyy=0.005, izz=0.006, ixy=0.0005, ixz=0.0, iyz=-0.0004)
    split = write(tmp_path, f"""
        <link name="base"/>
        <link name="arm">{inertial(2.0, "0.1 0 0.05", "0.3 0.2 0.1")}</link>
        <link name="mount"/>
        <link name="tool">{inertial(0.8, " ".join(map(str, xyz_in)), " ".join(map(str, rpy_in)), **ext)}</link>
        <link name="sensor">{inertial(0.3, "0 0 0.01", ixx=1e-4, iyy=1e-4, izz=1.5e-4, ixy=0, ixz=0, iyz=0)}</link>
        {joint("j1", "base", "arm", xyz="0 0 0.3", rpy="0 0.3 0", axis="0 1 0")}
        <joint name="f1" type="fixed"><parent link="arm"/><child link="mount"/>
          <origin xyz="{' '.join(map(str, xyz_tool))}" rpy="{' '.join(map(str, rpy_tool))}"/></joint>
        <joint name="f2" type="fixed"><parent link="mount"/><child link="tool"/><origin xyz="0 0 0.02"/></joint>
        <joint name="f3" type="fixed"><parent link="arm"/><child link="sensor"/><origin xyz="0.2 0 0" rpy="0 0 1"/></joint>
        """, "split.urdf")
    # by hand: every part's COM and inertia in the arm frame
    R_arm_in = R_urdf(0.3, 0.2, 0.1)
    R_tool = R_urdf(*rpy_tool)
    p_tool = xyz_tool + R_tool @ [0, 0, 0.02]
    R_in = R_tool @ R_urdf(*rpy_in)
    R_sensor = R_urdf(0, 0, 1)
    parts = [(2.0, [0.1, 0, 0.05], R_arm_in @ inertia_tensor() @ R_arm_in.T),
             (0.8, p_tool + R_tool @ xyz_in, R_in @ inertia_tensor(**ext) @ R_in.T),
             (0.3, np.array([0.2, 0, 0]) + R_sensor @ [0, 0, 0.01], R_sensor @ np.diag([1e-4, 1e-4, 1.5e-4]) @ R_sensor.T)]
    m, c, I = _merged_by_hand(parts)
    merged = write(tmp_path, f"""
        <link name="base"/>
        <link name="arm"><inertial><origin xyz="{' '.join(repr(float(v)) for v in c)}"/><mass value="{float(m)!r}"/>
          <inertia ixx="{float(I[0, 0])!r}" ixy="{float(I[0, 1])!r}" ixz="{float(I[0, 2])!r}" iyy="{float(I[1, 1])!r}"
           iyz="{float(I[1, 2])!r}" izz="{float(I[2, 2])!r}"/>
        </inertial></link>
        {joint("j1", "base", "arm", xyz="0 0 0.3", rpy="0 0.3 0", axis="0 1 0")}
        """, "merged.urdf")
    a, b = from_urdf(split), from_urdf(merged)
    assert a.n == b.n == 1
    assert a.masses[0] == pytest.approx(3.1)
    assert_rel(a.coms, b.coms, 1e-14, "com")
    assert_rel(a.inertias, b.inertias, 1e-13, "inertia")
    q, qd, qdd = random_states(a, 5, 0)
    assert_rel(dyn.inverse_dynamics(a, q, qd, qdd), dyn.inverse_dynamics(b, q, qd, qdd), 1e-13, "tau")
    # the welded links are frames; the default tool frame is the last one reached by fixed joints
    assert a.frame_names == ("mount", "tool", "sensor") and a.tool_frame == "sensor"
    assert_rel(a.frame("tool")[1][:3, 3], p_tool, 1e-15, "tool frame")
    assert_rel(a.frame("tool")[1][:3, :3], R_tool, 1e-15, "tool frame")


def _tree_urdf(tmp_path):
    return write(tmp_path, f"""
        <link name="world"/>
        <link name="base_link">{inertial(5.0)}</link>
        <link name="l1">{inertial(1.0, "0 0 0.1")}</link>
        <link name="l2">{inertial(1.5, "0.1 0 0", "0.2 0.1 0")}</link>
        <link name="l3">{inertial(0.5, "0.1 0.05 0")}</link>
        <link name="l4">{inertial(0.7, "0.02 0.05 0")}</link>
        <link name="tcp"/>
        <joint name="anchor" type="fixed"><parent link="world"/><child link="base_link"/><origin xyz="1 2 0" rpy="0 0 0.5"/></joint>
        {joint("j1", "base_link", "l1", xyz="0 0 0.2", axis="0.3 1 0.2")}
        {joint("j2", "l1", "l2", xyz="0 0.1 0.3", rpy="1.5707963 0 0", axis="1 0 0")}
        {joint("j3", "l2", "l3", xyz="0.3 0 0", axis="0 1 0")}
        {joint("j4", "l1", "l4", jtype="prismatic", xyz="0 0 0.1", axis="0 0 1")}
        <joint name="tcp_joint" type="fixed"><parent link="l4"/><child link="tcp"/><origin xyz="0 0 0.05"/></joint>
        """, "tree.urdf")


def test_tree_and_fixed_root_chain(tmp_path):
    robot = from_urdf(_tree_urdf(tmp_path))
    assert robot.parents.tolist() == [-1, 0, 1, 0] and not robot.is_serial
    assert robot.link_names == ("l1", "l2", "l3", "l4") and robot.base_name == "world"
    # the world->base_link fixed joint is folded into j1's placement; base_link's mass is dropped
    Rz = R_urdf(0, 0, 0.5)
    assert np.allclose(robot.placement_rotations[0], Rz) and np.allclose(robot.placement_translations[0], [1, 2, 0.2])
    assert robot.masses.sum() == pytest.approx(3.7) and robot.tool_frame == "tcp"


def test_locked_joint_equals_full_model_at_that_position(tmp_path):
    path = _tree_urdf(tmp_path)
    full = from_urdf(path)
    lock = {"j2": 0.8, "j4": 0.03}
    part = from_urdf(path, locked_joints=lock)
    assert part.joint_names == ("j1", "j3") and part.parents.tolist() == [-1, 0]
    keep = [full.joint_index(j) for j in part.joint_names]
    q_part = random_states(part, 4, 1)[0]
    q_full = np.zeros((4, full.n))
    q_full[:, keep] = q_part
    for name, value in lock.items():
        q_full[:, full.joint_index(name)] = value
    M = dyn.mass_matrix(full, q_full)[:, keep][:, :, keep]
    assert_rel(dyn.mass_matrix(part, q_part), M, 1e-13, "M")
    assert_rel(dyn.gravity_torques(part, q_part), dyn.gravity_torques(full, q_full)[:, keep], 1e-13, "g")
    for frame in ("l2", "l3", "l4", "tcp"):
        assert_rel(dyn.frame_pose(part, q_part, frame), dyn.frame_pose(full, q_full, frame), 1e-13, frame)
    # welded through a locked joint: a frame, but not a default tool frame
    assert "tcp" in part.frame_names and "l4" in part.frame_names
    # a list of names locks at 0
    assert from_urdf(path, locked_joints=["j4"]).n == 3


# ------------------------------------------------------------------------------ errors
GOOD_LINKS = f'<link name="base"/><link name="a">{inertial(1.0)}</link>'


@pytest.mark.parametrize("body, match", [
    (f'<link name="base"/><link name="a"><inertial><mass/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
     + joint("j1", "base", "a"), r"link 'a' <inertial>: <mass> is missing the attribute 'value'"),
    (f'<link name="base"/><link name="a"><inertial><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
     + joint("j1", "base", "a"), r"link 'a' <inertial>: missing <mass>"),
    (f'<link name="base"/><link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
     + joint("j1", "base", "a"), r"link 'a' <inertial>: <inertia> is missing the attribute 'ixz'"),
    (f'<link name="base"/><link name="a"><inertial><mass value="1.2.3"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
     + joint("j1", "base", "a"), r"link 'a' <inertial>: <mass value=\"1.2.3\">: not a number"),
    (f'<link name="base"/><link name="a">{inertial(-1.0)}</link>' + joint("j1", "base", "a"),
     r"link 'a' <inertial>: mass must be positive"),
    (GOOD_LINKS + joint("j1", "base", "a", jtype="ball"), r"joint 'j1': unknown joint type 'ball'"),
    (GOOD_LINKS + joint("j1", "base", "a", jtype="floating"), r"joint 'j1': joint type 'floating' is not supported .* the URDF's root link is fixed in the world"),
    (GOOD_LINKS + joint("j1", "base", "a", xyz="0 0 abc"), r"joint 'j1': <origin xyz=\"0 0 abc\">: not a list of numbers"),
    (GOOD_LINKS + joint("j1", "base", "a", rpy="0 0"), r"joint 'j1': <origin rpy=\"0 0\">: expected 3 finite numbers"),
    (GOOD_LINKS + joint("j1", "base", "a", axis="0 0 0"), r"joint 'j1': <axis xyz=\"0 0 0\">: the axis must not be zero"),
    (GOOD_LINKS + joint("j1", "base", "a", extra=""), r"joint 'j1': missing <limit> \(required for a revolute joint\)"),
    (GOOD_LINKS + joint("j1", "base", "a", extra='<limit lower="0" upper="1" effort="5"/>'),
     r"joint 'j1' <limit>: <limit> is missing the attribute 'velocity'"),
    (GOOD_LINKS + joint("j1", "base", "a", extra='<limit lower="0" upper="1" effort="5" velocity="x"/>'),
     r"joint 'j1' <limit>: <limit velocity=\"x\">: not a number"),
    (GOOD_LINKS + joint("j1", "base", "a", extra='<limit lower="1" upper="0" effort="5" velocity="1"/>'),
     r"joint 'j1': <limit>: lower 1.0 is above upper 0.0"),
    (GOOD_LINKS + joint("j1", "base", "a", extra='<limit lower="0" upper="1" effort="5" velocity="1"/><mimic joint="j0"/>'),
     r"joint 'j1' <mimic joint=\"j0\">: no such joint \(load with mimic=\"independent\""),
    (GOOD_LINKS + joint("j1", "base", "a", extra='<limit lower="0" upper="1" effort="5" velocity="1"/><mimic/>'),
     r"joint 'j1' <mimic>: <mimic> is missing the attribute 'joint'"),
    (GOOD_LINKS + joint("j1", "base", "a", extra='<limit lower="0" upper="1" effort="5" velocity="1"/>'
                                                 '<mimic joint="j1" multiplier="x"/>'),
     r"joint 'j1' <mimic>: <mimic multiplier=\"x\">: not a number"),
    *[(GOOD_LINKS + joint("j1", "base", "a", extra=f'<limit lower="0" upper="1" effort="5" velocity="1"/>'
                                                   f'<dynamics armature="{a}"/>'),
       rf"joint 'j1': <dynamics armature=\"{a}\">: must be a finite number >= 0") for a in ("-0.1", "inf")],
    (GOOD_LINKS + joint("j1", "base", "zz"), r"joint 'j1': <child link=\"zz\">: no such link"),
    (GOOD_LINKS + joint("j1", "yy", "a"), r"joint 'j1': <parent link=\"yy\">: no such link"),
    (GOOD_LINKS + '<joint name="j1" type="revolute"><child link="a"/></joint>', r"joint 'j1': missing <parent>"),
    (GOOD_LINKS + '<joint type="revolute"><parent link="base"/><child link="a"/></joint>',
     r"<joint>: <joint> is missing the attribute 'name'"),
    (GOOD_LINKS + '<link name="c"/>' + joint("j1", "base", "a"), r"two or more root links \(base, c\)"),
    (GOOD_LINKS + '<link name="c"/>' + joint("j1", "base", "a") + joint("j2", "a", "c") + joint("j3", "c", "a"),
     r"joint 'j3': link 'a' is already the child of joint 'j1'"),
    (GOOD_LINKS + '<link name="c"/>' + joint("j1", "a", "c") + joint("j2", "c", "a"),
     r"links a, c are not connected to the root 'base' \(a loop of joints\)"),
    ('<link name="a"/><link name="b"/>' + joint("j1", "a", "b") + joint("j2", "b", "a"), r"no root link"),
    (GOOD_LINKS + joint("j1", "base", "a") + '<link name="a"/>', r"link 'a': defined twice"),
    (GOOD_LINKS + '<joint name="j1" type="fixed"><parent link="base"/><child link="a"/></joint>', r"no movable joints"),
])
def test_malformed_urdf_gives_one_clear_error(tmp_path, body, match):
    path = write(tmp_path, body)
    with pytest.raises(ModelError, match=match) as info:
        from_urdf(path)
    msg = str(info.value)
    assert msg.startswith(path + ": ") and "\n" not in msg


def test_file_level_errors(tmp_path):
    with pytest.raises(ModelError, match=r"nope.urdf: file not found"):
        from_urdf(tmp_path / "nope.urdf")
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot><link name='a'></robot>")
    with pytest.raises(ModelError, match=r"bad.urdf: not valid XML"):
        from_urdf(bad)
    other = tmp_path / "other.urdf"
    other.write_text("<sdf/>")
    with pytest.raises(ModelError, match=r"root element is <sdf>, expected <robot>"):
        from_urdf(other)
    path = write(tmp_path, GOOD_LINKS + joint("j1", "base", "a"))
    with pytest.raises(ModelError, match=r"robot.urdf: locked joint 'finger' not found \(joints: j1\)"):
        from_urdf(path, locked_joints={"finger": 0.0})
    with pytest.raises(ModelError, match=r"locked joint 'j1': position 'x' is not a number"):
        from_urdf(path, locked_joints={"j1": "x"})
    # a mass of 1e308 overflowed later (numpy warnings, the file not named: a hunt)
    huge = write(tmp_path, f'<link name="base"/><link name="a">{inertial(1e308)}</link>' + joint("j1", "base", "a"),
                 "huge.urdf")
    with pytest.raises(ModelError, match=r"huge.urdf: link 'a'.*<inertial>: mass 1e\+308 kg .*too large"):
        from_urdf(huge)
    # held outside its range (`--lock j1=100` was accepted silently: a hunt)
    with pytest.raises(ModelError, match=r"locked joint 'j1': position 100 is outside its range \[-2, 2\]"):
        from_urdf(path, locked_joints={"j1": 100.0})
    with pytest.raises(ModelError, match=r"no movable joints"):                # (its end is in range)
        from_urdf(path, locked_joints={"j1": 2.0})
    with pytest.raises(ModelError, match=r"robot.urdf: tool_frame 'hand'"):
        from_urdf(path, tool_frame="hand")
    with pytest.raises(ModelError, match=r"neg.urdf: joint 'j1': <limit effort=\"-1\">: must be positive"):
        from_urdf(write(tmp_path, GOOD_LINKS + joint("j1", "base", "a", extra='<limit effort="-1" velocity="1"/>'),
                        "neg.urdf"))


def test_example_robot_data_panda_frames(panda_urdf):
    robot = from_urdf(panda_urdf, locked_joints={"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0})
    assert robot.n == 7 and robot.tool_frame == "panda_hand_tcp"
    assert robot.masses[-1] == pytest.approx(0.735522 + 0.73 + 2 * 0.015)   # link 7 + hand + fingers
    # hand TCP: 0.107 (flange) + 0.1034 along z7
    body, T = robot.frame("panda_hand_tcp")
    assert body == 6 and np.allclose(T[:3, 3], [0, 0, 0.2104], atol=1e-12)
    # locking the leader locks its mimic at multiplier · value + offset (the Panda's: 1 · q + 0)
    held = from_urdf(panda_urdf, locked_joints={"panda_finger_joint1": 0.02})
    both = from_urdf(panda_urdf, locked_joints={"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02})
    assert held.n == held.n_bodies == 7 and held.coupling is None
    assert np.allclose(held.coms, both.coms, atol=1e-15) and np.allclose(held.inertias, both.inertias, atol=1e-15)


def test_unrealisable_inertia_loads_with_a_warning_unless_strict(tmp_path):
    """Outside the triangle inequality (no mass distribution has it) but positive definite: kept as
    given with one warning naming the link (Pinocchio reads it so too); strict=True refuses it; a
    clearly negative moment is refused either way."""
    import warnings
    from dynamics.urdf import URDFWarning
    body = (f'<link name="base"/><link name="a">{inertial(1.0, ixx=0.01, iyy=0.01, izz=0.05, ixy=0, ixz=0, iyz=0)}'
            f'</link>' + joint("j1", "base", "a"))
    path = tmp_path / "r.urdf"
    path.write_text(f'<robot name="r">{body}</robot>')
    with pytest.warns(URDFWarning, match=r"kept as given at link\(s\) a") as caught:
        robot = from_urdf(str(path))
    from dynamics import RobotModel
    with pytest.warns(URDFWarning) as aliased:      # (pointed at dynamics/_aliases.py, the alias's own line)
        RobotModel.from_urdf(str(path))
    assert {w.filename for w in (*caught, *aliased)} == {__file__}
    assert np.allclose(robot.inertias[0], np.diag([0.01, 0.01, 0.05])) and not robot.realisable_inertias
    with pytest.raises(ModelError, match=r"link 'a' <inertial>: .*triangle inequality"):
        from_urdf(str(path), strict=True)
    negative = body.replace('izz="0.05"', 'izz="-0.05"')
    path.write_text(f'<robot name="r">{negative}</robot>')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ModelError, match="positive semi-definite"):
            from_urdf(str(path))


XACRO = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="twolink">
  <xacro:arg name="reach" default="0.4"/>
  <xacro:property name="L" value="$(arg reach)"/>
  <xacro:macro name="lnk" params="name m">
    <link name="${name}">""" + inertial("${m}", xyz="0 0 ${L/2}") + """</link>
  </xacro:macro>
  <link name="base"/>
  <xacro:lnk name="a" m="2.0"/>
  <xacro:lnk name="b" m="1.0"/>
  """ + joint("j1", "base", "a") + joint("j2", "a", "b", xyz="0 0 ${L}") + """
</robot>
"""


def test_xacro_files_are_expanded_with_their_arguments(tmp_path):
    """A .xacro file (macros, properties, an argument) gives the model of the URDF it expands to."""
    pytest.importorskip("xacro")
    path = tmp_path / "two.urdf.xacro"
    path.write_text(XACRO)
    plain = tmp_path / "two.urdf"
    plain.write_text('<robot name="twolink"><link name="base"/>' + f'<link name="a">{inertial(2.0, xyz="0 0 0.2")}</link>'
                     + f'<link name="b">{inertial(1.0, xyz="0 0 0.2")}</link>' + joint("j1", "base", "a")
                     + joint("j2", "a", "b", xyz="0 0 0.4") + "</robot>")
    a, b = from_urdf(str(path)), from_urdf(str(plain))
    for key in ("masses", "coms", "inertias", "placement_translations", "q_max", "tau_max"):
        assert np.array_equal(getattr(a, key), getattr(b, key)), key
    longer = from_urdf(str(path), xacro_args={"reach": 0.5})
    assert longer.placement_translations[1][2] == pytest.approx(0.5) and longer.coms[0][2] == pytest.approx(0.25)


def test_xacro_problems_are_one_line(tmp_path, monkeypatch):
    import sys
    path = tmp_path / "r.urdf.xacro"
    path.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r"><link name="$(find nosuchpkg)"/></robot>')
    if "xacro" in sys.modules or __import__("importlib").util.find_spec("xacro"):
        with pytest.raises(ModelError, match=r"r\.urdf\.xacro: xacro could not expand it: ") as exc:
            from_urdf(str(path))
        assert "\n" not in str(exc.value)
    monkeypatch.setitem(sys.modules, "xacro", None)                      # not installed
    with pytest.raises(ModelError, match=r"needs the xacro package: pip install xacro"):
        from_urdf(str(path))


def test_a_xacro_argument_the_file_does_not_have_is_refused(tmp_path):
    """xacro ignores an argument its file neither declares nor uses: a misspelt `reahc` planned the default reach
    without a word. Refused in one line naming it and the file's arguments; declared and used ones pass."""
    pytest.importorskip("xacro")
    path = tmp_path / "two.urdf.xacro"
    path.write_text(XACRO)
    with pytest.raises(ModelError, match=r"two\.urdf\.xacro: xacro argument 'reahc' is neither declared .*\(its arguments: "
                                         r"reach\)") as exc:
        from_urdf(str(path), xacro_args={"reahc": 0.5})
    assert exc.value.argument == "xacro_args" and "\n" not in str(exc.value)
    used_only = tmp_path / "used.urdf.xacro"              # $(arg) without a declaration: given, so it counts
    used_only.write_text(XACRO.replace('<xacro:arg name="reach" default="0.4"/>', ""))
    assert from_urdf(str(used_only), xacro_args={"reach": 0.5}).placement_translations[1][2] == pytest.approx(0.5)
