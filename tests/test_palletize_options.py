"""Palletizing cells with rate limits, a controller profile or a thermal rating: how their moves are planned and
how the terminal summary names them (split from test_palletize.py, which stays under 400 lines)."""

from __future__ import annotations

import numpy as np
import pytest

from scenarios.palletizing import load_cell, plan_pallet

from test_palletize import DEFAULT_TEXT, write_cell


def test_limits_rates_are_planned_as_a_controller_profile_and_kept(tmp_path):
    """[limits] torque_rate_max / jerk_max took the sequential scheme: 5–51 s a move on the built-in cell at 800 N·m/s
    and 3000 rad/s³, with "solved only inaccurately" warnings. They are now a controller profile with these limits
    and no headroom (the sequential scheme only with an energy weight, which alone it combines with rates); the
    1 ms samples, with the steps from and to rest, keep both limits (τ by Pinocchio's RNEA, not the plan's own)."""
    import warnings

    import pinocchio as pin
    from benchmarks.peers import to_pinocchio
    text = DEFAULT_TEXT.replace("# [limits]", "[limits]\ntorque_rate_max = 800.0\njerk_max = 3000.0\n# [limits]", 1)
    cell = load_cell(write_cell(tmp_path, text))
    opts = cell.planner_options()
    profile = opts["controller"]
    assert "torque_rate_max" not in opts and "jerk_max" not in opts
    assert profile.torque_headroom == 1.0 and profile.velocity_headroom == 1.0 and profile.smooth_ends
    assert profile.torque_rate_max == (800.0,) * 7 and profile.jerk_max == (3000.0,) * 7
    weighed = load_cell(write_cell(tmp_path, text.replace("# energy_weight = 1.0", "energy_weight = 1.0", 1)))
    assert weighed.energy_weight == 1.0 and "controller" not in weighed.planner_options()
    assert weighed.planner_options()["torque_rate_max"].tolist() == [800.0] * 7
    with warnings.catch_warnings():
        warnings.simplefilter("error")                         # (no "solved only inaccurately")
        report = plan_pallet(cell, boxes=[0])
    summary = report.summary()["cell_options"]
    assert summary["torque_rate_max"] == [800.0] * 7 and summary["worst_sampled_torque_rate_ratio"] <= 1.001
    for m in report.moves:
        smp = m.plan.sample(1e-3)
        assert not m.plan.robot.coulomb.any() and not m.plan.robot.viscous.any()     # (the cell's iiwa: RNEA is τ)
        model = to_pinocchio(m.plan.robot)
        data = model.createData()
        tau = np.array([pin.rnea(model, data, q, qd, qdd) for q, qd, qdd in zip(smp.q, smp.qd, smp.qdd)])
        hold = [pin.rnea(model, data, q, 0 * q, 0 * q) for q in (smp.q[0], smp.q[-1])]
        tau = np.vstack([hold[0], tau, hold[1]])                # the steps from and to rest
        qdd = np.vstack([0 * smp.qdd[0], smp.qdd, 0 * smp.qdd[0]])
        assert np.abs(np.diff(tau, axis=0)).max() / 1e-3 <= 800.0 * 1.001
        assert np.abs(np.diff(qdd, axis=0)).max() / 1e-3 <= 3000.0 * 1.001
        assert m.duration >= m.unlimited_duration * (1 - 1e-6) and m.plan.worst_ratio <= 1.001


def test_a_controller_table_is_named_in_the_summary_and_the_terminal_line(tmp_path):
    """A cell with only a [controller] table printed "cell options (): pallet ..." and its summary did not say which
    profile the moves were planned with."""
    from scenarios.commands.palletize import _profile
    text = DEFAULT_TEXT + "\n[controller]\ntorque_headroom = 0.9\ntorque_rate_max = [800, 800, 800, 800, 800, 800, 700]\n"
    cell = load_cell(write_cell(tmp_path, text))
    got = plan_pallet(cell, boxes=[0]).summary()["cell_options"]["controller"]
    assert got["torque_headroom"] == 0.9 and list(got["torque_rate_max"]) == [800.0] * 6 + [700.0]
    assert _profile(got) == ("torque headroom 0.9, speed headroom 0.95, torque rate ≤ [800, 800, 800, 800, 800, "
                             "800, 700] N·m/s")
    assert _profile(None) is None


def test_with_headroom_the_table_says_which_limits_its_column_uses(tmp_path, capsys):
    """With a controller profile's headroom the moves' "worst vs limit" is against τ_max × 0.9 (the limits the plans
    were made for) and the empty-gripper line against the robot's τ_max; the terminal said neither."""
    from scenarios.commands.palletize import _print_summary
    text = DEFAULT_TEXT + "\n[controller]\ntorque_headroom = 0.9\ntorque_rate_max = 1000.0\n"
    cell = load_cell(write_cell(tmp_path, text))
    report = plan_pallet(cell, boxes=[0])
    _print_summary(report, report.summary())
    out = capsys.readouterr().out
    assert ("(worst vs limit: against the limits planned for, the controller profile's τ_max × 0.9 and q̇_max × 0.95)"
            in out)
    assert "of the robot's limit" in out or "exceeds the robot's limit" in out
    m = report.moves[0]
    worst = np.abs(m.plan.sample(1e-3).tau) / cell.robot.tau_max          # the column's limits are 0.9 × these
    assert worst.max() <= 0.9 * 1.001
    assert m.plan.worst["torque"].ratio == pytest.approx(worst.max() / 0.9, rel=2e-3)


