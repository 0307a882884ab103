"""Big or absurd sizes, a second audit: inputs that are refused in one line before anything large is allocated,
and valid inputs that take about the memory of their numbers. The caps are monkeypatched small or the sizes kept
moderate and memory measured with tracemalloc: no test allocates GBs."""

from __future__ import annotations

import csv
import io
import re
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynamics
import dynamics.blocks as blocks
from dynamics.operational_space_inertia import operational_space_inertia, operational_space_inertia_inverse
from dynamics.random_model import serial_chain_robot
from fixtures import binary_tree_robot, pinocchio_inverse_dynamics, to_pinocchio
import toppra_app.trajectory as trajectory
from toppra_app import waypoints
from toppra_app.errors import InputError


def _peak(fn, *args, **kwargs):
    """(fn's result or the exception it raised, the peak of memory traced while it ran, in bytes)."""
    tracemalloc.start()
    try:
        try:
            out = fn(*args, **kwargs)
        except Exception as exc:             # noqa: BLE001 (returned for the caller to check)
            out = exc
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------------------ waypoint CSV
def test_a_long_valid_csv_takes_about_its_text_and_its_numbers(tmp_path):
    """Every row's fields were held as text until the file was read: ~1 kB a row of 7 joints (1 GB for 1 000 000
    rows, whose numbers are 56 MB). The numbers are now converted as the rows are read."""
    rng = np.random.default_rng(0)
    q = rng.uniform(-3, 3, (100_000, 7))
    f = tmp_path / "long.csv"
    np.savetxt(f, q, fmt="%.9f", delimiter=",", header="q1,q2,q3,q4,q5,q6,q7", comments="")
    (W, s, names), peak = _peak(waypoints.read_waypoints, str(f), 7)
    assert s is None and names == [f"q{k}" for k in range(1, 8)]
    assert np.array_equal(W, np.loadtxt(f, delimiter=",", skiprows=1))      # numpy's reading of the same file
    size = f.stat().st_size                                                   # 7.6 MB of text, 5.6 MB of numbers
    assert peak < 4 * size, (peak / 2**20, size / 2**20)                     # (was 15 × the file: 115 MB)


@pytest.mark.parametrize("line, message", [("0," * 999_999 + "0", "row 2: 1000000 columns, more than 64"),
                                           ('"0",' * 499_999 + '"0"', "row 2: more than 64 columns")])
def test_a_line_of_a_million_fields_is_refused_before_it_is_split(tmp_path, line, message):
    """The CSV reader built the list of a line's fields before they were counted (a 200 MB line: 16 s, 2.9 GB)."""
    f = tmp_path / "wide.csv"
    f.write_text("0,0\n" + line + "\n1,1\n")
    exc, peak = _peak(waypoints.read_waypoints, str(f))
    assert isinstance(exc, InputError) and str(exc).endswith(message), exc
    assert peak < 6 * f.stat().st_size, peak / 2**20                         # (was 25 × the file)


def test_lines_of_many_empty_fields_and_long_comments_are_skipped_unsplit(tmp_path):
    f = tmp_path / "blank.csv"
    f.write_text("# " + "," * 2_000_000 + "\n0,0\n" + " ,\t" * 1_000_000 + "\n1,1\n\n")
    (W, s, names), peak = _peak(waypoints.read_waypoints, str(f))
    assert W.tolist() == [[0, 0], [1, 1]]
    assert peak < 6 * f.stat().st_size, peak / 2**20                         # (was 12 × the file)


def test_a_quoted_delimiter_is_one_field(tmp_path):
    """A line of many delimiters inside quotes is counted as the CSV reader splits it (one field here)."""
    f = tmp_path / "quoted.csv"
    f.write_text('0,0\n1,"' + "," * 100 + '"\n')
    with pytest.raises(InputError, match=r"row 2, field 'q2': ',{40}.* is not a plain number"):
        waypoints.read_waypoints(str(f))


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab,\r\n", max_size=14))
def test_lines_are_split_as_the_csv_reader_splits_them(text):
    assert [text[a:b] for a, b in waypoints._spans(text)] == list(io.StringIO(text, newline=""))


