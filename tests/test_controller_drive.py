"""A controller-profile plan taken to a servo drive (docs/controller.md, "Sampled at another period"): resampled
at the drive's own period (500 Hz … 4 kHz) and recomputed without the code under test — times through the
plan's public `eval`/`evald`/`evaldd`, torques by Pinocchio's RNEA — it keeps the profile's torque, velocity,
torque-rate and jerk limits including the steps from and to rest; samples finer than the profile's `dt` see the
step from rest whole, and the command line says so; hostile profile values are one line."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import dynamics
from benchmarks.cases import BENCH_PATHS
from toppra_app import ControllerProfile, JointPath, plan_time_optimal
from toppra_app.errors import InputError

TOL = 1.001                      # ≤ 0.1 % over a limit
RATE, JERK = 1000.0, 5000.0      # N·m/s, rad/s³


@functools.lru_cache(maxsize=None)
def robot():
    return dynamics.load_robot("iiwa7")


def drive_samples(r, plan, period):
    """q, q̇, q̈, τ at t = k·period up to the first sample at or after the end (the end state held there), with a
    rest sample (holding torque, q̈ = 0) a period before the start and after it; τ by Pinocchio plus friction."""
    from benchmarks.peers import pinocchio_inverse_dynamics
    inv = pinocchio_inverse_dynamics(r)
    t = np.minimum(np.arange(int(np.ceil(plan.duration / period - 1e-9)) + 1) * period, plan.duration)
    q, qd, qdd = plan.eval(t), plan.evald(t), plan.evaldd(t)
    tau = np.array([inv(a, b, c) for a, b, c in zip(q, qd, qdd)]) + np.asarray(r.coulomb) * np.sign(qd)
    zero = np.zeros(r.n)
    rest_tau = np.vstack([inv(q[0], zero, zero), tau, inv(q[-1], zero, zero)])
    return qd, tau, rest_tau, np.vstack([zero, qdd, zero])


@pytest.mark.parametrize("law", ["constant", "linear"])
@pytest.mark.parametrize("period", [2e-3, 5e-4, 2.5e-4])
def test_a_profile_at_the_drive_period_keeps_its_limits_by_pinocchio(period, law):
    """A drive at 500 Hz, 2 kHz or 4 kHz given its own period as the profile's dt (a regression check)."""
    pytest.importorskip("pinocchio")
    r = robot()
    prof = ControllerProfile(torque_headroom=0.9, velocity_headroom=0.95, torque_rate_max=RATE, jerk_max=JERK,
                             dt=period, time_law=law)
    plan = plan_time_optimal(r, JointPath.from_waypoints(BENCH_PATHS["iiwa7"]["straight"]), controller=prof)
    qd, tau, rest_tau, rest_qdd = drive_samples(r, plan, period)
    rate = np.abs(np.diff(rest_tau, axis=0)) / period
    assert rate.max() <= RATE * TOL and rate.max() > 0.99 * RATE          # the rate is what binds
    assert rate[0].max() <= RATE * TOL and rate[-1].max() <= RATE * TOL   # from and back to the holding torque
    assert np.abs(np.diff(rest_qdd, axis=0)).max() / period <= JERK * TOL
    assert np.max(np.abs(tau) / (0.9 * r.tau_max)) <= TOL
    assert np.max(np.abs(qd) / (0.95 * r.qd_max)) <= TOL
    assert plan.within_limits


def _run_plan(tmp_path, name, dt, controller):
    from toppra_app.cli import main
    wp = tmp_path / "wp.csv"
    wp.write_text("\n".join(",".join(map(str, row)) for row in BENCH_PATHS["iiwa7"]["straight"]) + "\n")
    out = tmp_path / name
    rc = main(["plan", str(wp), "--out", str(out), "--no-plots", "--no-report", "--dt", str(dt),
               "--controller", controller])
    data = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1)
    return rc, data[:, 1:8], data[:, 22:29]


def test_a_trajectory_file_finer_than_the_profile_dt_is_warned_and_the_warning_is_true(tmp_path, capsys):
    """`--dt 0.00025` (a 4 kHz drive) with the profile's default 1 ms: the file's first step from the holding
    torque is 4× the rate limit. It was written without a word; now one warning line names --dt, the profile's
    dt and the factor. With the profile's dt = --dt there is no warning and the file keeps the limit."""
    pytest.importorskip("pinocchio")
    from benchmarks.peers import pinocchio_inverse_dynamics
    hold = pinocchio_inverse_dynamics(robot())
    rc, q, tau = _run_plan(tmp_path, "coarse", 2.5e-4, f"torque_rate_max={RATE:g}")
    err = capsys.readouterr().err
    assert rc == 0 and err.count("\n") == 1, err
    assert "warning: --dt 0.00025 s is finer than the controller profile's dt 0.001 s" in err and "4×" in err
    first = np.abs(tau[0] - hold(q[0], np.zeros(7), np.zeros(7))).max() / 2.5e-4
    assert first > 3.9 * RATE                                   # what the warning says: the file is 4× over
    rc, q, tau = _run_plan(tmp_path, "matched", 2.5e-4, f"torque_rate_max={RATE:g},dt=0.00025")
    assert rc == 0 and "finer" not in capsys.readouterr().err
    steps = np.diff(np.vstack([hold(q[0], np.zeros(7), np.zeros(7)), tau]), axis=0)
    assert np.abs(steps).max() / 2.5e-4 <= RATE * TOL          # (the last, shorter step included: it is smooth)
    rc, _, _ = _run_plan(tmp_path, "coarser", 2e-3, f"torque_rate_max={RATE:g}")   # 500 Hz: nothing to say
    assert rc == 0 and "finer" not in capsys.readouterr().err


