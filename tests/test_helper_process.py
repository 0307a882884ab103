"""The palletizing run's second process (`scenarios.helper_process.HelperProcess`): what `run` gives back
crosses the process pool as bytes, unpickled by the caller (`show`) in its own thread.

The pool's management thread unpickles every result it receives. The cell and its IK arrive while the
first process is still importing the planner, and unpickling them imports `dynamics` classes: two threads
importing at once can meet a module half-initialised — "cannot import name 'IKError' from partially
initialized module 'dynamics.inverse_kinematics'" ended the demo once in ten cold runs."""

from __future__ import annotations

import math
import warnings

import pytest

from scenarios.helper_process import HelperProcess


def test_results_cross_as_bytes_and_the_caller_unpickles_them_with_their_warnings():
    helper = HelperProcess()
    try:
        raw = helper.run(math.hypot, 3.0, 4.0).result(timeout=120)
        assert isinstance(raw, bytes)                 # nothing the pool's own thread would import to unpickle
        assert helper.show(raw) == 5.0
        with pytest.warns(UserWarning, match="careful"):
            assert helper.show(helper.run(warnings.warn, "careful").result(timeout=120)) is None
    finally:
        helper.close()
