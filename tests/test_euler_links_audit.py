"""Gonçalves et al.'s Euler-angle models as a kinematics user writes them (audit): the link fields are checked
when the model is built."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics.euler_zxz import EulerLink, from_euler_zxz
from dynamics.model import ModelError


@pytest.mark.parametrize("field, link, message", [
    ("euler", dict(euler=(0.1, 0.2)), "euler: expected shape (3,), got shape (2,)"),
    ("euler", dict(euler=(np.nan, 0, 0)), "euler: values must be finite numbers"),
    ("gains", dict(gains=(0, 1)), "gains: expected shape (3,), got shape (2,)"),
    ("gains", dict(gains="001"), "gains: expected numbers of shape (3,), got '001'"),
    ("point", dict(points={"E": (1.0, 2.0)}), "point 'E': expected shape (3,), got shape (2,)"),
    ("point", dict(points={"E": (1.0, 2.0, np.nan)}), "point 'E': values must be finite numbers"),
    ("slide", dict(slide=(0.0, 1.0), gains=(0, 0, 0)), "slide: expected shape (3,), got shape (2,)"),
])
def test_bad_link_fields_are_one_line_naming_model_link_and_field(field, link, message):
    """Before: numpy's broadcast or reshape errors naming no link (a wrong number of angles, gains, point or slide
    coordinates), a NaN point drawn as NaN, and gains="001" read character by character as (0, 0, 1)."""
    base = EulerLink("base", points={"D": (0, 0, 1)})
    kw = dict(joint="j", gains=(0, 0, 1))
    kw.update(link)
    with pytest.raises(ModelError) as err:
        from_euler_zxz("m", [base, EulerLink("arm", "base", "D", **kw)])
    text = str(err.value)
    assert text == f"model 'm', link 'arm': {message}" and "\n" not in text
