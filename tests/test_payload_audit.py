"""Payload features audited as a user would use them: every documented way to give a payload, and bad inputs
answered in one line naming the argument (library) or the flag (command line)."""

from __future__ import annotations

import numpy as np
import pytest

import dynamics
from dynamics.payload import PayloadError, RigidBodyInertia
from toppra_app import JointPath, TimeOptimalPlanner

WAYPOINTS = [[0, 0.3, 0, -1.2, 0, 0.8, 0], [1.2, 0.6, 0.2, -0.9, 0.1, 1.0, 0.5]]


@pytest.fixture(scope="module")
def planner():
    return TimeOptimalPlanner(dynamics.load_robot("iiwa7"), JointPath.from_waypoints(WAYPOINTS))


def test_a_payload_given_as_a_mass_or_a_dict_is_kept_as_its_inertia(planner):
    """docs/planner.md: `payload` is a RigidBodyInertia, a mass in kg or a dict. A plan of a mass kept the float,
    and its summary() failed with AttributeError ('float' object has no attribute 'mass')."""
    box = RigidBodyInertia.point_mass(2.0)
    ref = planner.plan(payload=box)
    spec = {"mass": 2.0}
    for given in (2.0, 2, np.float64(2.0), spec):
        plan = planner.plan(payload=given)
        assert isinstance(plan.payload, RigidBodyInertia) and plan.payload.isclose(box)
        assert plan.summary()["payload_mass"] == 2.0
        assert plan.duration == ref.duration
    spec["mass"] = 5.0                          # the caller's dict changed later: the plan's payload is its own
    assert plan.payload.mass == 2.0
    assert planner.plan().summary()["payload_mass"] is None


def test_with_payload_refuses_flags_that_would_skip_the_rating():
    """allow_overload="no" is truthy and allowed the overload; tol=NaN made the rating check always pass."""
    robot = dynamics.load_robot("iiwa7")                       # rated 7 kg
    for bad in ("no", 1, None):
        with pytest.raises(PayloadError, match="^allow_overload: expected True or False"):
            robot.with_payload(7.5, allow_overload=bad)
    for bad in (float("nan"), -1e-9, 1.0, "0"):
        with pytest.raises(PayloadError, match="^tol: "):
            robot.with_payload(7.5, tol=bad)
    with pytest.raises(PayloadError, match="exceeds the rated payload 7 kg"):
        robot.with_payload(7.5)
    assert robot.with_payload(7.5, allow_overload=np.True_).masses[-1] == pytest.approx(robot.masses[-1] + 7.5)


def test_a_centre_of_mass_beyond_what_a_double_holds_is_named_without_a_warning():
    """COM 1e200 m: the merge overflowed (RuntimeWarning 'overflow encountered in dot') and was then refused as
    'centre of mass must be finite numbers, got [inf, ...]', a value the user never gave."""
    robot = dynamics.load_robot("iiwa7")
    with np.errstate(all="raise"):
        with pytest.raises(PayloadError, match=r"^payload: centre of mass \[1e\+200, 0.0, 0.0\] m is too far"):
            robot.with_payload(RigidBodyInertia.point_mass(2.0, (1e200, 0.0, 0.0)))
    far = RigidBodyInertia.point_mass(2.0, (1e150, 0.0, 0.0))        # representable: the parallel-axis term
    assert far.inertia_about()[1, 1] == pytest.approx(2e300)


def _csv(tmp_path):
    f = tmp_path / "wp.csv"
    f.write_text("\n".join(",".join(str(v) for v in row) for row in WAYPOINTS) + "\n")
    return str(f)


