"""`toppra-app draw --out`: a symbolic link at the name, an empty name, a JPEG and a name with no image format
(audits)."""

from __future__ import annotations

import os

import pytest

from toppra_app.cli import main


@pytest.mark.parametrize("target", ["nowhere.png", "ours.png"])
def test_a_symbolic_link_at_out_is_refused_and_kept(tmp_path, capsys, target):
    """The name was resolved first: a dangling link passed as a new file, and a link to a PNG of ours as ours;
    both links were then replaced by the figure."""
    assert main(["draw", "planar4", "--out", str(tmp_path / "ours.png")]) == 0
    link = tmp_path / "link.png"
    link.symlink_to(target)
    assert main(["draw", "planar4", "--out", str(link)]) == 2
    err = capsys.readouterr().err.strip()
    assert "--out" in err and "symbolic link" in err and "\n" not in err
    assert link.is_symlink() and os.readlink(link) == target


def test_an_empty_out_is_refused(tmp_path, capsys, monkeypatch):
    """`--out ''` drew into ROBOT.png in the working directory."""
    monkeypatch.chdir(tmp_path)
    assert main(["draw", "planar4", "--out", ""]) == 2
    assert "--out: empty path" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["newdir/", "exists"])
def test_an_out_naming_a_directory_is_refused_before_drawing(tmp_path, capsys, monkeypatch, name):
    """`--out newdir/` failed after the drawing with "cannot write: Is a directory", and an existing directory was
    called a file "not written by this tool"; now one line before any work, naming a directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "exists").mkdir()
    assert main(["draw", "planar4", "--out", name]) == 2
    assert capsys.readouterr().err.strip().endswith(f"--out {name}: names a directory; give a file name, e.g. "
                                                    f"--out robot.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exists"] and not any((tmp_path / "exists").iterdir())


def test_a_jpeg_is_written(tmp_path, capsys):
    """It ended in "error: metadata not supported for format 'jpeg'", naming no option."""
    out = tmp_path / "robot.jpg"
    assert main(["draw", "planar4", "--out", str(out)]) == 0
    assert out.read_bytes()[:3] == b"\xff\xd8\xff"
    assert [p.name for p in tmp_path.iterdir()] == ["robot.jpg"]


def test_a_name_with_no_image_format_is_refused_naming_out(tmp_path, capsys):
    """`--out robot.txt` ended in matplotlib's "Format 'txt' is not supported ...", naming no option, after the
    robot was loaded and drawn."""
    out = tmp_path / "robot.txt"
    assert main(["draw", "planar4", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"--out {out}: no image format '.txt'" in err and "png" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("q, bad", [("0,,0.5,0", "value 2 is ''"), ("0,,0.5,0,1", "value 2 is ''"), ("0,1_0,0,0", "value 2 is '1_0'"),
                                    ("0,0.5,0,-30deg", "value 4 is '-30deg'")])
def test_q_fields_must_each_be_a_plain_number(tmp_path, capsys, q, bad):
    """Before: an empty field was dropped ("0,,0.5,0,1" drew planar4 with 0.5 on joint 2, meant for joint 3;
    "0,,0.5,0" was refused as "got 3 values"), and "1_0" was read as 10."""
    out = tmp_path / "fig.png"
    assert main(["draw", "planar4", "--q", q, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--q: {bad}, not a number" in err and "\n" not in err and not out.exists()
    assert main(["draw", "planar4", "--q", "0,0.5,0,1,", "--out", str(out)]) == 0      # a trailing comma is fine


@pytest.mark.parametrize("lock, bad", [("panda_finger_joint1=1_0", "1_0"), ("panda_finger_joint1=nan", "nan"),
                                       ("=0.01", "=0.01")])
def test_lock_values_are_plain_numbers_as_plans_are(tmp_path, capsys, lock, bad):
    """draw read --lock with float(): "1_0" was 10 (plan's --lock refuses it), a joint given twice kept its last
    value without a word. JOINT alone still means 0 (draw's documented JOINT[=VALUE])."""
    from fixtures import erd_path
    urdf = erd_path("robots/panda_description/urdf/panda.urdf")
    if urdf is None:
        pytest.skip("example-robot-data's panda.urdf not installed")
    out = tmp_path / "p.png"
    assert main(["draw", urdf, "--lock", lock, "--out", str(out)]) == 2
    assert f"--lock: expected JOINT[=VALUE] with a finite number, got '{bad if bad.startswith('=') else lock}'" in \
        capsys.readouterr().err and not out.exists()
    assert main(["draw", urdf, "--lock", "panda_finger_joint1=0.01", "--lock", "panda_finger_joint1=0.02",
                 "--out", str(out)]) == 2
    assert "given twice" in capsys.readouterr().err
    assert main(["draw", urdf, "--lock", "panda_finger_joint1", "--out", str(out)]) == 0 and out.exists()   # (at 0;
    # its mimic panda_finger_joint2 follows it)


@pytest.mark.parametrize("name", ["robot.svg", "robot.jpg"])
def test_a_figure_of_another_format_is_kept_without_being_called_foreign(tmp_path, capsys, name):
    """Only a PNG carries our mark, so a second `draw --out robot.svg` is refused; it said the SVG "was not
    written by this tool", which it had written a moment before (docs/safety.md: a PNG this tool wrote is
    replaced, any other existing file refused)."""
    out = tmp_path / name
    assert main(["draw", "planar4", "--out", str(out)]) == 0
    before = out.read_bytes()
    capsys.readouterr()
    assert main(["draw", "planar4", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"--out {out}: exists; only a PNG this tool wrote is replaced" in err
    assert "not written by this tool" not in err and out.read_bytes() == before