@settings(max_examples=500, deadline=None)
@given(fields=st.lists(st.text(alphabet='a ",', max_size=5), min_size=60, max_size=70), delimiter=st.sampled_from(",;"))
def test_fields_are_counted_as_the_csv_reader_counts_them(fields, delimiter):
    """The fields of a line of many delimiters, some in quotes, are counted without splitting it (`_checked`)."""
    line = delimiter.join(f.replace(",", delimiter) for f in fields)
    try:
        want = len(next(csv.reader([line], delimiter=delimiter)))
    except csv.Error:
        return
    try:
        out = waypoints._checked(line, delimiter, "f", 1)
        assert out == line and want <= waypoints.MAX_COLUMNS or out == "\n" and not line.strip(" " + delimiter)
    except InputError as exc:
        assert want > waypoints.MAX_COLUMNS, (line, exc)


# ------------------------------------------------------------------------------ operational-space inertia
OSI_ROBOTS = {"chain": lambda: serial_chain_robot(9, 2, prismatic=0.3), "tree": lambda: binary_tree_robot(10, 3, prismatic=0.3)}


@pytest.mark.parametrize("name", list(OSI_ROBOTS))
def test_osi_in_blocks_is_the_whole_batch_bit_for_bit_and_pinocchios(name, monkeypatch):
    """Λ⁻¹ and Λ (Chang & Khatib, Table 1 and eq. 17) over blocks of samples, as the other batched dynamics."""
    pin = pytest.importorskip("pinocchio")
    robot = OSI_ROBOTS[name]()
    frames = [robot.link_names[-1], robot.link_names[len(robot.link_names) // 2]] if name == "tree" else None
    q = np.random.default_rng(1).uniform(-1.5, 1.5, (1037, robot.n))
    fns = [operational_space_inertia_inverse] + ([operational_space_inertia] if frames is None else [])  # (the tree's
    whole = [fn(robot, q, frames) for fn in fns]                # leaves have fewer than 6 joints: Λ⁻¹ only)
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 1)                # blocks of ALIGN samples, and a short last one
    parts = [fn(robot, q, frames) for fn in fns]
    assert all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(parts, whole))
    model = to_pinocchio(robot)
    data = model.createData()
    ids = [model.addFrame(pin.Frame(f"op{k}", body + 1, pin.SE3(T[:3, :3], T[:3, 3]), pin.FrameType.OP_FRAME))
           for k, (body, T) in enumerate(robot.frame(f) for f in (frames or [None]))]
    data = model.createData()
    for k in (0, blocks.ALIGN - 1, blocks.ALIGN, 2 * blocks.ALIGN + 1, 1036):
        M = pin.crba(model, data, q[k])
        M = np.triu(M) + np.triu(M, 1).T
        pin.computeJointJacobians(model, data, q[k])
        pin.updateFramePlacements(model, data)
        J = np.vstack([pin.getFrameJacobian(model, data, i, pin.LOCAL_WORLD_ALIGNED) for i in ids])
        ref = J @ np.linalg.solve(M, J.T)
        assert np.abs(parts[0][k] - ref).max() <= 1e-10 * np.abs(ref).max(), k
        if frames is None:
            assert np.abs(parts[1][k] @ ref - np.eye(6)).max() <= 1e-8, k


def test_osi_of_many_samples_takes_the_result_and_one_block():
    """30 joints: 70 kB a sample of work for a Λ of 0.3 kB (7 GB for 10⁵ samples); here 210 MB before."""
    robot = serial_chain_robot(30, 5)
    q = np.random.default_rng(2).uniform(-1.5, 1.5, (3000, robot.n))
    operational_space_inertia(robot, q[:10])                             # (caches filled)
    for fn in (operational_space_inertia_inverse, operational_space_inertia):
        out, peak = _peak(fn, robot, q)
        assert out.shape == (3000, 6, 6) and peak - out.nbytes < 48 * 2**20, (fn.__name__, peak / 2**20)


def test_a_singular_sample_is_named_by_its_place_in_the_whole_batch(monkeypatch):
    robot = dynamics.load_robot("iiwa7")
    q = np.random.default_rng(3).uniform(-1.0, 1.0, (300, 7))
    q[200] = 0.0                                     # stretched out: joints 1, 3, 5 and 7 on one axis
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 1)
    with pytest.raises(dynamics.ModelError, match=r"^operational space inertia of robot 'iiwa7' is singular at sample "
                                                  r"200 \(6 task coordinates, 7 joints\); use operational_space_inert"):
        operational_space_inertia(robot, q)


