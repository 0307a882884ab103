"""pytest configuration: the hypothesis profile and the session fixtures (example-robot-data URDFs).

The shared helpers and data are in `fixtures.py`; they are re-exported here for tests that still write
``from conftest import …``."""

from __future__ import annotations

import os

import pytest

from fixtures import (PANDA_FINGERS, PinReference, assert_rel, erd_path, make_random_robot,  # noqa: F401
                      random_inertia, random_rotation, random_states, rel_err, st, to_pinocchio)

if st is not None:
    from fixtures import random_robots  # noqa: F401

try:
    from hypothesis import settings as _hyp_settings
    # CI (CI=true) runs a fixed set of examples and keeps no example database: a green run is
    # reproducible; locally every run explores new examples and replays earlier failures.
    _hyp_settings.register_profile("ci", derandomize=True, database=None)
    if os.environ.get("CI"):
        _hyp_settings.load_profile("ci")
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    pass


# ------------------------------------------------------------------------------ example-robot-data
@pytest.fixture(scope="session")
def panda_urdf():
    p = erd_path("robots/panda_description/urdf/panda.urdf")
    if p is None:
        pytest.skip("example-robot-data panda.urdf not installed")
    return p


@pytest.fixture(scope="session")
def ur5_urdf():
    p = erd_path("robots/ur_description/urdf/ur5_robot.urdf")
    if p is None:
        pytest.skip("example-robot-data ur5_robot.urdf not installed")
    return p

