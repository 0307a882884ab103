"""Many samples in bounded memory: the batched algorithms run over blocks of samples, and a result larger
than `MAX_RESULT_BYTES` is refused before anything is computed.

The algorithms hold work arrays far larger than their results — for 30 joints `coriolis_matrix` 107 kB a
sample for a 7.2 kB result, `path_coefficients` 44 kB for 0.7 kB, `christoffel` 0.6 MB for 0.2 MB — so 10⁵
samples took 4–60 GB at once. Every sample is computed on its own (the sums run over joints, never over
samples), and blocks hold a multiple of `ALIGN` samples, so a block's rows are bit for bit the rows of the
whole batch (the planner's plans are unchanged).
"""

from __future__ import annotations

import numpy as np

from .checks import ModelError

MAX_RESULT_BYTES = 2 ** 30      # documented bound (docs/safety.md): the arrays one call returns
BLOCK_BYTES = 2 ** 25           # the work arrays of one block of samples, about
ALIGN = 64                      # samples a block holds a multiple of: numpy's and BLAS's SIMD loops treat
                                # a sample by its place modulo their width, so the rows are then bit for bit
                                # those of the whole batch (blocks of 997 samples differed by an ulp)


def check_result(what: str, N: int, floats: int) -> None:
    """`ModelError` naming `what` if N samples of `floats` float64 values each exceed `MAX_RESULT_BYTES`."""
    nbytes = 8.0 * N * floats
    if nbytes > MAX_RESULT_BYTES:
        raise ModelError(f"q: {N} samples give {nbytes / 2**30:.3g} GiB of {what} results ({floats} numbers a "
                         f"sample), more than the {MAX_RESULT_BYTES / 2**30:.3g} GiB one call may return; pass "
                         f"fewer samples at a time")


def in_blocks(fn, work: float, *batches):
    """fn(*batches) (arrays of N samples along axis 0) computed for as many samples at a time as take about
    `BLOCK_BYTES` at `work` bytes a sample; fn returns an array or a tuple (a NamedTuple too) of arrays of N
    samples along axis 0, put together here."""
    N = batches[0].shape[0]
    size = max(ALIGN, int(BLOCK_BYTES // max(work, 1.0)) // ALIGN * ALIGN)
    if N <= size:
        return fn(*batches)
    out = None
    for a in range(0, N, size):
        part = fn(*(x[a:a + size] for x in batches))
        parts = part if isinstance(part, tuple) else (part,)
        if out is None:
            out = [np.empty((N,) + x.shape[1:], dtype=x.dtype) for x in parts]
        for whole, x in zip(out, parts):
            whole[a:a + size] = x
    if not isinstance(part, tuple):
        return out[0]
    return type(part)(*out) if hasattr(part, "_fields") else tuple(out)
