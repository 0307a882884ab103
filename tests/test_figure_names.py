"""Users' names in the PNG figures (the report audit): a robot, joint, cell or box type name or a ``--title`` with
"$" in it is drawn as written. Matplotlib reads text between two "$" as mathtext: "$\\foo{$" failed `plan` and
`palletize` (the whole run) with a three-line ParseFatalException, and "$5 / $10" was drawn as italic maths.
Oracle: the figure written as SVG with its text as text (``svg.fonttype = none``) holds the names verbatim."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import matplotlib
import pytest

import dynamics
from toppra_app import JointPath, plan_time_optimal

NAMES = ("$\\foo{$", "$5 / $10", "a\\$b", "j4")


@pytest.fixture(scope="module")
def plan():
    robot = dataclasses.replace(dynamics.load_robot("planar4"), name="cell $5 / $10", joint_names=NAMES)
    return plan_time_optimal(robot, JointPath.from_waypoints([[0, 0, 0, 0], [0.5, 0.3, 0.2, 0.1]]))


def _svg_texts(save, path) -> list[str]:
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        save(str(path))
    return [e.text for e in ET.parse(path).iter() if e.tag.endswith("text") and e.text]


def test_plan_plots_show_the_robot_and_joint_names_verbatim(plan, tmp_path):
    from toppra_app.plots import plot_joints, plot_phase_plane, plot_plan
    texts = _svg_texts(lambda p: plot_joints(plan.robot, plan.sample(1e-2), "velocity", p), tmp_path / "v.svg")
    assert "cell $5 / $10: velocity (dashed: limits)" in texts and set(NAMES) <= set(texts)
    assert "cell $5 / $10: phase plane" in _svg_texts(lambda p: plot_phase_plane(plan, p), tmp_path / "p.svg")
    (tmp_path / "png").mkdir()
    assert len(plot_plan(plan, tmp_path / "png", dt=1e-2)) == 4


def test_palletize_profile_and_draw_titles_verbatim(plan, tmp_path):
    from scenarios.report import profile_figure
    from toppra_app.drawing import draw_robot
    fig = profile_figure(plan.sample(1e-2), plan.robot, "move 1 of cell $\\foo{$")
    texts = _svg_texts(fig.savefig, tmp_path / "m.svg")
    assert "move 1 of cell $\\foo{$" in texts and set(NAMES) <= set(texts)
    ax = draw_robot(plan.robot, [0.1, 0.2, 0.3, 0.4], title="$x^$ \\$")
    assert "$x^$ \\$" in _svg_texts(ax.figure.savefig, tmp_path / "d.svg")


def test_pallet_top_view_shows_the_cell_and_box_type_names_verbatim(tmp_path):
    from scenarios.palletizing import DEFAULT_CELL, load_cell
    from scenarios.report import pallet_figures, pallet_view
    text = DEFAULT_CELL.read_text(encoding="utf-8").replace('name = "iiwa7 small-box palletizing"', 'name = "cell $\\\\foo{$"')
    text = text.replace('"heavy"', '"$5 box"').replace("[boxes.heavy]", '[boxes."$5 box"]')
    (tmp_path / "cell.toml").write_text(text, encoding="utf-8")
    cell = load_cell(tmp_path / "cell.toml")
    top, _ = pallet_figures(pallet_view(cell, [0]))
    texts = _svg_texts(top.savefig, tmp_path / "top.svg")
    assert "cell $\\foo{$: top view (numbers = placing order)" in texts and "box '$5 box'" in texts
