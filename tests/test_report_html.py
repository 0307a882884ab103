"""report.html rendered by a real browser (headless Chromium, Debian's `chromium`; .ci/run installs it):
every figure is drawn, no script error happens, and the 3-D view of the cell is not blank."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from toppra_app.cli import main

BROWSER = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium (apt-get install chromium; .ci/run does)")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader", "--use-angle=swiftshader",
         "--virtual-time-budget=15000", "--enable-logging=stderr", "--v=0"]


def render(path, tmp_path):
    """(rendered figures, script errors, console error lines, screenshot RGB array) of an HTML file."""
    url = path.resolve().as_uri()
    dom = subprocess.run([BROWSER, *FLAGS, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    head = dom.stdout[:2000]
    rendered = re.search(r'data-rendered="(\d+)"', head)
    errors = re.search(r'data-errors="(\d+)"', head)
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line and ("Uncaught" in line or "Error" in line)]
    shot = tmp_path / "shot.png"
    subprocess.run([BROWSER, *FLAGS, "--window-size=1200,900", f"--screenshot={shot}", url], capture_output=True,
                   timeout=120)
    import matplotlib.image
    return (int(rendered.group(1)) if rendered else 0, int(errors.group(1)) if errors else 0, console,
            matplotlib.image.imread(shot)[..., :3])


def assert_not_blank(img, what):
    """The 3-D view (top of the page): many colours, and a fair share of pixels that are neither the page's
    white nor the scene's flat background."""
    view = img[100:650, 50:1150]
    colours = np.unique((view * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 50, f"{what}: {len(colours)} colours"
    dark = (view.max(axis=2) < 0.45).mean()                  # robot, pallet, boxes are drawn dark or saturated
    assert dark > 0.002, f"{what}: {dark:.4f} of the view drawn"


def test_palletize_report_renders_every_figure(tmp_path):
    out = tmp_path / "out"
    assert main(["palletize", "--quick", "--no-plots", "--out", str(out)]) == 0
    rendered, errors, console, img = render(out / "report.html", tmp_path)
    assert (rendered, errors, console) == (1 + 2 * 4, 0, [])        # the cell, and per move profiles + phase plane
    assert_not_blank(img, "palletize report")
    text = (out / "report.html").read_text()
    assert "https://" not in text.split("<script>", 2)[1][:200] and 'src="http' not in text   # offline


def test_plan_report_renders(tmp_path):
    import dynamics
    r = dynamics.load_robot("ur5e")
    wp = tmp_path / "wp.csv"
    wp.write_text("\n".join(",".join(repr(float(v)) for v in row) for row in (np.zeros(6), 0.4 * r.q_max)) + "\n")
    out = tmp_path / "out"
    assert main(["plan", str(wp), "--robot", "ur5e", "--no-plots", "--out", str(out)]) == 0
    rendered, errors, console, img = render(out / "report.html", tmp_path)
    assert (rendered, errors, console) == (3, 0, [])
    assert_not_blank(img, "plan report")


def test_batch_report_renders(tmp_path):
    m = tmp_path / "m.toml"
    m.write_text('[batch]\ncells = ["default"]\nboxes = [1]\n[sweep]\n"boxes.heavy.mass" = [2.0, 4.0]\n')
    out = tmp_path / "out"
    assert main(["batch", str(m), "--serial", "--no-trajectories", "--out", str(out)]) == 0
    rendered, errors, console, _ = render(out / "report.html", tmp_path)
    assert (rendered, errors, console) == (1, 0, [])


def test_a_script_error_is_caught(tmp_path):
    """The check itself: a page whose script fails is reported as such (not as rendered)."""
    from toppra_app.html_report import page
    bad = tmp_path / "bad.html"
    bad.write_text(page("bad", [(None, "<script>no_such_function();</script>")]))
    rendered, errors, console, img = render(bad, tmp_path)
    assert rendered == 0 and errors == 1 and any("no_such_function" in line for line in console)
    with pytest.raises(AssertionError):
        assert_not_blank(img, "bad")
