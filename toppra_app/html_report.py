"""An interactive report as one self-contained HTML file (plotly.js inline: it opens offline, years
later, with nothing else): zoomable joint profiles against their limits, the phase plane with its limit
curves, and the robot animated along the planned trajectory with play/pause and a time slider.

Plotly earns its place here: zoom, hover and 3-D (WebGL) in any browser from one file, with no server
and no JavaScript of ours beyond two lines that record rendering and errors for the tests
(``<html data-rendered="N" data-errors="K">``). This module builds generic pieces (`page`,
`profiles_figure`, `phase_plane_figure`, `robot_lines`, `animation`); the scenarios add their cell."""

from __future__ import annotations

import base64
import functools
import html
import json
import math

import numpy as np

MAX_POINTS = 300           # per trace in the profile plots, about: zoomable, yet a small file (`profiles_figure`)
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf"]


@functools.lru_cache(maxsize=1)
def plotly_js() -> str:
    import plotly.offline
    return plotly.offline.get_plotlyjs()


def figure_html(fig, div_id: str, auto_play: bool = True) -> str:
    """A figure (a plain dict with data, layout and optionally frames — or a plotly Figure) as a <div> and
    its script: the markup of ``plotly.io.to_html(full_html=False)``, with the figure written by `to_json`
    (numeric arrays as binary typed arrays), not by plotly's validating encoder, which cost seconds on an
    animation. With frames and ``auto_play`` the animation plays once on load, as plotly's does."""
    if not isinstance(fig, dict):
        fig = fig.to_plotly_json()
    height = fig.get("layout", {}).get("height")
    height = "100%" if height is None else f"{height}px"
    script = f'Plotly.newPlot("{div_id}", {to_json(fig.get("data", []))}, {to_json(fig.get("layout", {}))}, ' \
             f'{to_json(dict(displaylogo=False, responsive=True))})'
    if fig.get("frames"):
        script += f".then(function(){{Plotly.addFrames('{div_id}', {to_json(fig['frames'])});}})"
        if auto_play:
            script += f".then(function(){{Plotly.animate('{div_id}', null);}})"
    return (f'<div style="height:{height}; width:100%;"><div id="{div_id}" class="plotly-graph-div" '
            f'style="height:100%; width:100%;"></div><script>window.PLOTLYENV=window.PLOTLYENV || {{}};'
            f'if (document.getElementById("{div_id}")) {{{script};}}</script></div>')


def plotly_text(text) -> str:
    """A user's name (robot, joint, link, cell) as plotly shows it literally in a title, legend, hover or axis:
    plotly reads <b>, <br>, <a>, … in its text as markup and %{…} in a hovertemplate as a value ("j<br>2" was
    drawn on two lines, a joint "%{x}" showed as the time). Its entities are decoded: "<", ">", "&", "%" escaped."""
    return html.escape(str(text), quote=False).replace("%", "&#37;")


def _typed_array(a: np.ndarray):
    """A float array as plotly.js reads it fastest: a typed array spec (dtype, base64 data) in float32
    (NaN: a gap in a line, as null is) — what a screen shows, at a quarter of the text's size; short
    arrays (axis ranges, …) and other kinds as lists."""
    if a.size < 16 or a.dtype.kind != "f":
        return _finite(a.tolist())
    a = np.ascontiguousarray(a, dtype=np.float32)
    spec = {"dtype": "f4", "bdata": base64.b64encode(a.data).decode("ascii")}
    if a.ndim > 1:
        spec["shape"] = ", ".join(str(n) for n in a.shape)
    return spec


