"""Users' names in report.html drawn as written (the report audit): plotly reads <b>, <br>, <a>, … in its text
as markup and %{…} in a hovertemplate as a value, so a joint "j<br>2" was drawn on two lines, "<b>x</b>" in bold
and a robot "r<i>1</i>" in italics. Oracle: the DOM headless Chromium builds (the legend's and title's text as
drawn); plotly's own markup test: no <tspan> or <a> inside them. Markup is never a script either way (page())."""

from __future__ import annotations

import dataclasses
import html.parser
import subprocess

import pytest

import dynamics
from test_report_html import BROWSER, FLAGS
from toppra_app import JointPath, plan_time_optimal
from toppra_app.html_report import plan_report

pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium (apt-get install chromium; .ci/run does)")
NAMES = ("j<br>2", "<b>x</b>", "%{x} s", "a &amp; b")


class _Texts(html.parser.HTMLParser):
    """The text of every <text class="legendtext"> and "gtitle", and the tags found inside them."""

    def __init__(self):
        super().__init__()
        self.texts, self.inner, self._open = [], [], None

    def handle_starttag(self, tag, attrs):
        cls = dict(attrs).get("class") or ""
        if tag == "text" and cls in ("legendtext", "gtitle"):
            self._open = ""
        elif self._open is not None:
            self.inner.append(tag)

    def handle_data(self, data):
        if self._open is not None:
            self._open += data

    def handle_endtag(self, tag):
        if tag == "text" and self._open is not None:
            self.texts.append(self._open)
            self._open = None


def test_plan_report_draws_robot_and_joint_names_verbatim(tmp_path):
    robot = dataclasses.replace(dynamics.load_robot("planar4"), name="r<i>1</i>", joint_names=NAMES)
    plan = plan_time_optimal(robot, JointPath.from_waypoints([[0, 0, 0, 0], [0.5, 0.3, 0.2, 0.1]]))
    page = tmp_path / "report.html"
    page.write_text(plan_report(plan, plan.sample(1e-2), "names"), encoding="utf-8")
    dom = subprocess.run([BROWSER, *FLAGS, "--dump-dom", page.resolve().as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    parsed = _Texts()
    parsed.feed(dom)
    assert set(NAMES) <= set(parsed.texts) and "r<i>1</i> along the path" in parsed.texts
    assert parsed.inner == []