def test_an_osi_too_large_is_refused_before_it_is_computed(monkeypatch):
    robot = serial_chain_robot(9, 2)
    q = np.zeros((400, robot.n))
    frames = robot.link_names[-3:]                                      # 18 task coordinates: 324 numbers a sample
    monkeypatch.setattr(blocks, "MAX_RESULT_BYTES", 8 * 400 * 324 - 1)
    for fn in (operational_space_inertia_inverse, operational_space_inertia):
        exc, peak = _peak(fn, robot, q, frames)
        assert isinstance(exc, dynamics.ModelError) and peak < 2**20
        assert str(exc).startswith("q: 400 samples give ") and "(324 numbers a sample)" in str(exc), exc
    monkeypatch.setattr(blocks, "MAX_RESULT_BYTES", 8 * 400 * 324)
    assert operational_space_inertia_inverse(robot, q, frames).shape == (400, 18, 18)


# ------------------------------------------------------------------------------ inverse dynamics
@pytest.mark.parametrize("robot", [dynamics.load_robot("iiwa7"), serial_chain_robot(30, 5, prismatic=0.2)],
                         ids=["iiwa7", "chain30"])
def test_inverse_dynamics_of_a_batch_is_that_of_its_sub_batches_bit_for_bit(robot):
    """RNEA split its samples into equal parts (5000 samples of 30 joints: 3 parts of 1667), so a sample's τ
    differed by an ulp with the number of samples passed (40 of 5000 in sub-batches of 64). Parts are now
    multiples of blocks.ALIGN, as the other batched dynamics: sub-batches starting at multiples of it agree."""
    q, qd, qdd = np.random.default_rng(0).uniform(-1.5, 1.5, (3, 5000, robot.n))
    whole = dynamics.inverse_dynamics(robot, q, qd, qdd)
    for size in (blocks.ALIGN, 16 * blocks.ALIGN):
        parts = np.concatenate([dynamics.inverse_dynamics(robot, q[a:a + size], qd[a:a + size], qdd[a:a + size])
                                for a in range(0, 5000, size)])
        assert np.array_equal(parts, whole), (size, int((parts != whole).any(axis=1).sum()))
    rnea = pinocchio_inverse_dynamics(robot)
    for k in (0, 1023, 1024, 2339, 2340, 4999):
        ref = rnea(q[k], qd[k], qdd[k]) - robot.viscous * qd[k]            # (rigid body only here)
        assert np.abs(whole[k] - ref).max() <= 1e-11 * np.abs(ref).max(), k


# ------------------------------------------------------------------------------ controller profile's dt
def _limited_chain(n):
    robot = serial_chain_robot(n, 5)
    return robot.with_limits(tau_max=np.full(n, 1e4), qd_max=np.full(n, 2.0), qdd_max=np.full(n, 10.0))


def test_the_controller_rate_check_is_bounded_in_bytes_that_grow_with_the_joints(monkeypatch):
    """`controller.dt` was capped at 2 million samples whatever the number of joints: 30 joints at dt = 1e-6 s on a
    1.1 s plan took 2.6 GB and 18 s (2 million samples: ~5 GB). Now 8 × (10 + 10 n) B a sample at most
    `MAX_SAMPLE_BYTES`, refused in one line after the first solve; the estimate is checked against tracemalloc."""
    from toppra_app import JointPath, plan_time_optimal
    from toppra_app.controller import ControllerProfile
    a, b = 10, 10                                                  # docs/safety.md: 8 × (10 + 10 n) B a sample
    for n in (7, 30):
        robot = _limited_chain(n)
        path = JointPath.from_waypoints(np.random.default_rng(0).uniform(-0.5, 0.5, (3, n)))
        duration = plan_time_optimal(robot, path, controller=ControllerProfile(torque_rate_max=1e9)).duration
        peaks = [_peak(plan_time_optimal, robot, path, controller=ControllerProfile(
            torque_rate_max=1e9, dt=duration / count, max_passes=1))[1] for count in (20_000, 40_000)]
        assert peaks[1] - peaks[0] < 1.25 * 8 * (a + b * n) * 20_000, (n, (peaks[1] - peaks[0]) / 20_000)
        monkeypatch.setattr(trajectory, "MAX_SAMPLE_BYTES", 8 * (a + b * 18) * 20_000)   # 20 000 samples of 18 joints
        plan = _peak(plan_time_optimal, robot, path, controller=ControllerProfile(
            torque_rate_max=1e9, dt=duration / 20_000, max_passes=1))[0]
        monkeypatch.undo()
        if n == 7:
            assert abs(plan.duration - duration) < 1e-3 * duration
        else:
            assert isinstance(plan, InputError), plan
            assert re.fullmatch(r"controller\.dt: \S+ s gives 2e\+04 samples over the plan's \S+ s, 47\.\d MiB at the "
                                r"peak of its sampled rate check \(2480 B a sample\), more than the 29 MiB it may "
                                r"take; use a larger dt", str(plan)), plan