def test_the_empty_gripper_line_says_when_the_payload_aware_plan_takes_the_same_time():
    """With a jerk limit both plans took 1.175 s, and the line read "takes 1.175 s instead of 1.175 s"."""
    from scenarios.commands.palletize import _nominal_line
    w = dict(box=1, payload_kg=5.0, joint="iiwa_joint_2", executed_torque_ratio=0.992, torque_over_limit_percent=0.0,
             payload_plan_duration_s=1.1751, nominal_plan_duration_s=1.1749)
    assert _nominal_line(w).endswith("peaks at 99.2 % of the robot's limit (the payload-aware plan takes the same "
                                     "1.175 s and stays within the limits)")
    w.update(executed_torque_ratio=2.021, torque_over_limit_percent=102.1, payload_plan_duration_s=1.05,
             nominal_plan_duration_s=1.019)
    assert "exceeds the robot's limit by 102.1 % (the payload-aware plan takes 1.050 s instead of 1.019 s and" \
        in _nominal_line(w)


@pytest.mark.parametrize("line, key", [("torque_rate_max = 2e9", "torque_rate_max"), ("jerk_max = 1e-7", "jerk_max"),
                                       ("jerk_max = [1e-7, 1e3, 1e3, 1e3, 1e3, 1e3, 1e3]", "jerk_max")])
def test_limits_rates_outside_the_profiles_range_name_the_file_and_key(tmp_path, line, key):
    """[limits] rates are planned as a controller profile, which takes 1e-6 to 1e9: 2e9 or 1e-7 was read, and the run
    stopped after the cell with "controller.torque_rate_max: expected at most 1e+09", a key the file does not have,
    without the file's name."""
    from toppra_app.errors import InputError
    path = write_cell(tmp_path, DEFAULT_TEXT.replace("# [limits]", f"[limits]\n{line}\n# [limits]", 1))
    with pytest.raises(InputError, match=f"^{path}: limits.{key}: values must be from 1e-06 to 1e\\+09, got "):
        load_cell(path).planner_options()


@pytest.mark.parametrize("line, said", [
    ("torque_rate_max = [1e3, 1e3, 1e3, 1e3, inf, inf, inf]", None),
    ("jerk_max = [inf, inf, inf, inf, inf, inf, inf]", None),
    ("jerk_max = [-inf, 1e3, 1e3, 1e3, 1e3, 1e3, 1e3]", r"values must be finite numbers or inf"),
    ("jerk_max = [nan, 1e3, 1e3, 1e3, 1e3, 1e3, 1e3]", r"values must be finite numbers or inf"),
    ("torque_rate_max = inf", r"must be a finite number"),
])
def test_limits_rates_take_inf_for_a_joint_without_a_limit(tmp_path, line, said):
    """inf in a per-joint [limits] rate list (no limit on that joint, as [controller] and the library take it, and
    as Cell documents) was refused: "values must be finite numbers". It is read as inf, and the cell's profile
    plans it; NaN or -inf are still refused, and inf for every joint as one number too (no rate limit: leave it out)."""
    from toppra_app.errors import InputError
    path = write_cell(tmp_path, DEFAULT_TEXT.replace("# [limits]", f"[limits]\n{line}\n# [limits]", 1))
    if said is not None:
        with pytest.raises(InputError, match=f"^{path}: limits.{line.split()[0]}: {said}"):
            load_cell(path, check_reach=False)
        return
    cell = load_cell(path, check_reach=False)
    key = line.split()[0]
    arr = getattr(cell, key)
    assert np.array_equal(np.isinf(arr), ["inf" in x for x in line.split("[")[1].split(",")])
    planned = getattr(cell.planner_options()["controller"], key)         # (planned as a profile; inf everywhere: none)
    assert np.array_equal(planned, arr) if np.isfinite(arr).any() else planned is None


def test_the_summary_records_each_box_as_merged_so_pinocchio_recomputes_the_loaded_torques(tmp_path):
    """summary.json gave a loaded move's payload_kg only: with the box's COM off-centre (the built-in cell's heavy
    box) and turned by the grasp, its torques could not be recomputed. Each loaded move now records the payload in
    the TCP frame (mass, COM, inertia) and the summary the grasp turn; Pinocchio's RNEA of the nominal model with
    that inertia appended at the TCP (pin.Inertia, SE3.act) gives the move's planned torques on its 1 ms samples."""
    import pinocchio as pin
    from benchmarks.peers import to_pinocchio
    cell = load_cell(write_cell(tmp_path, DEFAULT_TEXT))
    report = plan_pallet(cell, boxes=[0])
    summary = report.summary()
    assert summary["grasp_turn_deg"] in (0.0, 180.0)
    move = next(m for m in report.moves if m.kind == "loaded")
    rec = next(s for s in summary["moves"] if s["kind"] == "loaded")["payload"]
    assert rec["frame"] == "tcp" and rec["mass_kg"] == cell.slots[0].box.mass and np.linalg.norm(rec["com_m"][:2]) > 0
    model = to_pinocchio(cell.robot)
    tcp = model.frames[model.getFrameId("tcp")]
    model.inertias[tcp.parentJoint] += tcp.placement.act(pin.Inertia(rec["mass_kg"], np.array(rec["com_m"]),
                                                                     np.array(rec["inertia_about_com_kg_m2"])))
    data = model.createData()
    smp = move.plan.sample(1e-3)
    tau = np.array([pin.rnea(model, data, q, qd, qdd) for q, qd, qdd in zip(smp.q, smp.qd, smp.qdd)])
    assert not np.any(cell.robot.coulomb) and not np.any(cell.robot.viscous)        # (the built-in cell: no friction)
    assert np.abs(tau - smp.tau).max() <= 1e-9 * np.abs(smp.tau).max()
