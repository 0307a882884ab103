"""``--strict`` of `plan`, `palletize` and `batch`: a plan that did not keep its limits is an exit code, not
only a warning on stderr.

Without it a plan that still exceeds a limit by more than the planner's tolerance, or whose solve ended
"optimal_inaccurate", is written with a `RuntimeWarning` and the command exits 0 — a script cannot tell it from
a good one but by parsing stderr. With it the output is still written in full (it is worth inspecting), then
the command exits with `STRICT_EXIT` and one line on stderr naming the worst plan, its limit and by how much
(`TimeOptimalPlan.limit_report`). The summary files record the same per plan (`within_limits`) either way.
"""

from __future__ import annotations

import sys

STRICT_EXIT = 4          # not 2 (bad input, infeasible), 3 (no solver could solve; batch: moves failed),
                         # 130 (Ctrl-C), 128 + signal, 141 (closed stdout pipe), 1 (Python's own errors)


def add_strict(parser, note: str = "") -> None:
    """The option; `note` adds a command's own precedence of codes to its help."""
    parser.add_argument("--strict", action="store_true", help=(
        f"after writing the output in full, exit with code {STRICT_EXIT} if a plan did not keep its limits: over a "
        f"limit by more than the planner's tolerance, or an inaccurate solve{note} (the summary records "
        f"within_limits either way; docs/safety.md)"))


def failures_of(labelled_plans) -> list:
    """[(label, worst ratio, problem line)] of the plans not within their limits, from (label, plan) pairs."""
    out = []
    for label, plan in labelled_plans:
        report = plan.limit_report()
        if not report.within_limits:
            out.append((label, report.ratio, report.line()))
    return out


def strict_exit(command: str, failures: list) -> int:
    """0 when `failures` ([(label, ratio, problem line)] of the plans not within their limits) is empty; else
    one line on stderr naming the worst of them (the largest ratio) and how many more, and `STRICT_EXIT`."""
    if not failures:
        return 0
    ranked = sorted(failures, key=lambda f: -f[1])
    label, _, problem = ranked[0]
    more = [f[0] for f in ranked[1:]]
    tail = "" if not more else (f" (and {len(more)} more: {', '.join(more[:5])}{', …' if len(more) > 5 else ''})")
    print(f"toppra-app {command}: strict: {label}: {problem}{tail}", file=sys.stderr)
    return STRICT_EXIT
