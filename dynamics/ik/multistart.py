"""Several starts and several equivalent targets for one pose: the recursive IK (`nicolato.solve_ik`)
from every start towards every target, the best posture kept.

Section 5.2 of Nicolato & Madrid notes that the sweeps converge whenever the goal is inside the workspace,
"the only problematic situation" being an outstretched arm; in practice a 6-D goal can also be missed
from one start because the joint limits (eq. 22) stop the sweeps in a posture from which no single joint
helps (Δθ* = 0 for all i, Section 5.1) although another posture reaches it. Starting again elsewhere —
the paper's own remark that joint moves can simulate "changes in the robot's configuration" — and
accepting every target the task allows (a box turned by its symmetry) removes these false failures;
a goal is declared unreachable only when no start reaches any of its targets.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..checks import short_repr
from ..model import RobotModel
from .common import IKError, IKResult, _as_q, _as_starts, _options, _parse_targets
from .nicolato import _prepared, solve_ik


MAX_STARTS = 1_000_000          # starts one `random_seeds` call makes (56 MB for 7 joints; each start is a solve)


@dataclass
class MultiStartResult:
    best: IKResult | None        # the chosen solution, None when no start reached any target
    target: int                  # index of the target it reaches (−1: none)
    seed: int                    # index of the start it came from (−1: none)
    closest: IKResult            # the attempt that came nearest (the best when one succeeded)
    closest_target: int
    attempts: int                # solves run
    solutions: int               # of which reached their target
    first_try: bool              # the first start reached the first target (what a single start gives)
    tried: list = field(default_factory=list)     # (target, seed, success, pos_err, rot_err, cost) per attempt

    @property
    def success(self) -> bool:
        return self.best is not None


def random_seeds(robot: RobotModel, count: int, seed: int = 0, margin: float = 0.05) -> np.ndarray:
    """``count`` deterministic starts (``seed``: a whole number >= 0), uniform within the joint limits shrunk by
    ``margin`` of each range (0 to 0.5; an unlimited joint in [−π, π]): an array (count, n)."""
    _options(counts={"count": count, "seed": seed}, numbers={"margin": margin})
    if count > MAX_STARTS:                 # (before numpy allocates count × n doubles: 10¹² asked for 51 TiB)
        raise IKError(f"count: expected at most {MAX_STARTS} starts, got {count}")
    if margin > 0.5:
        raise IKError(f"margin: expected a fraction of each joint range in [0, 0.5], got {short_repr(margin)}")
    lo = np.where(np.isfinite(robot.q_min), robot.q_min, -np.pi)
    hi = np.where(np.isfinite(robot.q_max), robot.q_max, np.pi)
    span = hi - lo
    rng = np.random.default_rng(int(seed))
    return rng.uniform(lo + margin * span, hi - margin * span, size=(int(count), robot.n))


def solve_ik_multistart(robot: RobotModel, targets, stages, frame: str | None = None, *, reference=None,
                        first_stage=None, **ik_options) -> MultiStartResult:
    """`solve_ik` from every start towards every target in ``targets`` (a list of equivalent poses or
    positions; or one array (k, 3) or (k, 4, 4)). ``stages``: a list of arrays of starts (k_i, n) (or one start
    (n,); an empty stage is skipped), tried stage by stage — a later stage only when no start of the earlier
    ones reached any target (e.g. [[current], [home], random starts]).

    Among the successful attempts of a stage the chosen posture is the one nearest to ``reference`` in
    joint space (default: the first start), ties broken by the residual √h (eq. 10; the closest attempt is
    the one with the least √h); every attempt stays within the
    joint limits. ``ik_options`` go to `solve_ik` (tolerances, ``rot_weight``, limits, ...).
    ``first_stage``: the `IKResult` of every (start, target) pair of the first stage, start by start, when
    already solved (`dynamics.ik.batch.solve_ik_batch`, with the same options)."""
    chosen = _ik_options(robot, frame, ik_options)
    if isinstance(stages, np.ndarray) and stages.ndim in (1, 2):     # (each row a stage of its own, before)
        raise IKError(f"stages: expected a list of arrays of starts (k, {robot.n}), got one array of shape "
                      f"{stages.shape} (one stage? pass [starts])")
    if isinstance(stages, (str, bytes, dict)) or not isinstance(stages, Iterable) \
            or (isinstance(stages, np.ndarray) and stages.ndim == 0):
        raise IKError(f"stages: expected a list of arrays of starts (k, {robot.n}), got {short_repr(stages)}")
    stages = [_as_starts(robot, st, None, f"stages[{i}]") for i, st in enumerate(stages)]
    if not any(len(st) for st in stages):
        raise IKError(f"stages: expected arrays of starts of shape (k, {robot.n}), at least one start")
    if not _parse_targets("targets", targets):
        raise IKError("targets: expected at least one target pose")
    targets = list(targets)
    k0 = len(stages[0]) * len(targets)
    if first_stage is not None:
        listed = isinstance(first_stage, (list, tuple))
        odd = [type(r).__name__ for r in first_stage if not isinstance(r, IKResult)] if listed else []
        if not listed or len(first_stage) != k0 or odd:
            got = (short_repr(first_stage) if not listed else f"an item of type {odd[0]}" if len(first_stage) == k0
                   else f"{len(first_stage)}")
            raise IKError(f"first_stage: expected the {k0} IKResults of the first stage (each start towards each "
                          f"target), got {got}")
    ref = next(st[0] for st in stages if len(st)) if reference is None else _as_q(robot, reference, "reference")
    L2 = float(chosen["rot_weight"]) ** 2
    tried = []
    best = closest = None
    best_key = closest_key = None
    offset = 0
    for k, stage in enumerate(stages):                  # (an empty stage adds no attempt)
        known = first_stage if k == 0 else None
        for s, q0 in enumerate(stage):
            for t, target in enumerate(targets):
                res = known[s * len(targets) + t] if known is not None else solve_ik(robot, target, q0, frame, **ik_options)
                cost = float(np.linalg.norm(res.q - ref))
                tried.append((t, offset + s, res.success, res.pos_err, res.rot_err, cost))
                # √h of eq. 10 (orientation as an arc of radius L): how close the attempt came
                key = (math.sqrt(res.pos_err ** 2 + L2 * 2.0 * (1.0 - math.cos(res.rot_err))), cost)
                if closest_key is None or key < closest_key:
                    closest, closest_key, closest_t = res, key, t
                if res.success and (best_key is None or (cost, key[0]) < best_key):
                    best, best_key, best_t, best_s = res, (cost, key[0]), t, offset + s
        offset += len(stage)
        if best is not None:
            break
    first_try = bool(tried[0][2])
    solutions = sum(1 for x in tried if x[2])
    if best is None:
        return MultiStartResult(None, -1, -1, closest, closest_t, len(tried), 0, first_try, tried)
    return MultiStartResult(best, best_t, best_s, best, best_t, len(tried), solutions, first_try, tried)


def _ik_options(robot, frame, ik_options: dict) -> dict:
    """`solve_ik`'s keyword options as given (its defaults for the others), checked as `solve_ik` checks them —
    before any solve, and also when ``first_stage`` answers the whole first stage and solve_ik never runs."""
    params = {k: p.default for k, p in inspect.signature(solve_ik).parameters.items() if p.kind is p.KEYWORD_ONLY}
    for name in ik_options:
        if name not in params:
            raise TypeError(f"solve_ik_multistart() got an unexpected keyword argument '{name}' (solve_ik's options "
                            f"are {', '.join(params)})")
    chosen = {**params, **ik_options}
    _prepared(robot, frame, **chosen)
    return chosen
