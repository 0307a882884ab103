"""from_urdf's package_dirs: a xacro's ROS packages (``$(find NAME)``, ``package://NAME/…`` includes) found without
ROS, as design.md's `from_urdf(path, ..., package_dirs=())` promises (`dynamics/io/packages.py`)."""

import numpy as np
import pytest

from dynamics.model import ModelError
from dynamics.urdf import from_urdf
from test_urdf import inertial, joint


def _description_packages(root):
    """A robot description as ROS workspaces lay them out, without ROS: root/ws/src/arm_description/urdf/arm.urdf.xacro
    includes its links through ``package://arm_description/…`` and a gripper from another package through
    ``$(find gripper_description)``, which lives in root/vendor. Returns (the xacro file, root/vendor)."""
    arm = root / "ws" / "src" / "arm_description" / "urdf"
    grip = root / "vendor" / "gripper_description" / "urdf"
    arm.mkdir(parents=True)
    grip.mkdir(parents=True)
    (arm / "links.xacro").write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro">'
                                     f'<link name="a">{inertial(2.0, xyz="0 0 0.2")}</link></robot>')
    (grip / "gripper.xacro").write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro">'
                                        f'<link name="b">{inertial(1.0, xyz="0 0 0.05")}</link></robot>')
    main = arm / "arm.urdf.xacro"
    main.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="arm"><link name="base"/>'
                    '<xacro:include filename="package://arm_description/urdf/links.xacro"/>'
                    '<xacro:include filename="$(find gripper_description)/urdf/gripper.xacro"/>'
                    + joint("j1", "base", "a") + joint("j2", "a", "b", xyz="0 0 0.4") + "</robot>")
    return main, root / "vendor"


def test_xacro_finds_packages_in_package_dirs_without_ros(tmp_path, monkeypatch):
    """design.md's `from_urdf(..., package_dirs=())`: a xacro's ``$(find NAME)`` (xacro asks ROS's ament index,
    absent here: it failed) and ``package://NAME/…`` includes (xacro joined them to the including file's folder:
    it failed) are found in package_dirs, ROS_PACKAGE_PATH or the file's own ancestors; the model is the one of
    the URDF written out by hand. xacro is left as it was."""
    xacro = pytest.importorskip("xacro")
    from xacro import substitution_args
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    main, vendor = _description_packages(tmp_path)
    plain = tmp_path / "arm.urdf"
    plain.write_text('<robot name="arm"><link name="base"/>' + f'<link name="a">{inertial(2.0, xyz="0 0 0.2")}</link>'
                     + f'<link name="b">{inertial(1.0, xyz="0 0 0.05")}</link>' + joint("j1", "base", "a")
                     + joint("j2", "a", "b", xyz="0 0 0.4") + "</robot>")
    want = from_urdf(str(plain))
    with pytest.raises(ModelError, match=r"arm\.urdf\.xacro: xacro could not expand it: \$\(find gripper_description\): "
                                         r"package 'gripper_description' not found \(give its parent directory in "
                                         r"package_dirs, or set ROS_PACKAGE_PATH or AMENT_PREFIX_PATH\)$"):
        from_urdf(str(main))                     # its own package is found among its ancestors, the other is not
    for got in (from_urdf(str(main), package_dirs=str(vendor)), from_urdf(main, package_dirs=[vendor / "gripper_description"])):
        for key in ("masses", "coms", "inertias", "placement_translations", "q_max", "tau_max"):
            assert np.array_equal(getattr(got, key), getattr(want, key)), key
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(vendor))
    assert np.array_equal(from_urdf(str(main)).masses, want.masses)
    assert substitution_args._eval_find.__module__ == "xacro.substitution_args"
    assert xacro.abs_filename_spec.__module__ == "xacro"
    with pytest.raises(ModelError, match=r"^from_urdf: package_dirs: expected a directory or a list of directories, "
                                         r"got 3$"):
        from_urdf(str(main), package_dirs=3)


