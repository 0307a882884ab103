"""What a figure draws of a long sampled trajectory: per column of samples, the samples that decide how its
line looks at the figure's width (`envelope`), so that a figure costs the same memory and time whatever --dt.

The samples (in order) are cut into `bins` runs of equal length, narrower than a pixel column of the figure;
of each run the figure keeps its first and last sample (where the line comes from and goes on: the true
segments between runs) and its smallest and largest (how far the line reaches inside it) — the "M4"
aggregation of Jugel et al., "M4: a visualization-oriented time series data aggregation" (VLDB 2014), whose
line is drawn on the same pixels as the whole series'. Every kept point is a sample, unchanged (its time
and value): a peak, a touch of a limit and a step of the torque (Coulomb friction) are drawn where and as
high as they are. The figures' numbers (worst value / limit, durations) never come from here: they are the
plan's, on all of its samples."""

from __future__ import annotations

import numpy as np

CHUNK = 1 << 16          # samples per column looked at in one step: the temporaries stay ~ CHUNK × columns


def envelope(values, bins: int, ends: bool = True) -> list[np.ndarray]:
    """Indices into `values` ((N,) or (N, n): samples in order) of what a line of each column keeps at `bins`
    runs: one increasing array per column, of the first, smallest, largest and last sample of every run (with
    ``ends`` False the smallest and largest only), each once. All N samples (0 … N − 1) when there are no more
    of them than that keeps. Memory ~ (bins + `CHUNK`) × n, however large N (no copy of `values`)."""
    v = np.asarray(values)
    v = v.reshape(v.shape[0], -1) if v.ndim != 2 else v
    bins = int(bins)
    if bins < 1:
        raise ValueError(f"bins: expected at least 1, got {bins}")
    per = 4 if ends else 2
    N, n = v.shape
    if N <= per * bins:
        return [np.arange(N)] * n
    width = -(-N // bins)                           # samples per run (the last run may be shorter)
    starts = np.arange(0, N, width)
    lo, hi = np.empty((starts.size, n), dtype=np.intp), np.empty((starts.size, n), dtype=np.intp)
    step = max(1, CHUNK // width)                   # runs per step
    full = N // width                               # runs of `width` samples
    for a in range(0, full, step):
        b = min(a + step, full)
        block = v[a * width:b * width].reshape(b - a, width, n)
        offset = starts[a:b, None]
        lo[a:b] = np.argmin(block, axis=1) + offset
        hi[a:b] = np.argmax(block, axis=1) + offset
    if full < starts.size:                          # the shorter last run
        tail = v[full * width:]
        lo[full], hi[full] = np.argmin(tail, axis=0) + full * width, np.argmax(tail, axis=0) + full * width
    parts = [lo, hi]
    if ends:
        stops = np.minimum(starts + width, N) - 1
        parts += [np.broadcast_to(starts[:, None], lo.shape), np.broadcast_to(stops[:, None], lo.shape)]
    keep = np.stack(parts, axis=-1).transpose(1, 0, 2).reshape(n, -1)      # (n, runs × per)
    return [np.unique(row) for row in keep]


def figure_bins(width_inches: float, dpi: float, oversample: int = 2) -> int:
    """Runs for a figure `width_inches` wide at `dpi`: `oversample` per pixel column of the whole figure (an
    axes is narrower), so that no run straddles more than part of a pixel column."""
    return max(1, int(np.ceil(width_inches * dpi)) * int(oversample))
