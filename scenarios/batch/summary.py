"""The summary of a batch: its moves read back from moves.csv (this run's and an earlier run's), each judged
against its limits, and the per-cell totals of `batch_summary.json`."""

from __future__ import annotations

import csv
import math

from .manifest import BatchSpec


def read_moves(moves_csv) -> list:
    """The rows of moves.csv (this run's and an earlier run's)."""
    with open(moves_csv, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def limit_verdict(row: dict) -> tuple[bool, float, str]:
    """(within its limits, worst value/limit, the reasons it is not) of a planned move's row of moves.csv
    (`tasks.limit_columns`). A row of a batch begun by a version without those columns is judged by its
    `worst_ratio` (the check between grid points) against the planner's default tolerance."""
    if row.get("within_limits") in ("true", "false"):
        return row["within_limits"] == "true", float(row["limit_ratio"]), row["limit_problems"]
    from toppra_app.planning.options import DEFAULT_TOL
    ratio = float(row["worst_ratio"])
    return ratio <= 1.0 + DEFAULT_TOL, ratio, f"worst value/limit {ratio:.6g} between grid points (tol {1 + DEFAULT_TOL:g})"


def over_limits(rows: list) -> list:
    """[(label, worst ratio, problems)] of the planned moves in `rows` that did not keep their limits."""
    out = []
    for r in rows:
        if r["status"] == "ok" and not (verdict := limit_verdict(r))[0]:
            out.append((f"cell {r['cell']} move {r['move']} (box {r['box']} {r['kind']})",) + verdict[1:])
    return out


def summarise(rows: list, spec: BatchSpec, run: dict, fingerprint: str) -> dict:
    """The batch summary from the rows of moves.csv (`read_moves`), whatever order the boxes finished in: the cells
    in the batch's order, their errors in move order, the total exactly rounded (summed in the rows' order, a cell's
    total was 17.650493434834207, 17.65049343483421 or 17.650493434834203 s by the run)."""
    rank = {cs.id: k for k, cs in enumerate(spec.cells)}
    cells = {}
    for r in sorted(rows, key=lambda r: (rank.get(r["cell"], len(rank)), r["cell"], int(r["move"]))):
        c = cells.setdefault(r["cell"], dict(moves=0, failed=0, total_time_s=[], worst_ratio=0.0, errors=[],
                                             within_limits=True, moves_over_limits=[]))
        c["moves"] += 1
        if r["status"] == "ok":
            c["total_time_s"].append(float(r["duration_s"]))
            c["worst_ratio"] = max(c["worst_ratio"], float(r["worst_ratio"]))
            if not limit_verdict(r)[0]:
                c["within_limits"] = False
                c["moves_over_limits"].append(int(r["move"]))
        else:
            c["failed"] += 1
            if r["error"] not in c["errors"]:
                c["errors"].append(r["error"])
    overrides = {cs.id: dict(cs.overrides) for cs in spec.cells if cs.overrides}
    for cid, c in cells.items():
        if cid in overrides:
            c["sweep"] = overrides[cid]
    for c in cells.values():
        c["total_time_s"] = math.fsum(c["total_time_s"])
        c["moves_over_limits"].sort()
        if c["failed"] == c["moves"]:      # nothing planned: nothing to judge (it read within limits, 0.0 s, ratio 0)
            c.update(within_limits=None, total_time_s=None, worst_ratio=None)
    return dict(cells=cells, moves=len(rows), failed=sum(c["failed"] for c in cells.values()),
                moves_over_limits=sum(len(c["moves_over_limits"]) for c in cells.values()),
                fingerprint=fingerprint, run=run)
