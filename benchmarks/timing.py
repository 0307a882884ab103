"""The one timing helper of the benchmarks: the best per-call time of a function, and the median time
of whole runs (with the last run's result)."""

from __future__ import annotations

import time

import numpy as np


def best_time(fn, repeat: int = 3, min_time: float = 0.05) -> float:
    """Best of ``repeat`` timings of fn() (seconds per call), each looping for at least ~``min_time``
    seconds; one call first, untimed (warm caches, compiled problems)."""
    fn()
    best = np.inf
    for _ in range(repeat):
        loops, t0 = 0, time.perf_counter()
        while True:
            fn()
            loops += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= min_time:
                break
        best = min(best, elapsed / loops)
    return best


def median_time(fn, repeats: int):
    """(median wall time of ``repeats`` calls of fn(), the last call's result)."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out
