"""Many samples in bounded memory (an audit): `coriolis_matrix`, `christoffel`, `christoffel_tree`,
`mass_matrix` and `path_coefficients` run over blocks of samples (`dynamics.blocks`) with the rows of the
whole batch bit for bit, and a result of more than `MAX_RESULT_BYTES` is refused before anything is computed
(10⁵ samples of 30 joints took 4.4 GB for `path_coefficients`' 72 MB, 10.7 GB for `coriolis_matrix`' 0.7 GB
and would have taken 60 GB for `christoffel`'s 21.6 GB)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import dynamics
import dynamics.blocks as blocks
from dynamics.christoffel_tree import christoffel_tree
from dynamics.coriolis_tree import coriolis_matrix_tree
from fixtures import binary_tree_robot, to_pinocchio
from dynamics.random_model import serial_chain_robot

CALLS = {
    "christoffel": lambda r, q, qd, qdd: dynamics.christoffel(r, q),
    "christoffel_tree": lambda r, q, qd, qdd: christoffel_tree(r, q),
    "christoffel_tree sparse": lambda r, q, qd, qdd: christoffel_tree(r, q, dense=False)[3:6],
    "coriolis_matrix": lambda r, q, qd, qdd: dynamics.coriolis_matrix(r, q, qd),
    "coriolis_matrix_tree full": lambda r, q, qd, qdd: coriolis_matrix_tree(r, q, qd, full=True),
    "coriolis_matrix_tree sparse": lambda r, q, qd, qdd: coriolis_matrix_tree(r, q, qd, dense=False).values,
    "mass_matrix": lambda r, q, qd, qdd: dynamics.mass_matrix(r, q),
    "path_coefficients": lambda r, q, qd, qdd: dynamics.path_coefficients(r, q, qd, qdd),
    "path_coefficients full": lambda r, q, qd, qdd: dynamics.path_coefficients(r, q, qd, qdd, method="full"),
}


def _states(robot, N, seed=0):
    return np.random.default_rng(seed).uniform(-1.5, 1.5, (3, N, robot.n))


@pytest.mark.parametrize("robot", [serial_chain_robot(9, 2, prismatic=0.3), binary_tree_robot(10, 3, prismatic=0.3)],
                         ids=["chain", "tree"])
@pytest.mark.parametrize("name", list(CALLS))
def test_blocks_of_samples_give_the_whole_batch_bit_for_bit(robot, name, monkeypatch):
    q, qd, qdd = _states(robot, 1000 + 37)
    whole = CALLS[name](robot, q, qd, qdd)
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 1)             # blocks of ALIGN samples, and a short last one
    parts = CALLS[name](robot, q, qd, qdd)
    assert type(parts) is type(whole)
    for a, b in zip(*((x,) if isinstance(x, np.ndarray) else x for x in (parts, whole))):
        assert a.shape[0] == 1037 and np.array_equal(a, b), name
    single = CALLS[name](robot, q[5], qd[5], qdd[5])            # one sample: its own shape (a batch of one: ~1 ulp)
    for a, b in zip(*((x,) if isinstance(x, np.ndarray) else x for x in (single, whole))):
        assert a.shape == b.shape[1:] and np.allclose(a, b[5], rtol=1e-13, atol=1e-13 * np.abs(b).max()), name


def test_blocked_coriolis_and_mass_matrices_are_pinocchios_at_the_seams(monkeypatch):
    pin = pytest.importorskip("pinocchio")
    robot = serial_chain_robot(8, 4, prismatic=0.25)
    q, qd, _ = _states(robot, 300, seed=1)
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 1)
    C, M = dynamics.coriolis_matrix(robot, q, qd), dynamics.mass_matrix(robot, q)
    model = to_pinocchio(robot)
    data = model.createData()
    for k in (0, blocks.ALIGN - 1, blocks.ALIGN, 2 * blocks.ALIGN + 1, 299):
        Cp = pin.computeCoriolisMatrix(model, data, q[k], qd[k])
        Mp = pin.crba(model, data, q[k])
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert np.abs(C[k] - Cp).max() <= 1e-12 * np.abs(Cp).max() and np.abs(M[k] - Mp).max() <= 1e-12 * np.abs(Mp).max()


@pytest.mark.parametrize("name, N, most", [("coriolis_matrix", 3000, 48), ("path_coefficients", 6000, 48),
                                           ("mass_matrix", 3000, 48)])
def test_many_samples_take_the_result_and_one_block(name, N, most):
    """30 joints: 107 kB a sample at the peak for coriolis_matrix (7.2 kB kept), 44 kB for path_coefficients
    (0.7 kB) and mass_matrix (7.2 kB): here 150–320 MB before, ~40 MB now."""
    robot = serial_chain_robot(30, 5)
    q, qd, qdd = _states(robot, N)
    CALLS[name](robot, q[:10], qd[:10], qdd[:10])               # (caches filled)
    tracemalloc.start()
    try:
        out = CALLS[name](robot, q, qd, qdd)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    kept = sum(x.nbytes for x in ((out,) if isinstance(out, np.ndarray) else out))
    assert peak - kept < most * 2**20, (peak / 2**20, kept / 2**20)


@pytest.mark.parametrize("name, floats", [("christoffel", 30 ** 3), ("christoffel_tree", 30 ** 3),
                                          ("coriolis_matrix", 30 ** 2), ("coriolis_matrix_tree full", 3 * 30 ** 2),
                                          ("mass_matrix", 30 ** 2)])
def test_a_result_too_large_is_refused_before_it_is_computed(name, floats, monkeypatch):
    robot = serial_chain_robot(30, 5)
    N = 400
    q, qd, qdd = _states(robot, N)
    monkeypatch.setattr(blocks, "MAX_RESULT_BYTES", 8 * N * floats - 1)
    tracemalloc.start()
    try:
        with pytest.raises(dynamics.ModelError, match=rf"^q: 400 samples give .* GiB of \w+ results \({floats} numbers "
                                                      r"a sample\), more than the .* GiB one call may return; pass fewer"):
            CALLS[name](robot, q, qd, qdd)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20
    monkeypatch.setattr(blocks, "MAX_RESULT_BYTES", 8 * N * floats)
    assert CALLS[name](robot, q, qd, qdd) is not None             # exactly at the bound: computed
