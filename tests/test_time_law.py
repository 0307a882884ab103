"""The exact time law with θ̈ linear and continuous per interval (`TimeLaw(theta, b, d)`): interval times
against adaptive quadrature, θ(t) against its inverse t(θ), derivatives against finite differences, the
constant law unchanged when d = 0, and the closed form's limit A → 0."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.integrate import quad

from toppra_app.trajectory import TimeLaw, elapsed


def random_law(seed: int, rest_start: bool, rest_end: bool):
    """A positive law with continuous θ̈: node accelerations, b from b_{j+1} = b_j + Δ_j (a_j + a_{j+1})."""
    rng = np.random.default_rng(seed)
    N = int(rng.integers(2, 9))
    th = np.cumsum(np.r_[0.0, rng.uniform(0.05, 1.0, N)])
    dth = np.diff(th)
    for _ in range(200):
        a = rng.normal(0.0, 1.0, N + 1)
        b = np.empty(N + 1)
        b[0] = 0.0 if rest_start else rng.uniform(0.2, 2.0)
        if rest_start:
            a[0] = abs(a[0]) + 0.1
        for j in range(N):
            b[j + 1] = b[j] + dth[j] * (a[j] + a[j + 1])
        if rest_end:                         # bring the last node to rest with a_N chosen to reach 0
            a[N] = -b[N - 1] / dth[N - 1] - a[N - 1]
            b[N] = 0.0
            if a[N] >= 0:
                continue
        d = np.diff(a)
        u = np.linspace(0.0, 1.0, 801)[1:-1]
        inner = (1 - u) * b[:-1, None] + u * b[1:, None] - (d * dth)[:, None] * u * (1 - u)
        if inner.min() > 1e-6 and (b[1:-1] > 1e-6).all():
            return th, b, d, a
    pytest.skip("no positive law drawn")


def reference_time(b0, b1, d, dth, with_error: bool = False):
    """∫ dθ/√b over one interval by adaptive quadrature, with u = v² at an end at rest (and, `with_error`,
    quadpack's estimate of its own absolute error)."""
    C, B, A = b0, (b1 - b0) / dth - d, d / dth
    Q = lambda v: max(C + B * v + A * v * v, 1e-300)                              # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # (a near-stop: the error estimate says how far to trust it)
        if b0 == 0.0:
            out = quad(lambda w: 2.0 * w / np.sqrt(Q(w * w)), 0.0, np.sqrt(dth), epsabs=0, epsrel=1e-13, limit=200)
        elif b1 == 0.0:
            out = quad(lambda w: 2.0 * w / np.sqrt(Q(dth - w * w)), 0.0, np.sqrt(dth), epsabs=0, epsrel=1e-13,
                       limit=200)
        else:
            out = quad(lambda v: 1.0 / np.sqrt(Q(v)), 0.0, dth, epsabs=0, epsrel=1e-13, limit=200)
    return out if with_error else out[0]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.booleans(), st.booleans())
@example(679, False, False)
@example(2704, True, True)
def test_interval_times_equal_quadrature(seed, rest_start, rest_end):
    th, b, d, _ = random_law(seed, rest_start, rest_end)
    law = TimeLaw(th, b, d)
    for j in range(d.size):
        ref, err = reference_time(b[j], b[j + 1], d[j], th[j + 1] - th[j], with_error=True)
        # (where θ̇² dips to ~1e-6 inside an interval the two agree to ~5e-11: hypothesis drew seed 679; where it
        # comes to rest only just, the quadrature itself is uncertain to ~1e-9 and says so: seed 2704)
        assert law.dt[j] == pytest.approx(ref, rel=max(1e-10, 10.0 * err / ref))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.booleans(), st.booleans())
def test_theta_of_t_inverts_t_of_theta_and_derivatives_agree(seed, rest_start, rest_end):
    th, b, d, a = random_law(seed, rest_start, rest_end)
    law = TimeLaw(th, b, d)
    t = np.linspace(0.0, law.duration, 301)
    s, sd, sdd = law(t)
    assert np.all(np.diff(s) >= 0) and s[0] == th[0] and s[-1] == pytest.approx(th[-1], abs=1e-12)
    sd2, sdd2, t2 = law.at_theta(s)
    assert np.allclose(t2, t, rtol=0, atol=1e-12 * law.duration)
    assert np.allclose(sd2, sd, rtol=1e-9, atol=1e-12 * sd.max())
    # θ̇ = dθ/dt and θ̈ = dθ̇/dt by central differences inside the motion
    h = 1e-6 * law.duration
    tm = t[5:-5]
    sp, sdp, _ = law(tm + h)
    sm, sdm, _ = law(tm - h)
    _, sd_m, sdd_m = law(tm)
    assert np.allclose((sp - sm) / (2 * h), sd_m, rtol=1e-5, atol=1e-6 * sd.max())
    assert np.allclose((sdp - sdm) / (2 * h), sdd_m, rtol=1e-4, atol=1e-5 * np.abs(a).max())
    # θ̈ is continuous at the grid points: the node values
    assert np.allclose(law.sdd_grid, a, atol=1e-12 * np.abs(a).max())


