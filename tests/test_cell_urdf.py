"""A cell file's URDF robot ([cell] urdf, locked_joints, tool_frame, package_paths): a locked joint or a tool frame
the file does not have is one line naming that key, and a xacro robot finds its packages in package_paths."""

from __future__ import annotations

import numpy as np
import pytest

from scenarios.palletizing import DEFAULT_CELL, load_cell
from toppra_app.cli import main
from toppra_app.errors import InputError


def _panda_cell(tmp_path, panda_urdf, extra):
    text = DEFAULT_CELL.read_text().replace('robot = "iiwa7"', f'urdf = "{panda_urdf}"\n{extra}')
    path = tmp_path / "my cell.toml"
    path.write_text(text.replace('flange = "flange"', 'flange = "panda_hand"'))
    return path


@pytest.mark.parametrize("extra, key, why", [
    ("locked_joints = { panda_finger_joint9 = 0.02 }", "locked_joints", "locked joint 'panda_finger_joint9' not found"),
    ("locked_joints = { panda_finger_joint1 = 0.5 }", "locked_joints",
     r"locked joint 'panda_finger_joint1': position 0.5 is outside its range \[0, 0.04\]"),
    ('tool_frame = "panda_hnd"', "tool_frame", "tool_frame 'panda_hnd': no such link on a moving body"),
])
def test_a_urdf_option_the_file_does_not_have_names_its_key(tmp_path, panda_urdf, capsys, extra, key, why):
    """These were reported as `cell.urdf: …` — the file's key, not the one that is wrong."""
    path = _panda_cell(tmp_path, panda_urdf, extra)
    with pytest.raises(InputError, match=rf"my cell\.toml: cell\.{key}: .*{why}"):
        load_cell(path, check_reach=False)
    assert main(["palletize", str(path), "--out", str(tmp_path / "out"), "--no-plots"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"cell.{key}: " in err and "\n" not in err and not (tmp_path / "out").exists()


def test_a_xacro_robot_finds_its_packages_in_package_paths(tmp_path, monkeypatch):
    """[cell] package_paths (relative to the cell file) serve a xacro robot's $(find NAME) too, not only the meshes."""
    pytest.importorskip("xacro")
    from test_urdf_packages import _description_packages
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    main_file, vendor = _description_packages(tmp_path)
    text = DEFAULT_CELL.read_text().replace('robot = "iiwa7"', f'urdf = "{main_file}"\npackage_paths = ["vendor"]')
    path = tmp_path / "cell.toml"
    path.write_text(text.replace('flange = "flange"', 'flange = "b"'))
    robot = load_cell(path, check_reach=False).base_robot
    assert robot.n == 2 and np.array_equal(robot.masses, [2.0, 1.0])
    path.write_text(path.read_text().replace('package_paths = ["vendor"]', ""))
    with pytest.raises(InputError, match=r"cell\.urdf: .*package 'gripper_description' not found"):
        load_cell(path, check_reach=False)


def test_a_urdf_cell_without_a_rated_payload_says_so(tmp_path, panda_urdf, capsys):
    """palletize's header printed "rated payload None kg" for a URDF robot without `rated_payload`. (The header
    comes before the moves; in this cell the Panda's fingers then touch the box placed: exit 2, one line.)"""
    text = DEFAULT_CELL.read_text().replace('robot = "iiwa7"', f'urdf = "{panda_urdf}"\nlocked_joints = '
                                            '{ panda_finger_joint1 = 0.04, panda_finger_joint2 = 0.04 }\ntool_frame = "panda_hand"')
    path = tmp_path / "panda.toml"
    path.write_text(text.replace('flange = "flange"', 'flange = "panda_link8"'))
    main(["palletize", str(path), "--out", str(tmp_path / "out"), "--no-plots", "--boxes", "1"])
    header = [line for line in capsys.readouterr().out.splitlines() if line.startswith("robot: ")]
    assert len(header) == 1 and "no rated payload, gripper " in header[0] and "None" not in header[0]


@pytest.mark.parametrize("command", [["palletize", "--boxes", "1", "--force"], ["payload-sweep", "--quick", "--force"],
                                     ["batch", "--serial"]])
def test_out_may_not_hold_the_cells_urdf(tmp_path, panda_urdf, capsys, command):
    """docs/safety.md: --out is never a directory that contains an input file, "the robot URDF" among them, even
    with --force. plan protected its --robot file; palletize, payload-sweep and batch only the cell file, and wrote
    their output into the URDF's directory."""
    import shutil
    robot_dir = tmp_path / "robot dir"
    robot_dir.mkdir()
    shutil.copy(panda_urdf, robot_dir / "panda.urdf")
    (tmp_path / "cells").mkdir()
    cell = _panda_cell(tmp_path / "cells", "../robot dir/panda.urdf", "")
    name, *flags = command
    assert main([name, str(cell), *flags, "--out", str(robot_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"--out {robot_dir}: " in err and "contains the input" in err and "panda.urdf" in err
    assert [p.name for p in robot_dir.iterdir()] == ["panda.urdf"]
