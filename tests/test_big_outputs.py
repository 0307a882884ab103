"""Figures and report.html of very many samples (`toppra-app plan --dt 1e-6`: 5.8 million samples of a 5.8 s plan
took 8.1 GB, 5.2 GB of it for the PNGs and the report): they draw a per-pixel-column envelope of the samples
(`toppra_app.decimate.envelope`), which keeps every run's first, last, smallest and largest sample, and cost
bounded memory; their numbers stay those of the plan on all of its samples."""

from __future__ import annotations

import json
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pytest

import dynamics
from toppra_app.decimate import envelope

N_BIG = 2_000_000


def _spiky(N: int, n: int, seed: int = 0) -> np.ndarray:
    """(N, n) smooth curves with one narrow spike (a few samples wide) at a random place per 10 000 samples
    and column: what the evenly spaced samples of a report or a thinned plot miss."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, N)
    v = np.sin(2 * np.pi * np.outer(t, np.arange(1, n + 1)))
    for k in range(n):
        at = rng.integers(0, N - 3, size=max(1, N // 10_000))
        v[at, k] += rng.choice([-1.0, 1.0], size=at.size) * rng.uniform(0.5, 2.0, size=at.size)
        v[at + 1, k] += 0.3
    return v


def _runs(N: int, bins: int):
    width = -(-N // bins)
    return [(a, min(a + width, N)) for a in range(0, N, width)]


@pytest.mark.parametrize("N, bins", [(100_003, 97), (65_536 * 3 + 5, 7), (1000, 1), (40_000, 2000)])
def test_envelope_keeps_each_runs_first_last_smallest_and_largest_sample(N, bins):
    v = _spiky(N, 3, seed=N)
    keep = envelope(v, bins)
    assert len(keep) == 3
    for k, idx in enumerate(keep):
        assert idx.size <= 4 * bins and np.all(np.diff(idx) > 0) and idx[0] == 0 and idx[-1] == N - 1
        kept = set(idx.tolist())
        for a, b in _runs(N, bins):
            assert a in kept and b - 1 in kept
            inside = idx[(idx >= a) & (idx < b)]
            assert v[inside, k].max() == v[a:b, k].max() and v[inside, k].min() == v[a:b, k].min()


def test_envelope_of_few_samples_is_all_of_them():
    v = np.arange(12.0).reshape(6, 2)
    assert [k.tolist() for k in envelope(v, 2)] == [list(range(6))] * 2        # 6 <= 4 × 2: nothing left out
    assert [k.tolist() for k in envelope(v[:, 0], 3, ends=False)] == [list(range(6))]
    with pytest.raises(ValueError, match="bins"):
        envelope(v, 0)


def _sample(N: int, n: int) -> SimpleNamespace:
    t = np.linspace(0.0, 5.0, N)
    return SimpleNamespace(t=t, tau=_spiky(N, n, 1) * 4.0, qd=_spiky(N, n, 2), qdd=_spiky(N, n, 3) * 10.0)


def _robot(n: int):
    robot = dynamics.load_robot("planar4")
    assert robot.n == n
    return robot.with_limits(qdd_max=np.full(n, 20.0))


def test_report_profiles_keep_every_spike_of_many_samples():
    """The report kept 300 evenly spaced samples and each joint's overall extremes: the spikes of a long
    trajectory between them were not drawn (here: 199 of 200 per joint)."""
    from toppra_app.html_report import MAX_POINTS, profiles_figure
    N, n = 2_000_000 // 10, 4
    sample, robot = _sample(N, n), _robot(n)
    fig = profiles_figure(sample, robot)
    traces = iter(fig["data"])
    for key in ("tau", "qd", "qdd"):
        values = getattr(sample, key)
        for k in range(n):
            tr = next(traces)
            x, y, units = tr["x"], tr["y"], tr["customdata"]
            assert x.size <= 2 * MAX_POINTS + 4 and x.size == y.size == units.size
            for a, b in _runs(N, MAX_POINTS // 2):                       # every run's extremes, at their times
                hi, lo = a + int(np.argmax(values[a:b, k])), a + int(np.argmin(values[a:b, k]))
                for i in (hi, lo):
                    at = np.flatnonzero(x == sample.t[i])
                    assert at.size == 1 and units[at[0]] == values[i, k], (key, k, i)


def _peak(fn):
    """(result, peak bytes traced) of fn()."""
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_figures_of_two_million_samples_take_bounded_memory(tmp_path, monkeypatch):
    """plot_joints and profiles_figure of 2 million samples (4 joints): each allocates a few MB, not the
    ~0.4 GB (torque PNG) and 0.1 GB (report profiles) they took, ~100 bytes a sample; and the PNG's lines
    reach the samples' exact extremes."""
    import toppra_app.plots as plots
    from toppra_app.html_report import profiles_figure
    n = 4
    sample, robot = _sample(N_BIG, n), _robot(n)
    drawn = []

    def save(fig, path):
        drawn.append([line.get_ydata() for ax in fig.axes for line in ax.get_lines()])
        return original(fig, path)
    original = plots.save_figure
    monkeypatch.setattr(plots, "save_figure", save)
    small = _sample(2000, n)
    plots.plot_joints(robot, small, "torque", tmp_path / "warm.png")    # (matplotlib's first figure: fonts, caches)
    _, png = _peak(lambda: plots.plot_joints(robot, sample, "torque", tmp_path / "torques.png"))
    _, report = _peak(lambda: profiles_figure(sample, robot))
    assert png < 25e6, f"{png / 1e6:.1f} MB for the PNG"
    assert report < 10e6, f"{report / 1e6:.1f} MB for the report's profiles"
    lines = [y for y in drawn[-1] if len(y) > 2]                         # (the limits: 2-point lines)
    assert len(lines) == 2 * n and all(len(y) < 10 * 2000 for y in lines)
    for k in range(n):
        assert lines[k].max() == sample.tau[:, k].max() and lines[k].min() == sample.tau[:, k].min()
        limit = robot.tau_max[k]
        assert lines[n + k].max() == sample.tau[:, k].max() / limit and lines[n + k].min() == sample.tau[:, k].min() / limit