def test_palletize_warns_for_a_cell_profile_coarser_than_its_dt(tmp_path, capsys):
    from scenarios.palletizing import DEFAULT_CELL
    from toppra_app.cli import main
    cell = tmp_path / "cell.toml"
    cell.write_text(DEFAULT_CELL.read_text() + "\n[controller]\ntorque_rate_max = 1000.0\n")
    rc = main(["palletize", str(cell), "--out", str(tmp_path / "out"), "--boxes", "1", "--no-report", "--no-plots",
               "--no-compare", "--dt", "0.0005"])
    err = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert rc == 0 and len(err) == 1 and "cell.toml: [controller]: --dt 0.0005 s is finer" in err[0], err
    limits = DEFAULT_CELL.read_text().replace("# [limits]", "[limits]\njerk_max = 3000.0\n# [limits]", 1)
    cell.write_text(limits)                                # [limits] rates are planned as a profile of 1 ms too
    rc = main(["palletize", str(cell), "--out", str(tmp_path / "out2"), "--boxes", "1", "--no-report", "--no-plots",
               "--no-compare", "--dt", "0.00025"])
    err = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert rc == 0 and len(err) == 1 and "cell.toml: [limits]: --dt 0.00025 s is finer" in err[0], err
    assert "its jerk limits" in err[0] and "4×" in err[0]


def test_batch_warns_once_for_a_cell_profile_coarser_than_its_dt(tmp_path, capsys):
    from scenarios.palletizing import DEFAULT_CELL
    from toppra_app.cli import main
    (tmp_path / "cell.toml").write_text(DEFAULT_CELL.read_text() + "\n[controller]\ntorque_rate_max = 1000.0\n")
    manifest = tmp_path / "batch.toml"
    manifest.write_text('[batch]\ncells = ["cell.toml"]\nboxes = [1]\n[sweep]\n"boxes.heavy.mass" = [2.0, 3.0]\n')
    rc = main(["batch", str(manifest), "--out", str(tmp_path / "out"), "--serial", "--dt", "0.0005"])
    err = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert rc == 0 and len(err) == 1 and "cell.toml: [controller]: --dt 0.0005 s is finer" in err[0], err


@pytest.mark.parametrize("spec, field", [("max_passes=inf", "max_passes"), ("max_passes=nan", "max_passes"),
                                         ("max_passes=-inf", "max_passes"), ("dt=inf", "dt")])
def test_hostile_profile_values_on_the_command_line_are_one_line(tmp_path, capsys, spec, field):
    """`--controller max_passes=inf` ended in an OverflowError traceback, `max_passes=nan` in "cannot convert float
    NaN to integer", naming nothing."""
    from toppra_app.cli import main
    wp = tmp_path / "wp.csv"
    wp.write_text("0,0.3,0,-1.2,0,0.8,0\n1.2,0.6,0.2,-0.9,0.1,1.0,0.5\n")
    rc = main(["plan", str(wp), "--out", str(tmp_path / "out"), "--controller", spec])
    err = capsys.readouterr().err
    assert rc != 0 and err.count("\n") == 1 and f"--controller.{field}: expected" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kw", [dict(max_passes=float("nan")), dict(max_passes=np.float64("inf")),
                                dict(dt=10 ** 400), dict(dt=-10 ** 400)])
def test_hostile_profile_values_in_the_library_are_input_errors(kw):
    field = next(iter(kw))
    with pytest.raises(InputError, match=rf"^controller\.{field}: expected") as exc:
        ControllerProfile(**kw)
    assert "\n" not in str(exc.value)


def test_a_torque_headroom_too_small_to_hold_the_path_says_the_limit_is_the_headroom_s():
    """torque_headroom 0.1 on the iiwa 7: "gravity alone exceeds the torque limit ... tau_max = 17.6 N·m" — a drive
    engineer reads 176 N·m on the data sheet. The line now says tau_max there is the headroom × the robot's."""
    from toppra_app.errors import InfeasiblePathError
    path = JointPath.from_waypoints(BENCH_PATHS["iiwa7"]["straight"])
    with pytest.raises(InfeasiblePathError, match=r"tau_max = 17\.6 N·m.*; tau_max there is controller\."
                                                  r"torque_headroom = 0\.1 × the robot's$") as exc:
        plan_time_optimal(robot(), path, controller=ControllerProfile(torque_headroom=0.1))
    assert "\n" not in str(exc.value)
    weak = robot().with_limits(tau_max=0.1 * np.asarray(robot().tau_max))      # the robot's own limit: no note
    with pytest.raises(InfeasiblePathError, match=r"tau_max = 17\.6 N·m; the robot cannot hold the path there "
                                                  r"\([^)]*\)$"):
        plan_time_optimal(weak, path)
