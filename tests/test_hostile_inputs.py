"""Hostile files (issue 11): waypoint CSVs and cell files, mutated field by field and byte by byte by
hypothesis, through the real loaders. Every case either loads or ends in one `InputError` line naming the
file — never another exception, never a traceback at the command line, always within seconds. The
counts are reported in docs/safety.md."""

from __future__ import annotations

import copy
import os
import re
import time
import tomllib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scenarios.palletizing import DEFAULT_CELL, load_cell
from toppra_app.cli import main
from toppra_app.errors import InputError
from toppra_app.waypoints import read_waypoints

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
GOOD_ROWS = ["0,0.3,0,-1.2,0,0.8,0", "1.2,0.6,0.2,-0.9,0.1,1.0,0.5", "0.5,0.5,0.1,-1.0,0.0,0.9,0.2"]


def one_line(exc: Exception, name: str) -> None:
    msg = str(exc)
    assert "\n" not in msg.strip() and name in msg, msg


# ------------------------------------------------------------------------------ CSV
CELL_TEXT = st.one_of(st.sampled_from(["0", "-1.5", "1e-3", "abc", "0.4rad", "0.1_5", "0x1A", "nan", "inf", "",
                                       " ", "1,5", "1e400", "--1", "+.5", "θ", "s", "q1", "é", "\"1\"", "1;2"]),
                      st.text(max_size=6))
ROW = st.lists(CELL_TEXT, min_size=1, max_size=9).map(lambda r: ",".join(r))


@SETTINGS
@given(rows=st.lists(st.one_of(ROW, st.sampled_from(GOOD_ROWS)), min_size=0, max_size=6),
       prefix=st.sampled_from([b"", b"\xef\xbb\xbf", b"\xff\xfe", b"# c\n", b"\x00"]),
       newline=st.sampled_from(["\n", "\r\n", "\r"]))
def test_csv_loads_or_names_row_and_field(tmp_path, rows, prefix, newline):
    f = tmp_path / "wp.csv"
    f.write_bytes(prefix + newline.join(rows).encode("utf-8", "surrogatepass"))
    try:
        W, s, names = read_waypoints(str(f), 7)
    except InputError as exc:
        one_line(exc, str(f))
        return
    assert W.shape[1] == 7 and W.shape[0] >= 2 and np.isfinite(W).all()
    # nothing was dropped: every non-comment, non-empty line is a waypoint or the one header
    # (split as a file's lines are, at \n, \r\n and \r: str.splitlines also splits at \x85, \x1c, \u2028 …, which
    # are characters inside a line of a file — a comment "#,\x850" counted as a comment and a waypoint "0")
    lines = [ln for ln in re.split(r"\r\n|\r|\n", newline.join(rows))
             if ln.strip(" ,;\t") and not ln.strip().startswith("#")]
    assert W.shape[0] in (len(lines), len(lines) - 1)


@pytest.mark.parametrize("sep", [";", "\t"])
def test_semicolons_or_tabs_between_fields_read_as_commas(tmp_path, sep):
    """A spreadsheet's export in a locale with a decimal comma separates fields by ';', a copy from a table by tabs:
    both were refused ("... is neither a number nor a column name"). The same waypoints as with commas."""
    comma = tmp_path / "c.csv"
    comma.write_text("j1,j2,j3,j4,j5,j6,j7\n" + "\n".join(GOOD_ROWS) + "\n")
    other = tmp_path / "o.csv"
    other.write_text(comma.read_text().replace(",", sep))
    got, want = read_waypoints(str(other), 7), read_waypoints(str(comma), 7)
    assert np.array_equal(got[0], want[0]) and got[2] == want[2]


@pytest.mark.parametrize("text, where", [("0,0;0,3;0;-1,2;0;0,8;0\n1;0,6;0,2;-0,9;0,1;1;0,5\n", "row 1, field 'q2'"),
                                         ("j1;j2;j3;j4;j5;j6;j7\n0,0;0,3;0;-1,2;0;0,8;0\n", "row 2, field 'j1'")])
