"""A controller profile as a drive engineer gives it: hostile values are one line naming the field."""

from __future__ import annotations

import numpy as np
import pytest

from toppra_app import ControllerProfile
from toppra_app.errors import InputError


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
