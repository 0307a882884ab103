"""Big or absurd sizes (an audit): a sampled trajectory holds at most `MAX_SAMPLE_BYTES` of arrays and is
computed in blocks of samples (`plan.sample(1e-6)` of a 6 s plan took 3.2 GB before: 5.3 kB … 0.53 kB a
sample at the peak, 0.26 kB kept; now one line naming dt, before anything is allocated), and the messages and
texts held in memory (`plan.joint_trajectory`, `export_text`, `trajectory_csv`: ~1.8 kB a sample) are refused
by the same cap before they are sampled. The caps are monkeypatched small here: no test allocates GBs."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import dynamics
import toppra_app.trajectory as trajectory
from fixtures import pinocchio_inverse_dynamics
from toppra_app import JointPath, plan_time_optimal
from toppra_app.cli import main
from toppra_app.errors import InputError
from toppra_app.export import export_text, joint_trajectory, trajectory_csv

WAYPOINTS = [[0, 0.3, 0, -1.2, 0, 0.8, 0], [1.2, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5], [-0.5, 0.2, -0.3, -1.5, 0.4, 0.5, -0.8]]


@pytest.fixture(scope="module")
def plans():
    robot = dynamics.load_robot("iiwa7")
    path = JointPath.from_waypoints(WAYPOINTS)
    constant = plan_time_optimal(robot, path, torque_rate_max=2000.0)      # θ̈ constant per interval
    linear = plan_time_optimal(robot, path)                                # θ̈ linear per interval
    assert not constant.law.linear and linear.law.linear
    return constant, linear


@pytest.mark.parametrize("which", [0, 1])
def test_a_sample_in_blocks_is_the_sample_at_once(plans, which, monkeypatch):
    plan = plans[which]
    whole = plan.sample(2e-4)
    monkeypatch.setattr(trajectory, "BLOCK", 1024)
    parts = plan.sample(2e-4)
    assert len(parts) == len(whole) > 5 * 1024
    for key in ("t", "q", "qd", "qdd", "tau", "s", "sd", "sdd"):
        a, b = getattr(parts, key), getattr(whole, key)
        if not plan.law.linear:       # (τ too: inverse_dynamics' blocks are multiples of dynamics.blocks.ALIGN)
            assert np.array_equal(a, b), key
        else:   # θ(t) by Newton steps until every sample of the call has converged: ~1 ulp
            assert np.abs(a - b).max() <= 2e-15 * np.abs(b).max(), key
    rnea = pinocchio_inverse_dynamics(plan.robot)                       # and right, by Pinocchio, at the seams
    for k in (1023, 1024, 1025, 4 * 1024, len(parts) - 1):
        tau = rnea(parts.q[k], parts.qd[k], parts.qdd[k]) + plan.robot.coulomb * np.sign(parts.qd[k])
        assert np.allclose(parts.tau[k], tau, rtol=1e-10, atol=1e-9), k


def test_a_long_sample_takes_its_arrays_and_one_block(plans, monkeypatch):
    """The path, the dynamics and the time law's work took as much again as the arrays kept (0.53 kB a sample
    at the peak for 7 joints, 0.26 kB kept)."""
    plan = plans[0]
    plan.sample(1e-3)                                     # (caches of the path and dynamics filled)
    monkeypatch.setattr(trajectory, "BLOCK", 2048)
    tracemalloc.start()
    try:
        sample = plan.sample(1e-5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    kept = 8 * (4 + 4 * plan.robot.n) * len(sample)
    assert len(sample) > 100 * 2048 and peak < 1.4 * kept, (peak, kept)          # (was 2.1 × kept)


def test_too_many_bytes_of_samples_are_refused_before_any_is_computed(plans, monkeypatch):
    plan = plans[0]
    n_samples = plan.duration / 1e-4
    monkeypatch.setattr(trajectory, "MAX_SAMPLE_BYTES", int(n_samples * 8 * (4 + 4 * 7) * 0.9))
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=r"^dt: 0.0001 s gives 2.1\d*e\+04 samples over .*MiB of arrays \(256 B a "
                                             r"sample\), more than the .* MiB it may take; use a larger dt$"):
            plan.sample(1e-4)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000
    assert len(plan.sample(1.2e-4)) > 0.8 * n_samples               # under the cap: sampled


@pytest.mark.parametrize("build", [lambda plan, dt: plan.joint_trajectory(dt),
                                   lambda plan, dt: export_text(plan, "ros2-yaml", dt),
                                   lambda plan, dt: export_text(plan, "csv", dt)])
def test_messages_and_texts_in_memory_are_refused_before_sampling(plans, build, monkeypatch):
    """~1.8 kB a sample as dicts and lists of floats, or as text (the arrays: 0.26 kB); `dt` = 1e-6 s on a 2 s
    plan built 3.6 GB in memory."""
    plan = plans[0]
    monkeypatch.setattr(trajectory, "MAX_SAMPLE_BYTES", 4 * 2**20)
    assert len(plan.sample(2e-4)) > 10_000                            # the arrays fit ...
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=r"^dt: 0.0002 s gives .* MiB as a message or text in memory \(1796 B a "
                                             r"sample\), .*; use a larger dt, or write the file in pieces"):
            build(plan, 2e-4)                                         # ... not their message or text
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000
    assert build(plan, 2e-3)                                          # ten times fewer: built


@pytest.mark.parametrize("build", [joint_trajectory, trajectory_csv])
def test_messages_and_texts_of_a_given_sample_are_refused(plans, build, monkeypatch):
    plan = plans[0]
    sample = plan.sample(2e-4)
    monkeypatch.setattr(trajectory, "MAX_SAMPLE_BYTES", 4 * 2**20)
    with pytest.raises(InputError, match=r"^sample: 1\d{4} samples of 7 joints take .* MiB as a message or text in "
                                         r"memory \(1796 B a sample\), more than the 4 MiB"):
        build(sample, plan.robot.joint_names)


def test_plan_command_refuses_too_fine_a_dt_in_one_line(tmp_path, capsys, monkeypatch):
    """`toppra-app plan … --dt 1e-6` of a 6 s plan allocated 3.2 GB and wrote a 3.4 GB trajectory.csv."""
    csv_file = tmp_path / "wp.csv"
    csv_file.write_text("\n".join(",".join(map(str, row)) for row in WAYPOINTS) + "\n")
    monkeypatch.setattr(trajectory, "MAX_SAMPLE_BYTES", 2**20)
    out = tmp_path / "out"
    assert main(["plan", str(csv_file), "--robot", "iiwa7", "--out", str(out), "--no-plots", "--dt", "1e-4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("toppra-app plan: error: --dt: 0.0001 s gives ") and "MiB of arrays" in err[0]
    assert not out.exists()


def test_a_csv_of_too_many_rows_is_refused_as_it_is_read(tmp_path, monkeypatch):
    """Every row's fields were held before they were counted: ~1 kB a row, 1 GB for 1 000 001 rows of 7 joints and
    tens of GB for the 256 MiB a waypoint file may have of rows like "0,0"; now the reading stops one row past.
    And the file was read into a buffer of those 256 MiB, whatever its size."""
    from toppra_app import waypoints
    monkeypatch.setattr(waypoints, "MAX_ROWS", 1000)
    f = tmp_path / "many.csv"
    f.write_text("0,0\n" * 200_000)
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=r"many.csv: row 1001: more than the 1000 waypoints a path may have$"):
            waypoints.read_waypoints(str(f))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * f.stat().st_size, peak    # the bytes, the text, its StringIO (4 B a character), 1000 rows