def _plain(o):
    if isinstance(o, np.ndarray):
        return _typed_array(o)
    if isinstance(o, np.generic):
        return _finite(o.item())
    if hasattr(o, "to_plotly_json"):
        return o.to_plotly_json()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def to_json(value) -> str:
    """Compact JSON of a figure's parts for a <script>: numpy arrays by `_typed_array`, NaN/±inf scalars as
    null (Python's json would write NaN), and "<", ">" escaped so that no text can close the script."""
    try:
        text = json.dumps(value, default=_plain, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:                                  # a NaN or ±inf scalar: as null
        text = json.dumps(_finite(value), default=_plain, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e")


def _finite(o):
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def table_html(headers, rows) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page(title: str, sections) -> str:
    """The whole document: `sections` is a list of (heading or None, HTML)."""
    parts = [f"<h2>{html.escape(h)}</h2>\n{body}" if h else body for h, body in sections]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<script>window.reportErrors=[];window.addEventListener('error',function(e){{window.reportErrors.push(String(e.message));
document.documentElement.setAttribute('data-errors',window.reportErrors.length);}});</script>
<script>{plotly_js()}</script>
<style>body{{font-family:sans-serif;margin:1em 2em;color:#222}} table{{border-collapse:collapse;margin:0.5em 0}}
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right}} th{{background:#f3f3f3}} h2{{margin-top:1.5em}}
.note{{color:#555;font-size:90%}}</style></head>
<body><h1>{html.escape(title)}</h1>
{chr(10).join(parts)}
<script>document.documentElement.setAttribute('data-rendered',document.querySelectorAll('.js-plotly-plot').length);</script>
</body></html>
"""


def profiles_figure(sample, robot, title: str = "") -> dict:
    """Torque, velocity and acceleration of every joint over time as fractions of their limits (±1
    dashed), the values in units on hover; one row each, sharing the time axis (a plain figure dict). Each
    line goes through the first, last, smallest and largest sample of each of MAX_POINTS / 2 runs of samples
    (`toppra_app.decimate.envelope`; ~MAX_POINTS points where it is smooth): every peak and step is there at
    its value, and the figure is the same size whatever the number of samples."""
    from .decimate import envelope
    rows = [("τ", "tau", robot.tau_max, "N·m"), ("q̇", "qd", robot.qd_max, "rad/s"), ("q̈", "qdd", robot.qdd_max, "rad/s²")]
    rows = [r for r in rows if np.isfinite(r[2]).any()]
    t = np.asarray(sample.t)
    gap, height = 0.05, (1.0 - 0.05 * (len(rows) - 1)) / len(rows)
    data, layout = [], dict(title=dict(text=title), height=220 * len(rows) + 100, margin=dict(l=50, r=20, t=60, b=40),
                            legend=dict(orientation="h", y=1.08), shapes=[], annotations=[],
                            xaxis=dict(title=dict(text="t [s]"), anchor=f"y{len(rows)}"))
    for r, (sym, key, lim, unit) in enumerate(rows, start=1):
        top = 1.0 - (r - 1) * (height + gap)
        yname = "y" if r == 1 else f"y{r}"
        layout["yaxis" if r == 1 else f"yaxis{r}"] = dict(domain=[top - height, top], range=[-1.15, 1.15], anchor="x",
                                                          title=dict(text=f"{sym} / {sym}max"))
        values = np.asarray(getattr(sample, key))
        lim = np.where(np.isfinite(lim), lim, np.nan)
        keep = envelope(values, MAX_POINTS // 2)
        for j in range(robot.n):
            v, jname = values[keep[j], j], plotly_text(robot.joint_names[j])
            data.append(dict(
                type="scatter", x=t[keep[j]], y=v / lim[j], customdata=v, mode="lines",
                xaxis="x", yaxis=yname, name=jname, legendgroup=jname,
                showlegend=r == 1, line=dict(width=1.3, color=COLOURS[j % len(COLOURS)]),
                hovertemplate=f"{jname}<br>t = %{{x:.4f}} s<br>{sym} = %{{customdata:.4g}} {unit}"
                              f"<br>%{{y:.1%}} of the limit<extra></extra>"))
        for y in (-1.0, 1.0):
            layout["shapes"].append(dict(type="line", xref="paper", x0=0, x1=1, yref=yname, y0=y, y1=y,
                                         line=dict(color="black", dash="dash", width=1)))
    return dict(data=data, layout=layout)


def phase_plane_figure(plan, title: str = "", curves: dict | None = None) -> dict:
    """θ̇ against θ: the plan and its limit curves (velocity limits; torque and acceleration limits) as a
    plain figure dict; ``curves``: `toppra_app.plots.phase_plane_curves` of the plan, when already made."""
    if curves is None:
        from .plots import phase_plane_curves
        curves = phase_plane_curves(plan)
    top = max(float(np.max(plan.sd)), 1e-9)
    data = [dict(type="scatter", x=np.asarray(plan.s), y=np.asarray(plan.sd), name=f"plan (T = {plan.duration:.4f} s)",
                 line=dict(width=2.5))]
    for key, name, colour in (("sd_velocity", "velocity limits", "#ff7f0e"),
                              ("sd_dynamics", "torque / acceleration limits", "#d62728")):
        y = np.where(np.isfinite(curves[key]), np.minimum(curves[key], 3 * top), np.nan)
        data.append(dict(type="scatter", x=curves["theta"], y=y, name=name, line=dict(dash="dash", color=colour)))
    layout = dict(title=dict(text=title), xaxis=dict(title=dict(text="path parameter θ")),
                  yaxis=dict(title=dict(text="θ̇ [1/s]"), range=[0, 1.3 * top]), height=360,
                  margin=dict(l=50, r=20, t=50, b=40))
    return dict(data=data, layout=layout)


def robot_lines(robot, q, tool_frame: str | None = None) -> np.ndarray:
    """(K, m, 3) polyline points of the robot at K configurations: base, each body's origin along the
    kinematic tree (a branch restarts at its parent, NaN-separated), and the tool frame's origin."""
    from dynamics.forward_kinematics import forward_kinematics
    q = np.atleast_2d(q)
    T = forward_kinematics(robot, q)                          # (K, n, 4, 4)
    P = T[..., :3, 3]
    nan = np.full((q.shape[0], 1, 3), np.nan)
    pts, prev = [np.zeros((q.shape[0], 1, 3))], -1
    for i in range(robot.n_bodies):
        parent = int(robot.parents[i])
        if parent != prev:                                    # a new branch: start at the parent
            pts += [nan, np.zeros((q.shape[0], 1, 3)) if parent < 0 else P[:, parent:parent + 1]]
        pts.append(P[:, i:i + 1])
        prev = i
    if tool_frame is not None or robot.tool_frame is not None:
        body, X = robot.frame(tool_frame)
        if body != prev:
            pts += [nan, P[:, body:body + 1]]
        pts.append((T[:, body] @ X)[:, None, :3, 3])
    return np.concatenate(pts, axis=1)


def animation(times, moving, static=(), *, title: str = "", ranges=None, height: int = 640, max_steps: int = 25) -> dict:
    """A 3-D figure (a plain dict, for `figure_html`) animated over `times` (K,): `moving(k)` returns the
    moving traces at frame k (the same number and kinds every frame), `static` traces stay. Play/pause
    buttons and a time slider. Traces are dicts (``lines3d``): plotly's validation of thousands of
    frame traces would cost seconds."""
    first = list(moving(0))
    ids = list(range(len(static), len(static) + len(first)))
    frames = [dict(data=list(moving(k)), traces=ids, name=f"{t:.3f}") for k, t in enumerate(times)]
    every = max(1, int(np.ceil(len(times) / max_steps)))
    steps = [dict(method="animate", label=f"{times[k]:.2f}",
                  args=[[f"{times[k]:.3f}"], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                                  transition=dict(duration=0))])
             for k in range(0, len(times), every)]
    dt_ms = 1000.0 * float(np.median(np.diff(times))) if len(times) > 1 else 50.0
    scene = {ax: dict(title=dict(text=f"{ax[0]} [m]")) for ax in ("xaxis", "yaxis", "zaxis")}   # (were bare x, y, z)
    scene.update(aspectmode="data")
    if ranges is not None:
        for ax, (a, b) in zip(("xaxis", "yaxis", "zaxis"), ranges):
            scene[ax].update(range=[float(a), float(b)], autorange=False)
    layout = dict(
        title=dict(text=title), height=height, margin=dict(l=0, r=0, t=40, b=0), scene=scene,
        updatemenus=[dict(type="buttons", x=0.02, y=0.02, xanchor="left", yanchor="bottom", direction="left",
                          buttons=[dict(label="▶ play", method="animate",
                                        args=[None, dict(frame=dict(duration=dt_ms, redraw=True), fromcurrent=True,
                                                         transition=dict(duration=0))]),
                                   dict(label="❚❚ pause", method="animate",
                                        args=[[None], dict(mode="immediate", frame=dict(duration=0, redraw=False),
                                                           transition=dict(duration=0))])])],
        sliders=[dict(active=0, x=0.2, len=0.78, y=0.02, currentvalue=dict(prefix="t = ", suffix=" s"),
                      steps=steps)])
    return dict(data=list(static) + first, layout=layout, frames=frames)


def lines3d(points, name: str, colour: str, width: float = 4, dash: str | None = None, markers: bool = False) -> dict:
    """A 3-D polyline trace (NaN rows break it) as a plain dict."""
    p = np.asarray(points, dtype=float)
    trace = dict(type="scatter3d", x=p[:, 0], y=p[:, 1], z=p[:, 2], mode="lines+markers" if markers else "lines",
                 name=name, hoverinfo="skip", line=dict(width=width, color=colour, **({"dash": dash} if dash else {})))
    if markers:
        trace["marker"] = dict(size=3, color=colour)
    return trace


def frame_times(duration: float, max_frames: int = 400, fps: float = 30.0) -> np.ndarray:
    """Animation times: `fps` frames a second, at most `max_frames` in all, ending exactly at `duration`."""
    k = int(min(max_frames - 1, max(1, np.ceil(duration * fps))))
    return np.linspace(0.0, duration, k + 1)


def robot_trace(points, name: str = "robot", colour: str = "#444") -> dict:
    return lines3d(points, name, colour, width=7, markers=True)


def plan_report(plan, sample, title: str) -> str:
    """The report of one plan (`toppra-app plan`): the robot along the path, profiles, phase plane."""
    robot = plan.robot
    times = frame_times(plan.duration)
    pts = robot_lines(robot, plan.eval(times))
    tip = pts[:, -1]
    lo, hi = np.nanmin(pts.reshape(-1, 3), axis=0), np.nanmax(pts.reshape(-1, 3), axis=0)
    pad = 0.1 * max(float(np.max(hi - lo)), 0.1)
    path = lines3d(tip, "tool path", "#1f77b4", width=2, dash="dot")
    fig = animation(times, lambda k: [robot_trace(pts[k])], [path], title=f"{plotly_text(robot.name)} along the path",
                    ranges=list(zip(lo - pad, hi + pad)))
    from .verify import worst_text
    worst = worst_text(plan.worst)
    load = plan.payload                    # (the report named no payload: a loaded and an empty plan read alike)
    carried = "none" if load is None else (f"{load.mass:g} kg, COM {np.round(load.com, 6).tolist()} m, principal "
                                           f"moments {np.round(np.linalg.eigvalsh(load.inertia), 6).tolist()} kg·m²")
    facts = table_html(["duration s", "grid points", "solver", "worst value / limit", "payload"],
                       [[f"{plan.duration:.4f}", plan.s.size, plan.solver, worst, carried]])
    return page(title, [(None, figure_html(fig, "view3d")), ("Plan", facts),
                        ("Joint profiles", figure_html(profiles_figure(sample, robot), "profiles")),
                        ("Phase plane", figure_html(phase_plane_figure(plan), "phase"))])