def test_constant_law_is_unchanged_when_d_is_zero():
    rng = np.random.default_rng(3)
    th = np.linspace(0.0, 2.0, 12)
    b = np.r_[0.0, rng.uniform(0.1, 1.0, 10), 0.0]
    plain, zero = TimeLaw(th, b), TimeLaw(th, b, np.zeros(11))
    t = np.linspace(0.0, plain.duration, 77)
    assert not zero.linear and np.array_equal(plain.dt, zero.dt)
    assert all(np.array_equal(x, y) for x, y in zip(plain(t), zero(t)))
    assert all(np.array_equal(x, y) for x, y in zip(plain.at_theta(th), zero.at_theta(th)))


@pytest.mark.parametrize("A", [1e-2, 1e-6, 1e-12, 1e-300, -1e-300, -1e-12, -1e-6, -1e-2])
def test_closed_form_tends_to_the_linear_one(A):
    C, B, x = 0.5, 0.3, 1.0
    T0 = elapsed(C, B, 0.0, x)
    T = elapsed(C, B, A, x)
    # d/dA of the time at A = 0 is −∫ v²/(2 Q^{3/2}): the change is first order in A, with no cancellation
    slope = -quad(lambda v: v * v / (2.0 * (C + B * v) ** 1.5), 0.0, x, epsabs=0, epsrel=1e-12)[0]
    assert T == pytest.approx(T0 + slope * A, rel=1e-9, abs=abs(A) * 1e-2 + 1e-15)


def test_a_rest_end_with_zero_acceleration_never_starts():
    """b = A v² from rest (θ̈(θ_0) = 0): the motion never starts (infinite time), reported as a stop."""
    assert elapsed(0.0, 0.0, 1.0, 0.5) == np.inf
    with pytest.raises(ValueError, match="speed is zero"):
        TimeLaw([0.0, 1.0], [0.0, 1.0], [2.0])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**31 - 1), st.booleans())
def test_speed_cap_rows_are_the_law_inside_the_interval(N, seed, linear):
    """`stations.with_speed_caps`: row q of interval j, applied to (β_j, β_{j+1}, δ_j), is θ̇² of the time
    law at the fraction u_q of the interval (`trajectory.inside`, independent of the packing) divided by
    the row's scale, and its bound the cap divided by the same scale; caps that are off get `UNUSED`. With
    θ̈ linear one more row per interval bounds the bulge of θ̇² above its chord between two neighbouring
    caps (the largest, over a fine sampling of the law, is that row's value × its scale)."""
    from toppra_app.socp import stations
    from toppra_app.socp.problem import UNUSED
    from toppra_app.trajectory import inside
    rng = np.random.default_rng(seed)
    theta = np.concatenate([[0.0], np.cumsum(rng.uniform(0.1, 1.0, N))])
    u = np.array([0.125, 0.25, 0.375, 0.625, 0.75, 0.875])
    cap = rng.uniform(0.5, 2.0, (N, u.size))
    cap[rng.random((N, u.size)) < 0.3] = np.inf
    values = {k: np.zeros(N * 2) for k in ("u", "w", "gl", "gr", "h")} | ({"v": np.zeros(N * 2)} if linear else {})
    bulge = rng.uniform(0.01, 0.1, N)
    out = stations.with_speed_caps(values, (u, cap, bulge), theta, linear)
    R = 2 + u.size + (1 if linear else 0)
    beta, delta = rng.uniform(0, 2, N + 1), (rng.normal(size=N) if linear else np.zeros(N))
    dsig = np.diff(theta) / theta[-1]
    for j in range(N):
        rows = slice(j * R + 2, j * R + 2 + u.size)
        lhs = out["u"][rows] * beta[j] + out["w"][rows] * beta[j + 1] + \
            (out["v"][rows] * delta[j] if linear else 0.0)
        b_law = (1 - u) * beta[j] + u * beta[j + 1] - delta[j] * dsig[j] * u * (1 - u)
        scale = out["u"][rows] / (1 - u)                    # 1 / the row's scale
        on = np.isfinite(cap[j])
        assert np.allclose(lhs[on], (b_law * scale)[on], rtol=1e-12, atol=1e-12)
        if (b_law >= 0).all():
            assert np.allclose(b_law, inside(beta[j], beta[j + 1], 0.0, delta[j], dsig[j], u)[0], atol=1e-12)
        assert np.allclose(out["h"][rows][on], cap[j][on] * scale[on], rtol=1e-12)
        assert (out["h"][rows][~on] >= UNUSED).all()
        assert np.all(out["gl"][rows] == 0) and np.all(out["gr"][rows] == 0)
        if linear:
            k = (j + 1) * R - 1                             # the bulge row: v δ_j ≤ h
            assert out["u"][k] == out["w"][k] == out["gl"][k] == out["gr"][k] == 0.0
            if not on.any():
                assert out["h"][k] >= UNUSED
                continue
            h = 0.125                                       # the caps' spacing
            x = np.linspace(0.0, h, 101)
            bump = -delta[j] * dsig[j] * x * (h - x)        # the law above the chord of a cap segment
            scale = h * h / 4.0                             # (the row: −ε_j ≤ 4 bulge_j / h²)
            assert out["v"][k] < 0 and np.isclose(max(bump.max(), 0.0) if delta[j] < 0 else 0.0,
                                                    max(out["v"][k] * delta[j] * scale, 0.0), rtol=1e-6, atol=1e-12)
            assert np.isclose(out["h"][k] * scale, bulge[j], rtol=1e-12)
