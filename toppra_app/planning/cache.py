"""Compiled problems per structure, the `MAX_STRUCTURES` last used kept and shared by all planners.

A structure is (N intervals, R row slots per interval) (`socp.problem.StationProblem`); the first plan
that needs one compiles it (~0.2–1 s), every later plan with the same structure — any path, payload,
grid placement or limit values — only sets Parameters. Beyond `MAX_STRUCTURES` the one not used for
the longest is dropped (compiled again if needed: the same problem); a service planning user grids of
many sizes kept every one, ~1.6 MB an instance at N = 128, without bound. Each instance serves one solve
at a time: a thread that finds every instance of its structure busy builds another one (at most `MAX_INSTANCES`,
then it waits), so planners can be used from several threads. All instances of a structure are
compiled from the same expression, so the result never depends on which one solved it.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict

from ..socp.controller_problem import ControllerProblem
from ..socp.problem import StationProblem

MAX_INSTANCES = 4
MAX_STRUCTURES = 32                # structures kept (the demo palletizing cell's plans use 2)

_POOL: "OrderedDict[tuple, list]" = OrderedDict()
_LOCK = threading.Lock()


@contextlib.contextmanager
def acquire(N: int, R: int, K: int = 0, linear: bool = False, tangent: bool = False, roots: bool = True):
    """A `StationProblem` for (N, R) (with K > 0 a `ControllerProblem` for (N, R, K); `linear`: θ̈ linear
    per interval, continuous only with the controller's rate rows; `tangent`: the tangent objective, with
    the √β cones only if `roots`), locked for the caller for the duration of the `with` block."""
    tangent = bool(tangent)
    roots = bool(roots) or not tangent
    key = ((int(N), int(R)) if not K else (int(N), int(R), int(K))) + (("linear",) if linear else ()) + \
        ((("tangent",) + (() if roots else ("no roots",))) if tangent else ())
    prob = None
    with _LOCK:
        pool = _POOL.setdefault(key, [])
        _POOL.move_to_end(key)
        while len(_POOL) > MAX_STRUCTURES:    # (a thread solving on a dropped one keeps its instance)
            _POOL.popitem(last=False)
        for candidate in pool:
            if candidate.lock.acquire(blocking=False):
                prob = candidate
                break
        if prob is None and len(pool) < MAX_INSTANCES:
            objective = "tangent" if tangent else "cone"
            prob = StationProblem(N, R, linear=linear, objective=objective, roots=roots) if not K \
                else ControllerProblem(N, R, K, linear=linear, objective=objective, roots=roots)
            prob.lock.acquire()
            pool.append(prob)
        first = pool[0]
    if prob is None:                          # every instance busy: wait for the first one
        first.lock.acquire()
        prob = first
    try:
        yield prob
    finally:
        prob.lock.release()


def compiled_structures() -> list[tuple]:
    """(N, R) (or (N, R, K), controller profile; "linear" appended for θ̈ linear per interval, "tangent"
    (and "no roots") for the tangent objective) of every compiled structure the process keeps."""
    with _LOCK:
        return sorted((k for k, pool in _POOL.items() if any(p.compiled for p in pool)), key=repr)
