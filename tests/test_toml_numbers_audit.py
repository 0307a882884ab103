"""Numbers in TOML inputs (the parsers audit): a float literal beyond the largest float was read as inf — "no
limit", silently — and an integer of hundreds of digits ended `toppra-app plan --controller FILE` in a traceback."""

from __future__ import annotations

import pytest

from scenarios.palletizing import DEFAULT_CELL, load_cell
from toppra_app.cli import main
from toppra_app.errors import InputError

W7 = "0,0,0,0,0,0,0\n0.1,0,0,0,0,0,0\n"
HUGE_INT = "1" * 400


def _plan(tmp_path, capsys, toml):
    (tmp_path / "wp.csv").write_text(W7)
    (tmp_path / "ctl.toml").write_text(toml)
    code = main(["plan", str(tmp_path / "wp.csv"), "--controller", str(tmp_path / "ctl.toml"),
                 "--out", str(tmp_path / "out"), "--no-plots"])
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize("literal", ["1e309", "-1.5e400", "1_0e999"])
def test_a_float_beyond_the_largest_is_refused_naming_the_line(tmp_path, capsys, literal):
    """jerk_max = 1e309 planned without a jerk limit (tomllib reads it as inf, which means "no limit")."""
    code, err = _plan(tmp_path, capsys, f"# profile\n[controller]\njerk_max = {literal}\n")
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "out").exists()
    assert f"ctl.toml: line 3: the number {literal} is beyond the largest float" in err


def test_inf_written_out_still_means_no_limit(tmp_path):
    from toppra_app.textfile import read_toml
    (tmp_path / "c.toml").write_text("a = inf\nb = -inf\nc = 1.7e308\nd = +inf\n")
    assert read_toml(tmp_path / "c.toml", 1000, "x") == {"a": float("inf"), "b": float("-inf"), "c": 1.7e308,
                                                          "d": float("inf")}


@pytest.mark.parametrize("key", ["jerk_max", "torque_headroom", "torque_rate_max"])
def test_an_integer_of_hundreds_of_digits_is_one_line_naming_the_field(tmp_path, capsys, key):
    """float(10**400) raises OverflowError, not ValueError: the traceback of controller.py reached the terminal."""
    code, err = _plan(tmp_path, capsys, f"[controller]\n{key} = {HUGE_INT}\n")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err and f"controller.{key}: " in err


def test_a_cell_file_with_a_float_beyond_the_largest_names_the_line(tmp_path):
    text = DEFAULT_CELL.read_text().replace("# jerk_max = 5000.0", "jerk_max = 5e5000").replace("# [limits]", "[limits]")
    path = tmp_path / "cell.toml"
    path.write_text(text)
    line = text[:text.index("5e5000")].count("\n") + 1
    with pytest.raises(InputError, match=rf"cell\.toml: line {line}: the number 5e5000 is beyond the largest float"):
        load_cell(path, check_reach=False)


def test_a_cell_number_of_hundreds_of_digits_is_one_line_naming_the_field(tmp_path):
    """gripper mass = 111…1 (400 digits) ended load_cell in math.isfinite's OverflowError."""
    path = tmp_path / "cell.toml"
    path.write_text(DEFAULT_CELL.read_text().replace("mass = 0.6", f"mass = {HUGE_INT}", 1))
    with pytest.raises(InputError, match=r"cell\.toml: gripper\.mass: must be a finite number, got 1{20}.*…$"):
        load_cell(path, check_reach=False)