def test_collision_shapes_of_a_xacro_robot_find_its_packages_in_search_paths(tmp_path, monkeypatch):
    """collision_shapes expanded the xacro again without the search paths: the robot loaded, its shapes did not."""
    pytest.importorskip("xacro")
    from dynamics.urdf_collision import collision_shapes
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    main, vendor = _description_packages(tmp_path)
    robot = from_urdf(main, package_dirs=[vendor])
    assert collision_shapes(main, robot, search_paths=[vendor]) == []          # (the test links have no <collision>)


def test_a_xacro_file_named_in_capitals_is_expanded(tmp_path):
    """--robot ARM.XACRO is taken for a file (the command line ignores the case) but was read as plain URDF: its
    includes and ${...} left unexpanded."""
    pytest.importorskip("xacro")
    main, vendor = _description_packages(tmp_path)
    upper = main.with_name("ARM.URDF.XACRO")
    upper.write_text(main.read_text())
    a, b = from_urdf(main, package_dirs=[vendor]), from_urdf(upper, package_dirs=[vendor])
    assert a.link_names == b.link_names and np.array_equal(a.masses, b.masses)


def test_ros_2s_ament_index_still_serves_find_where_ros_is_installed(tmp_path, monkeypatch):
    """With ROS 2 sourced, xacro's own $(find) (the ament index) found packages that neither package_dirs nor the
    file's ancestors hold; it still does (after package_dirs, which come first)."""
    import sys
    import types
    pytest.importorskip("xacro")
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    main, vendor = _description_packages(tmp_path)
    asked = []

    def share(name):
        asked.append(name)
        if name != "gripper_description":
            raise LookupError(name)            # (ament raises PackageNotFoundError)
        return str(vendor / "gripper_description")
    ament = types.ModuleType("ament_index_python")
    ament.packages = types.ModuleType("ament_index_python.packages")
    ament.packages.get_package_share_directory = share
    monkeypatch.setitem(sys.modules, "ament_index_python", ament)
    monkeypatch.setitem(sys.modules, "ament_index_python.packages", ament.packages)
    assert from_urdf(main).link_names == ("a", "b") and "gripper_description" in asked
    asked.clear()
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "gripper_description" / "urdf").mkdir(parents=True)
    (elsewhere / "gripper_description" / "urdf" / "gripper.xacro").write_text(
        (vendor / "gripper_description" / "urdf" / "gripper.xacro").read_text().replace('value="1.0"', 'value="3.0"'))
    robot = from_urdf(main, package_dirs=[elsewhere])
    assert robot.masses[1] == 3.0 and "gripper_description" not in asked


def test_a_sourced_ros_2_workspace_serves_find_and_meshes_through_ament_prefix_path(tmp_path, monkeypatch):
    """A ROS 2 user with a sourced workspace but a virtual environment without ROS's `ament_index_python`: the
    packages are in ``<prefix>/share/NAME`` of AMENT_PREFIX_PATH. xacro's ``$(find)`` and a mesh's
    ``package://`` were looked up in package_dirs, ROS_PACKAGE_PATH and the file's ancestors only: not found."""
    import os
    import sys
    pytest.importorskip("xacro")
    from dynamics.io.urdf_collision import resolve_uri
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.setitem(sys.modules, "ament_index_python", None)        # (importing it fails, as without ROS)
    main, vendor = _description_packages(tmp_path)
    install = tmp_path / "install" / "gripper_description"              # colcon's merged-install layout
    (install / "share").mkdir(parents=True)
    os.rename(vendor / "gripper_description", install / "share" / "gripper_description")
    mesh = install / "share" / "gripper_description" / "meshes" / "finger.stl"
    mesh.parent.mkdir()
    mesh.write_bytes(b"solid finger\nendsolid finger\n")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "nothing_here"))
    with pytest.raises(ModelError, match=r"package 'gripper_description' not found .*or AMENT_PREFIX_PATH\)$"):
        from_urdf(main)
    with pytest.raises(ModelError, match=r"mesh 'package://gripper_description/meshes/finger\.stl': package "):
        resolve_uri("package://gripper_description/meshes/finger.stl", str(main))
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join([str(tmp_path / "nothing_here"), str(install)]))
    assert from_urdf(main).link_names == ("a", "b")
    assert resolve_uri("package://gripper_description/meshes/finger.stl", str(main)) == str(mesh)
