"""The payload sweep plans with the cell's own limits: a `[limits] tool_speed_max` bounds every swept
duration from below by the tool path's length over the speed (an oracle independent of the planner)."""

from __future__ import annotations

import numpy as np

from scenarios.palletizing import DEFAULT_CELL, load_cell, move_geometry, pick_posture
from scenarios.payload_change import sweep_payloads


def test_payload_sweep_keeps_the_cells_tool_speed_limit(tmp_path):
    text = DEFAULT_CELL.read_text().replace("# [limits] ", "[limits] ").replace("# tool_speed_max = 0.25 ",
                                                                                 "tool_speed_max = 0.25 ")
    (tmp_path / "slow.toml").write_text(text)
    cell = load_cell(tmp_path / "slow.toml")
    assert cell.tool_speed_max == 0.25
    pick_posture(cell)
    P = move_geometry(cell, cell.slots[0]).cart.poses[:, :3, 3]
    chord = float(np.sum(np.linalg.norm(np.diff(P, axis=0), axis=1)))     # ≤ the TCP path's length
    sweep = sweep_payloads(cell, masses=[0.0, 3.0], offsets=[0.0])
    bound = chord / (0.25 * 1.001)                                         # the planner may exceed by 0.1 %
    assert bound > 3.0                                                     # (~1 s without the limit)
    for p in sweep.points:
        assert p.duration >= bound, (p.mass, p.duration, bound)