def test_a_decimal_comma_is_refused_naming_the_decimal_point(tmp_path, text, where):
    """With ';' between fields a decimal comma is not read as a separator: one line naming row and field and saying
    the decimal point is '.'."""
    f = tmp_path / "wp.csv"
    f.write_text(text)
    with pytest.raises(InputError) as info:
        read_waypoints(str(f), 7)
    one_line(info.value, str(f))
    assert where in str(info.value) and "decimal point is '.'" in str(info.value)


@pytest.mark.parametrize("header", [False, True])
def test_a_csv_over_the_waypoint_limit_is_refused_with_or_without_a_header(tmp_path, monkeypatch, header):
    """The limit counts waypoints: without a header one row more than it passed (a hunt's 1 000 001 rows)."""
    from toppra_app import waypoints
    monkeypatch.setattr(waypoints, "MAX_ROWS", 10)
    p = tmp_path / "w.csv"
    for n, ok in ((10, True), (11, False)):
        p.write_text(("a,b\n" if header else "") + "".join(f"{k},{k}\n" for k in range(n)))
        if ok:
            assert waypoints.read_waypoints(str(p))[0].shape == (10, 2)
        else:
            with pytest.raises(InputError, match="more than the 10"):
                waypoints.read_waypoints(str(p))


@SETTINGS
@given(raw=st.binary(max_size=200))
def test_csv_of_random_bytes(tmp_path, raw):
    f = tmp_path / "wp.csv"
    f.write_bytes(raw)
    try:
        read_waypoints(str(f), 7)
    except InputError as exc:
        one_line(exc, str(f))


# ------------------------------------------------------------------------------ cell files
with open(DEFAULT_CELL, "rb") as _fh:
    BASE = tomllib.load(_fh)
FIELDS = [(t, k) for t, tbl in BASE.items() if isinstance(tbl, dict) for k in tbl
          if not isinstance(tbl[k], dict)] + [("boxes", "heavy")]
HOSTILE_TOML = st.one_of(
    st.sampled_from(["x", "", "iiwa7", "panda", "../../etc/passwd", "adaptive", "line"]),
    st.integers(-10**12, 10**12), st.sampled_from([1e300, -1e300, 1e7, 0.0, -0.0, 1e-300, 0.5, -1.0, 3.0]),
    st.booleans(), st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), max_size=5),
    st.lists(st.text(max_size=3), max_size=3), st.just([[1.0, 2.0], [3.0]]), st.just({"a": 1}),
)


def dump_toml(doc: dict) -> str:
    """A small TOML writer for the cell's shapes (tables of scalars, lists and inline tables)."""
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(float(v)) if isinstance(v, float) else str(v)
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f'"{k}" = {value(x)}' for k, x in v.items()) + " }"
        raise TypeError(v)

    out = []
    for t, tbl in doc.items():
        if t == "boxes":
            for name, box in tbl.items():
                out.append(f"[boxes.{name}]")
                out += [f"{k} = {value(v)}" for k, v in box.items()] if isinstance(box, dict) else []
            continue
        out.append(f"[{t}]")
        out += [f'"{k}" = {value(v)}' for k, v in tbl.items()]
    return "\n".join(out) + "\n"


@SETTINGS
@given(field=st.sampled_from(FIELDS), value=HOSTILE_TOML)
def test_cell_field_mutations(tmp_path, field, value):
    doc = copy.deepcopy(BASE)
    table, key = field
    doc[table][key] = value
    f = tmp_path / "cell.toml"
    try:
        f.write_text(dump_toml(doc))
    except (TypeError, ValueError):
        return
    t0 = time.perf_counter()
    try:
        load_cell(f, check_reach=False)
    except InputError as exc:
        one_line(exc, str(f))
    assert time.perf_counter() - t0 < 10


