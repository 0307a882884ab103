"""Hostile URDF files (the parsers audit): collision mesh names that are no file or leave their package, a mesh
file coal cannot read, and attribute values or names that are huge or hold a newline — each one bounded line
naming the URDF (or the mesh file) and the element."""

from __future__ import annotations

import pytest

import dynamics
from dynamics import ModelError
from dynamics.urdf_collision import collision_shapes

ONE_LINK = """<robot name="r"><link name="a"/><link name="b">{collision}<inertial><mass value="1"/>
<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="1" velocity="1" effort="10"/></joint></robot>"""


def _mesh_urdf(tmp_path, filename):
    (tmp_path / "pkgs" / "pkg" / "meshes").mkdir(parents=True, exist_ok=True)
    (tmp_path / "secret.stl").write_text("solid x\nendsolid x\n")
    path = tmp_path / "robot.urdf"
    path.write_text(ONE_LINK.format(collision=f'<collision><geometry><mesh filename="{filename}"/></geometry>'
                                              f'</collision>'))
    return str(path)


@pytest.mark.parametrize("filename, why", [
    ("package://pkg/../../secret.stl", r"the path leaves package 'pkg' \('\.\.'\)"),
    ("package://pkg/meshes/../../../secret.stl", r"the path leaves package 'pkg'"),
    ("package://pkg/meshes/none.stl", r"no such file in package 'pkg'"),
    ("file:///nonexistent/arm.stl", "no such file"),
    ("meshes_missing/arm.stl", "no such file"),
    ("/dev/zero", "not a regular file"),
    ("pkgs", "not a regular file"),
])
def test_a_mesh_name_that_is_no_file_of_its_package_is_one_line_naming_the_link(tmp_path, filename, why):
    """A '..' out of the package resolved to a file outside it (secret.stl was read as the mesh); a file:// or
    relative name of no file, /dev/zero or a directory went to coal, whose error was six lines naming its C++
    source and neither the URDF nor the link; a package without the file was "package 'pkg' not found"."""
    path = _mesh_urdf(tmp_path, filename)
    robot = dynamics.from_urdf(path)                 # the dynamics never read meshes
    with pytest.raises(ModelError) as info:
        collision_shapes(path, robot, [str(tmp_path / "pkgs")])
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{path}: link 'b' <collision> 1: mesh '{filename}': ")
    assert pytest.importorskip("re").search(why, msg), msg


def test_a_package_mesh_inside_its_package_still_resolves(tmp_path):
    path = _mesh_urdf(tmp_path, "package://pkg/meshes/../meshes/./arm.stl")
    (tmp_path / "pkgs" / "pkg" / "meshes" / "arm.stl").write_text("solid x\nendsolid x\n")
    shape, = collision_shapes(path, dynamics.from_urdf(path), [str(tmp_path / "pkgs")])
    assert shape.file.endswith("arm.stl") and shape.kind == "mesh"


def test_a_mesh_file_coal_cannot_read_is_one_line_naming_it(tmp_path):
    """A collision mesh that is text (or a truncated STL) ended palletize with coal's six-line ValueError, which
    began 'From file: /project/src/mesh_loader/assimp.cpp' and named neither the mesh nor what was wrong."""
    pytest.importorskip("coal")
    from scenarios.palletizing import collisions as col
    from toppra_app.errors import InputError
    path = _mesh_urdf(tmp_path, "package://pkg/meshes/arm.stl")
    mesh = tmp_path / "pkgs" / "pkg" / "meshes" / "arm.stl"
    mesh.write_text("hello\n")
    shape, = collision_shapes(path, dynamics.from_urdf(path), [str(tmp_path / "pkgs")])
    with pytest.raises(InputError) as info:
        col.urdf_geometry(path, shape)
    msg = str(info.value)          # (and the URDF and link, which the message lacked in the twenty-ninth session)
    assert "\n" not in msg and "assimp.cpp" not in msg
    assert msg.startswith(f"{path}: link {shape.link!r}: mesh {mesh}: coal could not read it (")


def _urdf(tmp_path, text, name="robot.urdf"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


BASE = ONE_LINK.format(collision="")


@pytest.mark.parametrize("old, new, where", [
    ('effort="10"', 'effort="' + "1" * 100_000 + '"', "joint 'j' <limit>: <limit effort=\"111"),
    ('xyz="0 0 1"', 'xyz="' + "0 " * 500_000 + '"', "joint 'j' <axis>: <axis xyz=\"0 0 "),
    ('<child link="b"/>', '<child link="b&#10;x"/>', "joint 'j': <child link=\"b\\nx\">: no such link"),
    ('<joint name="j"', '<joint name="j&#13;&#10;k"', "<joint name='j\\r\\nk'>: a name must be one line of printable"),
    ('<link name="a"/>', '<link name="a"/>' + "".join(f'<link name="root{i}"/>' for i in range(4000)),
     "two or more root links (a, root0, root1"),
])
def test_a_huge_or_multi_line_value_or_name_is_quoted_on_one_bounded_line(tmp_path, capsys, old, new, where):
    """from_urdf quoted attribute values whole (a 1 MB `xyz` made a 1 MB message, written to the terminal by
    `toppra-app plan`), and a name or value holding a character reference such as &#10; broke the one-line
    message over lines."""
    text = BASE.replace(old, new)
    if "&#13;" in new:
        text = text.replace('effort="10"', 'effort="ten"')
    path = _urdf(tmp_path, text)
    with pytest.raises(ModelError) as info:
        dynamics.from_urdf(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: {where}") and "\n" not in msg and "\r" not in msg and len(msg) <= 1000, msg[:400]
    from toppra_app.cli import main
    (tmp_path / "wp.csv").write_text("0\n0.5\n")
    assert main(["plan", str(tmp_path / "wp.csv"), "--robot", path, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 1100 and where in err and not (tmp_path / "out").exists()


def test_short_messages_are_left_as_they_are(tmp_path):
    path = _urdf(tmp_path, BASE.replace('effort="10"', 'effort="0x10"'))
    with pytest.raises(ModelError, match=r'^.*robot\.urdf: joint \'j\' <limit>: <limit effort="0x10">: not a number$'):
        dynamics.from_urdf(path)