def test_plan_outputs_of_fine_samples_give_the_plans_own_numbers(tmp_path):
    """report.html and summary.json of a plan sampled every 10 µs: the worst value/limit and the duration are
    the plan's (its check between grid points), and each profile's peak is the peak of all the samples."""
    from toppra_app import JointPath, plan_time_optimal
    from toppra_app.commands.plan import write_outputs
    robot = dynamics.load_robot("planar4")
    plan = plan_time_optimal(robot, JointPath.from_waypoints([[0, 0.2, -0.3, 0.1], [1.0, -0.4, 0.5, 0.6],
                                                              [0.2, 0.3, -0.2, -0.4]]))
    sample = plan.sample(1e-5)
    assert len(sample) > 50_000
    write_outputs(str(tmp_path), plan, sample, "wp.csv", formats=())
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["duration"] == plan.duration and summary["samples"] == len(sample)
    assert summary["worst_ratio"] == plan.worst_ratio
    assert set(summary["worst"]) == {"torque", "velocity"} and summary["limits_not_set"] == ["acceleration"]
    for kind, w in summary["worst"].items():                  # (planar4: no acceleration limit, not "ratio 0.0")
        assert w["ratio"] == plan.worst[kind].ratio and w["joint"] == plan.worst[kind].joint >= 0
    text = (tmp_path / "report.html").read_text()
    worst = ", ".join(f"{k} {100 * w.ratio:.2f} %" for k, w in plan.worst.items() if np.isfinite(w.limit))
    assert f"<td>{plan.duration:.4f}</td>" in text and f"<td>{worst}</td>" in text
    from toppra_app.html_report import profiles_figure
    fig = profiles_figure(sample, robot)
    tau = [tr for tr in fig["data"] if tr.get("yaxis") == "y"]
    for k, tr in enumerate(tau):
        units = tr["customdata"]
        assert units.max() == sample.tau[:, k].max() and units.min() == sample.tau[:, k].min()


def test_a_plot_of_a_kind_with_no_limit_says_so(tmp_path, monkeypatch):
    """accelerations.png of a robot without acceleration limits had an empty 'acceleration / limit' panel."""
    import toppra_app.plots as plots
    texts = []
    original = plots.save_figure
    monkeypatch.setattr(plots, "save_figure", lambda fig, path: (texts.append(
        [t.get_text() for ax in fig.axes for t in ax.texts]), original(fig, path))[1])
    robot, sample = dynamics.load_robot("planar4"), _sample(500, 4)
    plots.plot_joints(robot, sample, "acceleration", tmp_path / "a.png")
    plots.plot_joints(robot, sample, "torque", tmp_path / "t.png")
    assert texts == [["no joint acceleration limit set"], []]