# ------------------------------------------------------------------------------ palletize --boxes
@pytest.mark.parametrize("boxes, says", [(",".join(map(str, range(1, 20_001))), "box numbers must be between 1 and 8, got '9'"),
                                         ("1_0", "expected comma-separated box numbers, got '1_0'"),
                                         ("9" * 5000, "box numbers must be between 1 and 8, got '9999"),
                                         ("1-1000000000", "expected comma-separated box numbers, got '1-1000000000' (a range a-b is not "
                                                          "read: list the numbers)")])
def test_palletize_boxes_names_the_wrong_entry_in_a_short_line(tmp_path, capsys, monkeypatch, boxes, says):
    """--boxes of 20 000 numbers was refused in one line that quoted them all (109 kB); '1_0' was read as box 10."""
    from toppra_app.cli import main
    monkeypatch.chdir(tmp_path)
    assert main(["palletize", "--boxes", boxes, "--no-plots", "--no-report", "--out", "out"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and len(err[0]) < 300 and f"error: --boxes: {says}" in err[0], err
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------ URDF
def _chain_urdf(n, xyz="0 0 0.1"):
    parts = ['<robot name="big"><link name="l0"/>']
    for k in range(1, n + 1):
        parts.append(f'<link name="l{k}"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" '
                     f'ixz="0" iyz="0"/></inertial></link><joint name="j{k}" type="revolute"><parent link="l{k - 1}"/>'
                     f'<child link="l{k}"/><origin xyz="{xyz if k == 1 else "0 0 0.1"}"/><axis xyz="0 0 1"/>'
                     f'<limit lower="-1" upper="1" effort="10" velocity="1"/></joint>')
    return "".join(parts) + "</robot>"


def test_a_urdf_of_thousands_of_links_is_refused_after_parsing(tmp_path):
    """10⁵ links were read (20 s, 0.9 GB) into a robot whose every RNEA allocates n² numbers (10⁴ joints: 16 s and
    0.9 GB a sample); now one line once the XML is parsed. 4096 is 30 × example-robot-data's largest (130 links)."""
    f = tmp_path / "big.urdf"
    f.write_text(_chain_urdf(5000))
    with pytest.raises(dynamics.ModelError, match=r"big\.urdf: 5001 <link> elements, more than the 4096 a robot may have$"):
        dynamics.from_urdf(str(f))
    f.write_text(_chain_urdf(300))
    robot = dynamics.from_urdf(str(f))
    assert robot.n == 300 and robot.joint_names[-1] == "j300"


def test_a_huge_vector_attribute_is_not_split_into_millions_of_numbers(tmp_path):
    """<origin xyz="0 0 0 … (10⁶ numbers)"> was split whole and every part read as a number before the count was
    checked (a 40 MB value: 20 million strings); it was also parsed in 64 kB pieces, which expat 2.5 rescans
    (quadratic: 20 s for 40 MB, now 1 s)."""
    f = tmp_path / "attr.urdf"
    f.write_text(_chain_urdf(2, xyz="0 " * 1_000_000))
    exc, peak = _peak(dynamics.from_urdf, str(f))
    assert isinstance(exc, dynamics.ModelError) and re.search(r"joint 'j1'.*<origin xyz=\"0 0 0 .{40,80}…\">: expected 3 "
                                                               r"finite numbers$", str(exc)), exc
    assert len(str(exc)) < 300 and peak < 8 * f.stat().st_size, peak / 2**20        # (was 30 × the file)
