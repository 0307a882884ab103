"""The arguments of from_urdf, collision_shapes and to_urdf (one line naming the argument, never a TypeError,
never a string taken apart into characters), locks that contradict a <mimic>, and mimic limits that leave a
coordinate a single position (PR2's grippers)."""

import os
import re
import warnings

import numpy as np
import pytest

import dynamics as dyn
from dynamics import ModelError
from dynamics.urdf import URDFWarning, from_urdf
from dynamics.urdf_collision import collision_shapes
from test_urdf import inertial, joint, write


def one_line(call, match):
    with pytest.raises(ModelError, match=match) as info:
        call()
    assert "\n" not in str(info.value)
    return str(info.value)


# ------------------------------------------------------------------------------ from_urdf's arguments
@pytest.mark.parametrize("kw, match", [
    (dict(locked_joints="panda_joint1"), r"^from_urdf: locked_joints: expected a dict \{joint: position\} or a "
                                         r"list of joint names, got the single name 'panda_joint1' "
                                         r"\(write \['panda_joint1'\]"),
    (dict(locked_joints=b"panda_joint1"), r"^from_urdf: locked_joints: .* got the single name b'panda_joint1'"),
    (dict(locked_joints=5), r"^from_urdf: locked_joints: expected a dict .* got 5$"),
    (dict(locked_joints=[5]), r"^from_urdf: locked_joints: joint names must be str, got 5$"),
    (dict(locked_joints={("a",): 0.0}), r"^from_urdf: locked_joints: joint names must be str, got \('a',\)$"),
    (dict(locked_joints={"panda_joint1": object()}),
     r"locked joint 'panda_joint1': position <object .*> is not a number"),
    # text, bytes, booleans and complex numbers were taken for numbers ('1_0' by float() as 10; True as 1 rad)
    *[(dict(locked_joints={"panda_joint1": v}), rf"locked joint 'panda_joint1': position {re.escape(shown)} is not "
                                                rf"a number$")
      for v, shown in (("0.5", "'0.5'"), ("1_0", "'1_0'"), (b"0.5", "b'0.5'"), (True, "True"), (np.True_, "True"),
                       (0.5 + 0j, "(0.5+0j)"))],
    (dict(name=5), r"^from_urdf: name: expected a str, got 5$"),
    (dict(tool_frame=["panda_hand"]), r"^from_urdf: tool_frame: expected a str, got \['panda_hand'\]$"),
    (dict(strict="yes"), r"^from_urdf: strict: expected True or False, got 'yes'$"),
    (dict(xacro_args=[("a", "b")]), r"^from_urdf: xacro_args: expected a dict \{name: value\}, got \[\('a', 'b'\)\]$"),
    (dict(mimic=None), r"^from_urdf: mimic: expected 'coupled' or 'independent', got None$"),
])
def test_from_urdf_arguments_are_checked(panda_urdf, kw, match):
    one_line(lambda: from_urdf(panda_urdf, **kw), match)


def test_locked_joints_as_a_list_tuple_or_set_of_names(panda_urdf):
    names = ["panda_joint1", "panda_finger_joint1"]
    models = [from_urdf(panda_urdf, locked_joints=c(names)) for c in (list, tuple, set)]
    assert {m.joint_names for m in models} == {tuple(f"panda_joint{k}" for k in range(2, 8))}
    assert from_urdf(panda_urdf, name="arm", strict=np.bool_(False)).name == "arm"


