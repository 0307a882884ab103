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