@pytest.mark.parametrize("args, message", [
    (["--payload-inertia", "1", "1", "3"], "--payload-inertia: principal moments [1.0, 1.0, 3.0] violate the triangle"),
    (["--payload-inertia", "1", "1", "-1"], "--payload-inertia: inertia must be positive semi-definite"),
    (["--payload-inertia", "nan", "1", "1"], "--payload-inertia: mass and inertia must be finite numbers"),
    (["--payload-com", "nan", "0", "0"], "--payload-com: centre of mass must be finite numbers, got [nan, 0.0, 0.0]"),
    (["--payload-com", "1e200", "0", "0"], "--payload-com: centre of mass [1e+200, 0.0, 0.0] m is too far"),
])
def test_a_bad_payload_com_or_inertia_names_the_option(tmp_path, capsys, args, message):
    """These lines began "payload: ...", naming no option (and COM 1e308 printed a numpy warning first)."""
    from toppra_app.cli import main
    out = tmp_path / "out"
    assert main(["plan", _csv(tmp_path), "--out", str(out), "--payload-mass", "2", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"toppra-app plan: error: {err.split('error: ', 1)[1]}" and message in err, err
    assert len(err.splitlines()) == 1 and not out.exists()


def test_plan_records_the_whole_payload_and_its_torques_are_pinocchios(tmp_path):
    """summary.json kept only payload_mass: the COM, the inertia and the frame (here a mid-chain link) were lost.
    The trajectory's torques against Pinocchio with the payload appended to that link's joint, on 1 ms samples."""
    pin = pytest.importorskip("pinocchio")
    from fixtures import to_pinocchio
    from toppra_app.cli import main
    out = tmp_path / "out"
    assert main(["plan", _csv(tmp_path), "--out", str(out), "--no-plots", "--payload-mass", "3",
                 "--payload-com", "0.05", "0", "0.1", "--payload-inertia", "0.01", "0.02", "0.025",
                 "--payload-frame", "iiwa_link_5"]) == 0
    import json
    summary = json.loads((out / "summary.json").read_text())
    assert summary["payload"] == dict(mass=3.0, com=[0.05, 0.0, 0.1], inertia=[0.01, 0.02, 0.025],
                                      frame="iiwa_link_5", allow_overload=False)
    units = summary["units"]              # (it named no unit of mass, length or inertia: palletize's summary did)
    assert (units["mass"], units["length"], units["inertia"]) == ("kg", "m", "kg·m²")
    report = (out / "report.html").read_text(encoding="utf-8")      # (it named no payload)
    assert ("<th>payload</th>" in report and
            "<td>3 kg, COM [0.05, 0.0, 0.1] m, principal moments [0.01, 0.02, 0.025] kg·m²</td>" in report)
    robot = dynamics.load_robot("iiwa7")
    X = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1)
    q, qd, qdd, tau = (X[:, 1 + 7 * k:8 + 7 * k] for k in range(4))
    model = to_pinocchio(robot)
    body, T = robot.frame("iiwa_link_5")
    model.appendBodyToJoint(body + 1, pin.Inertia(3.0, np.array([0.05, 0.0, 0.1]), np.diag([0.01, 0.02, 0.025])),
                            pin.SE3(T[:3, :3].copy(), T[:3, 3].copy()))
    data = model.createData()
    ref = np.array([pin.rnea(model, data, *x) for x in zip(q, qd, qdd)])
    assert np.abs(tau - ref).max() <= 1e-9 * np.abs(ref).max()
    assert (np.abs(ref) / robot.tau_max).max() <= 1 + 1e-3


@pytest.mark.parametrize("masses, offsets", [("1", "0"), ("1,1,1", "0,0")])
def test_a_payload_sweep_of_one_point_writes_its_output(tmp_path, capsys, masses, offsets):
    """One (mass, offset) pair — also 1,1,1 × 0,0, each value planned once — ended in a traceback after planning
    (TypeError: unsupported format string passed to NoneType.__format__): no re-plan was counted after the first
    point, though every point is a re-plan after the empty one, and the output was never written."""
    import json
    from toppra_app.cli import main
    out = tmp_path / "out"
    assert main(["payload-sweep", "--masses", masses, "--offsets", offsets, "--no-plots", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert [p["mass_kg"] for p in summary["points"]] == [1.0]
    assert summary["replan_mean_seconds"] == summary["points"][0]["plan_seconds"] > 0
    assert "re-plan with another payload" in capsys.readouterr().out


@pytest.mark.parametrize("rating", [1e4, 1e300])
def test_a_sweeps_default_masses_are_bounded_whatever_the_rating(rating, monkeypatch):
    """A cell rated 1e4 kg swept 10001 masses (hours of planning); 1e300 kg ended in numpy's "Maximum allowed
    size exceeded", naming nothing. The default is now at most 100 masses, evenly spaced up to the rating."""
    from scenarios import payload_change
    from scenarios.palletizing import load_cell
    cell = load_cell()
    monkeypatch.setattr(cell, "robot", cell.robot.replace(rated_payload=rating))
    seen = []

    class Stop(Exception):
        pass

    def planner(robot, path, **options):                     # stands in for the planner: records the masses
        class Recording:
            def plan(self, payload=None):
                seen.append(0.0 if payload is None else payload.mass)
                if len(seen) > 1 + payload_change.DEFAULT_MASSES * 3:
                    raise Stop
                return type("P", (), dict(duration=1.0, worst_ratio=1.0, reused_problem=True, iterations=1,
                                          solver="x", limit_report=lambda self: None))()
        return Recording()
    monkeypatch.setattr("toppra_app.planner.TimeOptimalPlanner", planner)
    report = payload_change.sweep_payloads(cell)
    assert report.masses.size == payload_change.DEFAULT_MASSES
    assert report.masses[0] == 0.0 and report.masses[-1] == rating
    assert len(seen) == 1 + 3 * payload_change.DEFAULT_MASSES          # the empty plan, then 3 offsets × masses


def test_a_sweep_payload_the_robot_cannot_hold_names_the_cell_box_and_payload(tmp_path, capsys):
    """A cell rated for 1000 kg ([cell] rated_payload) swept to 300 kg: the planner's line ("gravity alone exceeds
    the torque limit of joint iiwa_joint_2 ...") came alone, naming neither the cell file nor the payload, under a
    progress line of the mass before. Now as palletize names its moves: file, box, move and payload."""
    from scenarios.palletizing import DEFAULT_CELL, load_cell
    from scenarios.payload_change import sweep_payloads
    from toppra_app.cli import main
    from toppra_app.errors import InfeasiblePathError
    f = tmp_path / "rated.toml"
    f.write_text(DEFAULT_CELL.read_text().replace('flange = "flange"', 'flange = "flange"\nrated_payload = 1000', 1))
    cell = load_cell(f, check_reach=False)
    with pytest.raises(InfeasiblePathError) as info:
        sweep_payloads(cell, masses=[0.0, 300.0], offsets=[0.05])
    msg = str(info.value)
    assert msg.startswith(f"{f}: box 1 (L1R1C1), loaded move with 300 kg, COM offset 0.05 m: gravity alone exceeds "
                          "the torque limit of joint iiwa_joint_2"), msg
    assert main(["payload-sweep", str(f), "--masses", "0,300", "--offsets", "0.05", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"toppra-app payload-sweep: error: {f}: box 1 (L1R1C1), loaded move with 300 kg")
    assert not (tmp_path / "o").exists()


def test_a_mass_just_over_the_rating_is_told_apart_from_the_rating(tmp_path, capsys):
    """7.0000001 kg on the iiwa 7 was refused as "mass 7 kg exceeds the rated payload 7 kg" (`:g` keeps 6
    digits), the command line's and the sweep's too: the refused mass is now written out where it would read
    as the limit; far over, as before ("50 kg")."""
    from toppra_app.cli import main
    with pytest.raises(PayloadError, match=r"mass 7\.0000001 kg exceeds the rated payload 7 kg"):
        dynamics.load_robot("iiwa7").with_payload(7.0000001)
    for mass, shown in (("7.0000001", "7.0000001"), ("50", "50")):
        assert main(["plan", _csv(tmp_path), "--out", str(tmp_path / "out"), "--payload-mass", mass]) == 2
        assert f"--payload-mass: {shown} kg exceeds the rated payload 7 kg" in capsys.readouterr().err
    assert main(["payload-sweep", "--masses", "6.4000001", "--out", str(tmp_path / "sweep")]) == 2
    assert "--masses: 6.4000001 kg exceeds what iiwa7 can carry (6.4 kg" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "sweep").exists()