# ------------------------------------------------------------------------------ locks and <mimic>
def test_locks_that_contradict_a_mimic_are_refused(panda_urdf):
    """finger_joint2 = finger_joint1 (<mimic>): 0.02 and 0.03 cannot both hold; 0.02 and 0.02 is the same
    model as finger_joint1 alone at 0.02; independent joints have no relation to keep."""
    one_line(lambda: from_urdf(panda_urdf, locked_joints={"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.03}),
             r"panda.urdf: locked joint 'panda_finger_joint2': position 0.03 contradicts its <mimic> of "
             r"'panda_finger_joint1', locked at 0.02, which holds it at 0.02 \(lock only 'panda_finger_joint1', or "
             r"load with mimic=\"independent\"\)$")
    both = from_urdf(panda_urdf, locked_joints={"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02})
    one = from_urdf(panda_urdf, locked_joints={"panda_finger_joint1": 0.02})
    q = np.linspace(-0.5, 0.5, 7)
    assert np.array_equal(dyn.mass_matrix(both, q), dyn.mass_matrix(one, q))
    free = from_urdf(panda_urdf, mimic="independent",
                     locked_joints={"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.03})
    assert free.n == 7


def test_a_chain_of_mimics_is_checked_through_to_the_locked_leader(tmp_path):
    """j3 = 0.5 j2 + 0.1, j2 = -2 j1 (a chain): with j1 locked at 0.1, j3 may be locked at 0 only."""
    links = '<link name="base"/>' + "".join(f'<link name="{n}">{inertial(1.0)}</link>' for n in "abcd")
    lim = '<limit lower="-3" upper="3" velocity="3" effort="40"/>'
    path = write(tmp_path, links + joint("j1", "base", "a", extra=lim)
                 + joint("j2", "a", "b", extra=lim + '<mimic joint="j1" multiplier="-2"/>')
                 + joint("j3", "b", "c", extra=lim + '<mimic joint="j2" multiplier="0.5" offset="0.1"/>')
                 + joint("j4", "c", "d", extra=lim))
    assert from_urdf(path, locked_joints={"j1": 0.1, "j3": 0.0}).joint_names == ("j4",)
    one_line(lambda: from_urdf(path, locked_joints={"j1": 0.1, "j3": 0.2}),
             r"locked joint 'j3': position 0.2 contradicts its <mimic> of 'j1', locked at 0.1, which holds it at 0 "
             r"\(lock only 'j1'")


def test_mimic_limits_that_pin_a_coordinate_warn_and_leave_no_negative_zero(tmp_path):
    """A −1 mimic of [0, 0.5] with limits [0, 0.5] of its own leaves its leader only 0 (PR2's grippers):
    one warning naming both joints, and the range [0.0, 0.0] — not [0.0, -0.0], on which
    numpy.random.uniform(q_min, q_max) fails."""
    links = '<link name="base"/>' + "".join(f'<link name="{n}">{inertial(1.0)}</link>' for n in "ab")
    lim = '<limit lower="0" upper="0.5" velocity="3" effort="40"/>'
    path = write(tmp_path, links + joint("lead", "base", "a", extra=lim)
                 + joint("follow", "base", "b", extra=lim + '<mimic joint="lead" multiplier="-1"/>'))
    with pytest.warns(URDFWarning, match=r"robot.urdf: the limits of mimic joints leave a single position to 'lead' "
                                         r"at 0 by 'follow' \(the coordinate cannot move"):
        robot = from_urdf(path)
    assert robot.q_min[0] == robot.q_max[0] == 0.0 and not np.signbit(robot.q_max[0])
    assert np.random.default_rng(0).uniform(robot.q_min, robot.q_max) == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # a range left wider, or no mimic: no warning
        from_urdf(path, mimic="independent")


def test_pr2_grippers():
    from fixtures import erd_path
    path = erd_path("robots/pr2_description/urdf/pr2.urdf")
    if path is None:
        pytest.skip("example-robot-data's PR2 is not installed")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        robot = from_urdf(path)
    pinned = [str(w.message) for w in said if "single position" in str(w.message)]
    assert len(pinned) == 1 and all(f"'{s}_gripper_l_finger_joint' at 0 by '{s}_gripper_r_parallel_root_joint'"
                                    in pinned[0] for s in "rl")
    k = [robot.joint_names.index(f"{s}_gripper_l_finger_joint") for s in "rl"]
    assert np.all(robot.q_max[k] == 0.0) and not np.signbit(robot.q_max[k]).any()


# ------------------------------------------------------------------------------ collision_shapes, to_urdf
def test_collision_search_paths_take_one_directory_or_a_list(tmp_path, monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    mesh = tmp_path / "pkgs" / "mypkg" / "meshes" / "a.stl"
    mesh.parent.mkdir(parents=True)
    mesh.write_bytes(b"solid a\nendsolid a\n")
    (tmp_path / "robot").mkdir()
    geometry = '<collision><geometry><mesh filename="package://mypkg/meshes/a.stl"/></geometry></collision>'
    path = write(tmp_path / "robot", f'<link name="base"/><link name="a">{inertial(1.0)}{geometry}</link>'
                 + joint("j1", "base", "a"))
    robot = from_urdf(path)
    pkgs = tmp_path / "pkgs"
    for value in (str(pkgs), pkgs, [str(pkgs)], (pkgs,), os.fsencode(str(pkgs))):
        (shape,) = collision_shapes(path, robot, search_paths=value)
        assert shape.file == str(mesh)
    one_line(lambda: collision_shapes(path, robot, search_paths=5),
             r"^collision_shapes: search_paths: expected a directory or a list of directories, got 5$")
    one_line(lambda: collision_shapes(path, robot, search_paths=[str(pkgs), 5]),
             r"^collision_shapes: search_paths: expected a file name, got int$")
    one_line(lambda: collision_shapes(5, robot), r"^collision_shapes: urdf_path: expected a file name, got int$")
    one_line(lambda: collision_shapes(path, "robot"), r"^collision_shapes: robot: expected a RobotModel, got str$")
    one_line(lambda: collision_shapes(path, robot), r"mesh 'package://mypkg/meshes/a.stl': package 'mypkg' not found")


@pytest.mark.parametrize("name, match", [("x\n.urdf", r"'x\\n.urdf' is not a printable file name"),
                                          ("x\x1b.urdf", r"'x\\x1b.urdf' is not a printable file name"),
                                          (5, r"expected a file name, got int"),
                                          (None, "expected a file name, got NoneType$")])
def test_to_urdf_refuses_a_file_name_from_urdf_would_refuse(tmp_path, monkeypatch, name, match):
    monkeypatch.chdir(tmp_path)
    one_line(lambda: dyn.to_urdf(dyn.load_robot("planar4"), name), r"^to_urdf: path: " + match)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("kw, argument", [
    (dict(locked_joints={"nope": 0.0}), "locked_joints"),
    (dict(locked_joints={"panda_finger_joint1": 1.0}), "locked_joints"),
    (dict(locked_joints={"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.03}), "locked_joints"),
    (dict(tool_frame="nope"), "tool_frame"),
    (dict(mimic="x"), None),
])
def test_loader_errors_name_their_argument_and_keep_it_through_pickle(panda_urdf, kw, argument):
    """`ModelError.argument` is what a command line maps to its own option (`--lock`, `--tool-frame`) rather than
    matching the message's text; a batch worker's error crosses a process boundary pickled."""
    import pickle
    from dynamics.checks import ModelError
    with pytest.raises(ModelError) as info:
        from_urdf(panda_urdf, **kw)
    back = pickle.loads(pickle.dumps(info.value))
    assert (info.value.argument, back.argument, str(back), type(back)) == (argument, argument, str(info.value),
                                                                           type(info.value))


def test_to_urdf_writes_whole_or_not_at_all(tmp_path):
    """A write that fails part-way (here a file size limit of 2 kB, as a full disk) left a truncated URDF under the
    name, which the next call refused to replace ("exists already"). Now nothing is left, no temporary either, and
    the next call writes the whole file; a file that exists is still never overwritten."""
    import resource
    import subprocess
    import sys
    path = tmp_path / "iiwa7.urdf"
    code = ("import dynamics\ntry:\n    dynamics.load_robot('iiwa7').to_urdf(%r)\nexcept dynamics.ModelError as e:\n"
            "    print(e)\n" % str(path))
    limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))      # noqa: E731
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limit, timeout=60)
    assert out.stdout.strip() == f"to_urdf: cannot write {path} (File too large)", out.stderr
    assert list(tmp_path.iterdir()) == []
    dyn.load_robot("iiwa7").to_urdf(path)
    assert dyn.from_urdf(str(path)).n == 7 and [p.name for p in tmp_path.iterdir()] == ["iiwa7.urdf"]
    before = path.read_bytes()
    one_line(lambda: dyn.to_urdf(dyn.load_robot("planar4"), path), r"exists already \(never overwritten\)")
    assert path.read_bytes() == before


@pytest.mark.parametrize("attrs, why", [
    ('velocity="1_0" effort="5"', r"<limit velocity=\"1_0\">: not a number"),          # float() read it as 10
    ('velocity="1e400" effort="5"', r"<limit velocity=\"1e400\">: not a number"),      # ... as inf: no limit
    ('velocity="1" effort="٥"', r"<limit effort=\"٥\">: not a number"),                # ... as 5
    ('velocity="1" effort="infinity"', r"<limit effort=\"infinity\">: not a number"),
])
def test_urdf_numbers_are_plain_decimals(tmp_path, attrs, why):
    """What C++ URDF parsers read as numbers; Python's float() took more, and a typo changed a limit silently."""
    path = tmp_path / "r.urdf"
    path.write_text('<robot name="r"><link name="base"/><link name="a"><inertial><mass value="1"/><inertia ixx="0.01" '
                    'iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j1" type="revolute">'
                    '<parent link="base"/><child link="a"/><origin xyz=" 0 0 1e-1 " rpy="0 0 .5"/>'
                    f'<limit lower="-1.5" upper="+2." {attrs}/></joint></robot>', encoding="utf-8")
    one_line(lambda: from_urdf(str(path)), r"r\.urdf: joint 'j1' <limit>: " + why + "$")
    path.write_text(path.read_text(encoding="utf-8").replace(attrs, 'velocity="1E+1" effort="inf"'), encoding="utf-8")
    robot = from_urdf(str(path))                                   # plain spellings, and inf written out, still read
    assert (robot.qd_max[0], robot.tau_max[0], robot.q_max[0], robot.placement_translations[0][2]) == (10.0, np.inf,
                                                                                                         2.0, 0.1)


@pytest.mark.parametrize("dyn_el, why", [('<dynamics friction="inf"/>', "<dynamics friction>"),
                                         ('<dynamics damping="-0.1"/>', "<dynamics damping>")])
def test_urdf_friction_must_be_finite_and_named(tmp_path, dyn_el, why):
    """friction="inf" ended in 'r.urdf: coulomb: values must be finite numbers, got [inf]', naming no joint."""
    path = tmp_path / "r.urdf"
    path.write_text('<robot name="r"><link name="base"/><link name="a"><inertial><mass value="1"/><inertia ixx="0.01" '
                    'iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j1" type="continuous">'
                    f'<parent link="base"/><child link="a"/>{dyn_el}</joint></robot>')
    one_line(lambda: from_urdf(str(path)), rf"r\.urdf: joint 'j1': {why}: must be a finite number >= 0$")


def test_a_joint_with_lower_equal_to_upper_warns_that_it_cannot_move(tmp_path):
    """<limit lower="0" upper="0"> (SolidWorks' exporter for 'not given': example-robot-data's double pendulum,
    Centauro's wheels, the quadruped's knees) loaded silently; the joint could not move, which the planner said only
    when a waypoint left [0, 0]. A locked joint there is fine."""
    path = tmp_path / "r.urdf"
    path.write_text('<robot name="r"><link name="base"/><link name="a"><inertial><mass value="1"/><inertia ixx="0.01" '
                    'iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link><link name="b"><inertial><mass '
                    'value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                    '<joint name="j1" type="revolute"><parent link="base"/><child link="a"/><limit lower="0" upper="0" '
                    'velocity="1" effort="1"/></joint><joint name="j2" type="prismatic"><parent link="a"/><child '
                    'link="b"/><limit lower="-0.1" upper="0.2" velocity="1" effort="1"/></joint></robot>')
    with pytest.warns(URDFWarning, match=r"r\.urdf: <limit lower> equals upper for joint\(s\) 'j1' at 0: the joint "
                                         r"cannot move \(give its range, or lock it there\)$"):
        assert from_urdf(str(path)).q_max[0] == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert from_urdf(str(path), locked_joints={"j1": 0.0}).joint_names == ("j2",)
