"""A user's own URDF robots (the URDF-user audit): what a user locks, names and exports is what is used."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics import ModelError, RobotModel

ARM = """<robot name="arm"><link name="world"/>
  <joint name="mount" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 0 0.2"/></joint>
  <link name="base"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="50" velocity="2"/></joint>
  <link name="a"><inertial><origin xyz="0.1 0 0"/><mass value="2"/><inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.2 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="50" velocity="2"/></joint>
  <link name="b"><inertial><origin xyz="0.1 0 0"/><mass value="1"/><inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="tool_joint" type="fixed"><parent link="b"/><child link="tool0"/><origin xyz="0.2 0 0"/></joint>
  <link name="tool0"/></robot>"""


@pytest.fixture
def arm(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    return str(path)


@pytest.mark.parametrize("joint", ["mount", "tool_joint"])
def test_a_fixed_joint_locked_at_a_position_is_refused(arm, joint):
    """Locked at 0.3, a fixed joint was accepted and the 0.3 silently dropped (nothing to hold): the user's
    belief that something was locked went unchecked. Pinocchio's buildReducedModel refuses it too."""
    with pytest.raises(ModelError, match=rf"arm\.urdf: locked joint '{joint}' is fixed: it cannot be held at 0\.3"):
        RobotModel.from_urdf(arm, locked_joints={joint: 0.3})
    same = RobotModel.from_urdf(arm, locked_joints={joint: 0.0})     # (at 0: what the file says; a list of names)
    assert same.n == 2 and np.allclose(same.masses, [2.0, 1.0])


def test_a_header_may_name_any_urdf_joint(tmp_path):
    """A header cell that is a joint's name is that joint's column, whatever its characters: 'gelenk_ü,4' (which
    the exported trajectory.csv quotes) or '2nd joint' were refused as "neither a number nor a column name"."""
    from toppra_app.waypoints import read_waypoints
    joints = ["gelenk_ü,4", "2nd joint"]
    path = tmp_path / "wp.csv"
    path.write_text('"2nd joint","gelenk_ü,4"\n0,0\n0.5,1\n', encoding="utf-8")
    W, _, names = read_waypoints(str(path), 2, joint_names=joints)
    assert names == joints and np.array_equal(W, [[0, 0], [1, 0.5]])
    path.write_text('"2nd joint","gelenk_ü;4"\n0,0\n0.5,1\n', encoding="utf-8")      # (not a joint: refused)
    from toppra_app.errors import InputError
    with pytest.raises(InputError, match="neither a number nor a column name"):
        read_waypoints(str(path), 2, joint_names=joints)


def test_a_payload_frame_without_a_payload_is_refused(arm, tmp_path, capsys):
    """`--payload-frame b` without `--payload-mass` planned without any payload and said nothing (the user meant
    one and misses the mass), while `--payload-com` alone was refused: now all three are."""
    from toppra_app.cli import main
    (tmp_path / "wp.csv").write_text("j1,j2\n0,0\n1,0.5\n")
    args = ["plan", str(tmp_path / "wp.csv"), "--robot", arm, "--out", str(tmp_path / "o"), "--no-plots", "--no-report"]
    assert main(args + ["--payload-frame", "b"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("--payload-mass: required with --payload-com / --payload-inertia / --payload-frame")
    assert "\n" not in err and not (tmp_path / "o").exists()
    assert main(args + ["--payload-frame", "b", "--payload-mass", "1"]) == 0


def test_the_fixed_base_is_named_as_such_not_as_an_unknown_frame():
    """frame_pose(robot, q, 'panda_link0') said "unknown frame", as for a misspelt name: it is the fixed base,
    whose pose is the identity (Pinocchio has the frame; ours are frames on moving bodies)."""
    import dynamics
    from dynamics.forward_kinematics import frame_pose
    robot = dynamics.load_robot("panda")
    with pytest.raises(ModelError, match=r"^frame 'panda_link0': the fixed base of robot 'panda', not a frame on a "
                                         r"moving body: .*identity\)$"):
        frame_pose(robot, np.zeros(robot.n), robot.base_name)
    with pytest.raises(ModelError, match=r"unknown frame of robot 'panda' \(known: .*; links welded to the fixed "
                                         r"base are part of it\)$"):
        robot.frame("panda_link9")


@pytest.mark.parametrize("old, new", [('joint name="j2"', 'joint name="j&#10;2"'), ('joint name="j2"', 'joint name="j&#13;2"'),
                                      ('joint name="j2"', 'joint name="j&#9;2"'), ('joint name="j2"', 'joint name="j\u202e2"'),
                                      ('link name="b"', 'link name="b&#10;x"'), ('robot name="arm"', 'robot name="a&#10;rm"')])
def test_a_name_that_is_not_one_printable_line_is_refused(tmp_path, old, new):
    """The report audit: a joint named "j&#10;2" was loaded, and `toppra-app plan`'s error naming it (a waypoint
    outside its range) took two lines; a carriage return or a right-to-left override garbled the terminal line
    and the report. Now the URDF is refused, in one line naming the file and the element."""
    path = tmp_path / "arm.urdf"
    path.write_text(ARM.replace(old, new).replace('<parent link="b"/>', '<parent link="b&#10;x"/>')
                    if "b&#10;x" in new else ARM.replace(old, new))
    tag = new.split()[0]
    with pytest.raises(ModelError) as e:
        RobotModel.from_urdf(str(path))
    msg = str(e.value)
    assert msg.startswith(f"{path}: <{tag} name=") and "one line of printable text" in msg and msg.isprintable()


def test_printable_hostile_names_load_and_reach_the_csv_header_intact(tmp_path, capsys):
    """Names with markup, quotes, commas and backslashes are printable: they load as written, and the trajectory
    CSV's header reads back (csv module) as exactly those names; `plan` states its refusal in one line."""
    import csv
    from toppra_app.cli import main
    hostile = '<script>alert(1)</script>", x\\y'
    text = ARM.replace('name="j1"', 'name="&lt;script&gt;alert(1)&lt;/script&gt;&quot;, x\\y"')
    (tmp_path / "arm.urdf").write_text(text)
    assert RobotModel.from_urdf(str(tmp_path / "arm.urdf")).joint_names == (hostile, "j2")
    (tmp_path / "wp.csv").write_text("0,0\n0.5,0.4\n")
    assert main(["plan", str(tmp_path / "wp.csv"), "--robot", str(tmp_path / "arm.urdf"), "--out", str(tmp_path / "o"),
                 "--format", "csv"]) == 0
    with open(tmp_path / "o" / "trajectory.csv", newline="") as fh:
        assert next(csv.reader(fh))[1:3] == [f"q_{hostile}", "q_j2"]
    (tmp_path / "bad.urdf").write_text(ARM.replace('name="j2"', 'name="j&#10;2"'))
    capsys.readouterr()
    assert main(["plan", str(tmp_path / "wp.csv"), "--robot", str(tmp_path / "bad.urdf"), "--out", str(tmp_path / "p")]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.urdf" in err and "<joint name='j\\n2'>" in err