@pytest.mark.parametrize("make, message", [
    (lambda d: d, "is a directory"),
    (lambda d: "/dev/zero", "not a regular file"),
    (lambda d: (d / "bin.toml").write_bytes(b"\x00\x01\x02\xff") and d / "bin.toml", "binary data"),
    (lambda d: (d / "latin.toml").write_bytes(b"[cell]\nname = \"caf\xe9\"\n") and d / "latin.toml", "line 2: not UTF-8"),
    (lambda d: (d / "u16.toml").write_bytes("[cell]\n".encode("utf-16")) and d / "u16.toml", "UTF-16"),
    (lambda d: (d / "deep.toml").write_text("a = " + "[" * 5000 + "]" * 5000) and d / "deep.toml", "nested too"),
    (lambda d: (os.symlink(d / "loop", d / "loop"), d / "loop")[1], "cannot read"),
    (lambda d: (d / "big.toml").write_bytes(b"#" * (2 << 20)) and d / "big.toml", "at most"),
])
def test_cell_files_that_are_not_cell_files(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(InputError, match=message) as info:
        load_cell(path, check_reach=False)
    one_line(info.value, str(path))


@pytest.mark.parametrize("command", [["palletize", "loop1.toml", "--quick"], ["payload-sweep", "loop1.toml"],
                                     ["batch", "loop1.toml", "--serial"], ["plan", "loop1.toml", "--out", "r"],
                                     ["plan", "wp.csv", "--robot", "loop1.urdf", "--out", "r"]])
def test_symlink_loops_at_the_command_line_end_in_one_line(tmp_path, monkeypatch, capsys, command):
    """Hunt report: `palletize loop1.toml` (loop1 -> loop2 -> loop1) ended in "RuntimeError: Symlink loop",
    raised while --out was checked against the inputs (Path.resolve), before the reader could say so."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wp.csv").write_text("0,0.3,0,-1.2,0,0.8,0\n1.2,0.6,0.2,-0.9,0.1,1.0,0.5\n")
    for ext in ("toml", "urdf"):
        os.symlink(f"loop2.{ext}", f"loop1.{ext}")
        os.symlink(f"loop1.{ext}", f"loop2.{ext}")
    assert main(command) == 2
    err = capsys.readouterr().err
    assert "loop1" in err and "symbolic link" in err and len(err.strip().splitlines()) == 1
    assert sorted(os.listdir(tmp_path)) == ["loop1.toml", "loop1.urdf", "loop2.toml", "loop2.urdf", "wp.csv"]


@pytest.mark.parametrize("table, key, value, message", [
    ("pattern", "layers", 10**7, "must be <= 100"),
    ("pattern", "rows", 1e300, "must be <= 100"),
    ("pattern", "columns", 60, "boxes, more than"),
    ("motion", "approach_height", 1e6, "must be <= 10"),
    ("gripper", "mass", 0.0, None),
    ("limits", "tool_speed_max", 1e-12, "limits.tool_speed_max.*must be >= 0.001"),   # (blamed on dt: a hunt)
    ("motion", "energy_weight", 1e300, "motion.energy_weight: must be <= 1000000.0"),   # (a SolverError after 18 s)
])
def test_absurd_cell_sizes_are_refused_before_any_work(tmp_path, table, key, value, message):
    doc = copy.deepcopy(BASE)
    doc.setdefault(table, {})[key] = value
    if key == "columns":
        doc["pattern"]["rows"] = 60
    f = tmp_path / "cell.toml"
    f.write_text(dump_toml(doc))
    t0 = time.perf_counter()
    if message is None:
        load_cell(f, check_reach=False)
    else:
        with pytest.raises(InputError, match=message):
            load_cell(f, check_reach=False)
    assert time.perf_counter() - t0 < 5


def test_a_urdf_name_too_long_for_the_file_system_names_the_key(tmp_path):
    """A 300-character `urdf` name was reported as a failure to write --out (a hunt)."""
    doc = copy.deepcopy(BASE)
    doc["cell"].pop("robot", None)
    doc["cell"]["urdf"] = "u" * 300 + ".urdf"
    f = tmp_path / "cell.toml"
    f.write_text(dump_toml(doc))
    with pytest.raises(InputError, match=r"cell.toml: cell.urdf: cannot use .*File name too long"):
        load_cell(f, check_reach=False)


@pytest.mark.parametrize("args, message", [(["--offsets", "1e9"], "--offsets: 1000000000.0 is outside [-1, 1]"),
                                           (["--masses", "nan"], "--masses: nan is outside"),
                                           (["--masses", ",".join(["1"] * 101)], "--masses: 101 values, more than 100")])
def test_payload_sweep_lists_are_checked_before_any_planning(tmp_path, capsys, args, message):
    """An offset a kilometre out was accepted and failed later naming neither it nor --offsets; 5000 masses ran
    11 minutes (a hunt)."""
    from toppra_app.cli import main
    assert main(["payload-sweep", *args, "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not (tmp_path / "bad").exists()


def test_massless_gripper_still_validates_its_size(tmp_path):
    doc = copy.deepcopy(BASE)
    doc["gripper"]["mass"] = 0.0
    doc["gripper"]["size"] = [-1.0, 0.1, 0.1]
    f = tmp_path / "cell.toml"
    f.write_text(dump_toml(doc))
    with pytest.raises(InputError, match="gripper.*size"):
        load_cell(f, check_reach=False)


def test_palletize_command_one_line_for_a_bad_cell(tmp_path, capsys):
    f = tmp_path / "cell.toml"
    f.write_bytes(b"\x00\x01")
    assert main(["palletize", str(f), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(f) in err and "Traceback" not in err


# ------------------------------------------------------------------------------ URDF files
URDF = """<?xml version="1.0"?>
<robot name="two">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="{com}" rpy="0 0 0"/><mass value="{mass}"/>
    <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="b"><inertial><mass value="1.0"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>
    </inertial></link>
  <joint name="j1" type="{jtype}"><parent link="{parent}"/><child link="a"/><origin xyz="{xyz}" rpy="{rpy}"/>
    <axis xyz="{axis}"/><limit lower="{lower}" upper="2" velocity="{velocity}" effort="{effort}"/>
    <dynamics damping="{damping}" friction="0.1"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" velocity="3" effort="40"/></joint>
</robot>
"""
NUMBERISH = st.one_of(st.sampled_from(["1", "0", "-1", "nan", "inf", "1e400", "abc", "", "1 2", "0x10", "1,5",
                                       "-1e-300"]), st.floats(allow_nan=True).map(repr), st.text(max_size=4))
TRIPLE = st.one_of(st.sampled_from(["0 0 1", "0 0 0", "1 2", "1 2 3 4", "a b c", "nan 0 1", "", "0 0 1e400"]),
                   st.lists(NUMBERISH, min_size=0, max_size=4).map(" ".join))


@SETTINGS
@given(mass=NUMBERISH, ixx=NUMBERISH, com=TRIPLE, jtype=st.sampled_from(["revolute", "continuous", "prismatic",
                                                                         "fixed", "floating", "bogus", ""]),
       parent=st.sampled_from(["base", "b", "a", "nowhere", ""]), xyz=TRIPLE, rpy=TRIPLE, axis=TRIPLE,
       lower=NUMBERISH, velocity=NUMBERISH, effort=NUMBERISH, damping=NUMBERISH)
def test_urdf_loads_or_names_the_element(tmp_path, **fields):
    from dynamics.urdf import from_urdf
    f = tmp_path / "robot.urdf"
    text = URDF.format(**{k: v.replace('"', "").replace("<", "").replace("&", "") for k, v in fields.items()})
    f.write_text(text)
    t0 = time.perf_counter()
    try:
        robot = from_urdf(str(f))
    except ValueError as exc:                    # ModelError: file and element in one line
        one_line(exc, str(f))
        return
    finally:
        assert time.perf_counter() - t0 < 5
    assert robot.n >= 1 and np.isfinite(robot.masses).all() and np.isfinite(robot.inertias).all()


@pytest.mark.parametrize("raw", [b"", b"\x00\x01", b"<robot", b"<notrobot/>", "<robot name='x'/>".encode("utf-16"),
                                 b"<?xml version='1.0'?><!DOCTYPE r [<!ENTITY a 'aaaa'><!ENTITY b '&a;&a;&a;'>]>"
                                 b"<robot name='x'>&b;</robot>"])
def test_urdf_files_that_are_not_urdf(tmp_path, raw):
    from dynamics.urdf import from_urdf
    f = tmp_path / "r.urdf"
    f.write_bytes(raw)
    with pytest.raises(ValueError) as info:
        from_urdf(str(f))
    one_line(info.value, str(f))
