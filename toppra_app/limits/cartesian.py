"""Cartesian limits of a frame (default the tool frame), each reduced to one row per grid point in b = θ̇².

Along the path the origin p(θ) of a frame moves with v = J_v(q) q̇ = p′(θ) θ̇, p′ = J_v(q) q′ (the linear
rows of `dynamics.frame_jacobian`, base axes). Both limits below are of the form k(θ) b ≤ 1, i.e. rows
of the canonical form (see `constraints`) with A = C = 0, B = k, hi = 1 and no lower side, so the
optimiser treats them like the joint velocity row.

* `CartesianSpeedLimit(v_max)`: ‖v‖ ≤ v_max  ⇔  ‖p′‖² b ≤ v_max²                               (S)
  (e.g. 0.25 m/s near people, 1.7 m/s Panda's Cartesian limit).

* `CollaborativeEnergyLimit(E_max)`: the kinetic energy the robot can transfer in a collision along its
  direction of motion (ISO/TS 15066, Annex A: E = ½ μ v_rel²) stays below E_max. The robot's effective
  mass along the unit direction u of the frame's motion is (Khatib 1995; Chang & Khatib 2000, eq. 14)

      m_u = 1 / (uᵀ Λ_v⁻¹ u),    Λ_v⁻¹ = J_v M⁻¹ J_vᵀ  (the translational 3×3 block of Λ⁻¹)

  taken from `dynamics.operational_space_inertia_inverse` (the recursion's result before its final
  inversion, so it exists at kinematic singularities too). With u = p′/‖p′‖ the energy is

      E = ½ μ ‖v‖² = ½ μ ‖p′‖² b,   μ = m_u (rigid obstacle, the default) or
      μ = (1/m_u + 1/m_H)⁻¹ with `contact_mass` m_H (ISO/TS 15066 Table A.3: the effective mass of
      the exposed body region, e.g. 0.6 kg hand, 40 kg chest)                                    (E)

  which is linear in b: k = ½ μ ‖p′‖² / E_max. Note m_u ‖p′‖² = ‖p′‖⁴ / (p′ᵀ Λ_v⁻¹ p′) ≤ q′ᵀ M q′
  (Cauchy–Schwarz), so E never exceeds the robot's total kinetic energy. Where the frame does not move
  (p′ = 0) nothing can be transferred along a motion direction and the row is 0 ≤ 1 (inactive); since
  p′ lies in the range of J_v, p′ᵀ Λ_v⁻¹ p′ > 0 whenever p′ ≠ 0, so k is finite and continuous.

Between grid points (b linear in θ per interval, the path's p′ and Λ_v⁻¹ varying) each limit is
re-checked at the planner's sub-samples, and at the peak of the parabola through three neighbouring ones
(`verify.between_peaks`), by `check_time_law`, which the planner calls after every solve
for every limit that has it (kind ``tool_speed`` / ``collision_energy``), adds to `plan.worst`, and
refines like the joint limits (splitting intervals, then tightening via ``scales[kind][:, 0]``).

Payloads: Λ_v⁻¹ depends on the payload merged into the carrying body, and not affinely on its
inertial parameters, so the energy rows cannot use the planner's payload Parameters. The limit sets
``needs_merged_payload = True``; the planner then keeps no payload Parameters (as with
``payload_params=False``): every plan builds the rows from ``robot.with_payload(payload)`` — exact —
and a re-plan with another payload builds and compiles its problem (≈ 0.1–0.2 s). The speed limit is
purely kinematic and payload-independent.
"""

from __future__ import annotations

import numpy as np

import dynamics
from dynamics.model import ModelError

from .rows import INACTIVE, Limit, PathData, RowBlock
from ..checks import real
from ..errors import InputError
from ..verify import Worst, between_peaks, sub_sample_speeds
from ..errors import short_repr


SMALLEST = 1e-9    # m/s, J or kg: a smaller limit is refused (v_max = 1e-100 planned a motion of 1e-102 s: 1/v_max²
                   # overflowed; 1e-160 was silently ignored)


def _positive(value, field: str) -> float:
    """A finite number ≥ `SMALLEST`, or an `InputError` naming the field (text is not a number: as `sd_start`)."""
    v = real(value, field, 0.0, None, bounds="(]")
    if v < SMALLEST:
        raise InputError(f"{field}: {v:g} is below the smallest limit planned, {SMALLEST:g}")
    return v


def frame_velocity_direction(robot, q, dq, frame=None) -> np.ndarray:
    """p′ = J_v(q) q′ (…, 3): the frame origin's velocity per unit path speed (base axes)."""
    J = dynamics.frame_jacobian(robot, q, frame)
    return np.einsum("...ij,...j->...i", J[..., :3, :], dq)


def effective_mass_speed2(robot, q, dq, frame=None, contact_mass=None) -> tuple[np.ndarray, np.ndarray]:
    """(μ ‖p′‖², ‖p′‖²) at the samples q, q′: twice the transferable energy per unit b (eq. E).

    μ‖p′‖² = ‖p′‖⁴ / (p′ᵀ Λ_v⁻¹ p′) (rigid obstacle) or with the contact mass in series; 0 where p′ = 0."""
    p = frame_velocity_direction(robot, q, dq, frame)
    Linv = dynamics.operational_space_inertia_inverse(robot, q, frame)[..., :3, :3]
    s2 = np.einsum("...i,...i->...", p, p)
    den = np.einsum("...i,...ij,...j->...", p, Linv, p)            # p′ᵀ Λ_v⁻¹ p′ = ‖p′‖² / m_u
    moving = (s2 > 0) & (den > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu_s2 = np.where(moving, s2 * s2 / np.where(moving, den, 1.0), 0.0)       # m_u ‖p′‖²
        if contact_mass is not None:                                             # 1/μ = 1/m_u + 1/m_H
            mu_s2 = np.where(moving, mu_s2 * contact_mass / (contact_mass + np.where(moving, mu_s2 / s2, 0.0)),
                             0.0)
    return mu_s2, s2


class _FrameRowLimit(Limit):
    """A limit k(θ) θ̇² ≤ 1 on a frame: one B-only row per point, re-checked between grid points."""
    base_kind = "frame"
    headroom_checked = True
    needs_merged_payload = False

    def __init__(self, frame):
        if frame is not None and (not isinstance(frame, str) or not frame):
            raise InputError(f"frame: expected a frame name (or None for the tool frame), got {short_repr(frame)}")
        self.frame = frame
        self.kind = self.base_kind if frame is None else f"{self.base_kind}:{frame}"
        self._cache = {}

    # subclasses: the coefficient k = value(b = 1) / limit, and value → ratio
    def coefficient(self, robot, q, dq) -> np.ndarray:
        raise NotImplementedError

    def ratio_from_coefficient(self, k, b) -> np.ndarray:
        raise NotImplementedError

    def _k(self, robot, q, dq, key_obj) -> np.ndarray:
        """k at the samples, cached per (robot, sample array) object (the grid's or the sub-samples')."""
        key = (id(robot), id(key_obj))
        hit = self._cache.get(key)
        if hit is not None and hit[0] is robot and hit[1] is key_obj:
            return hit[2]
        try:
            robot.frame(self.frame)
        except ModelError as exc:
            raise InputError(f"{self.kind}: frame: {exc}") from None
        k = np.asarray(self.coefficient(robot, q, dq), dtype=float)
        if len(self._cache) >= 4:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = (robot, key_obj, k)
        return k

    def rows(self, data: PathData, *, b_ref=None, scales=None) -> RowBlock:
        P = data.size
        k = self._k(data.robot, data.q, data.dq, data.q)
        if scales is not None and self.kind in scales:
            s = np.asarray(scales[self.kind], dtype=float)
            s = s[:, 0] if s.ndim == 2 else np.broadcast_to(s, (P,))
            k = k / self.limit_scale(s)
        return RowBlock(self.kind, np.array([-1]), np.zeros((P, 1)), k[:, None], np.zeros((P, 1)),
                        np.full((P, 1), -INACTIVE), np.ones((P, 1)), np.zeros(1, bool), np.ones(1, bool),
                        uses_a=False)

    def limit_scale(self, s):
        """How a factor s ≤ 1 on the physical limit scales the row's B (speed: s², energy: s)."""
        return s

    def check_time_law(self, robot, sub, b, check, d=None) -> None:
        """Ratios value/limit at the planner's sub-samples of the exact time law (grid values b, and d
        where θ̈ is linear per interval), added to `check` (a `verify.LimitCheck`) as kind ``self.kind``,
        shape (N, 1), joint −1."""
        N, S1 = sub.theta.shape
        bs = sub_sample_speeds(sub, b, d)[0]                                            # (N, S+1)
        k = self._k(robot, sub.q, sub.dq, sub.q).reshape(N, S1)
        r = self.ratio_from_coefficient(k, bs)
        # the peak between sub-samples (the parabola through three of them), as for the joint limits: on
        # smooth tool speeds the sub-samples alone missed up to 0.05 % (a Panda plan 0.114 % over on 1 ms)
        r = np.maximum(r, between_peaks(r[..., None])[..., 0])
        check.ratios[self.kind] = r.max(axis=1)[:, None]
        if check.rho is not None:
            check.rho = np.maximum(check.rho, r)
        j, i = np.unravel_index(int(np.argmax(r)), r.shape)
        limit = self.limit_value
        check.worst[self.kind] = Worst(self.kind, float(r[j, i]), -1, float(sub.theta[j, i]), int(j),
                                       float(r[j, i] * limit), float(limit))

    def check_samples(self, robot, sample) -> Worst:
        """Worst value/limit on a sampled trajectory (t, q, q̇): evaluated from q̇ directly (no path),
        `interval` the sample index and `theta` its time."""
        k = np.asarray(self.coefficient(robot, sample.q, sample.qd), dtype=float)     # value at b = 1 with q′ := q̇
        r = self.ratio_from_coefficient(k, np.ones_like(k))
        i = int(np.argmax(r))
        return Worst(self.kind, float(r[i]), -1, float(sample.t[i]), i, float(r[i] * self.limit_value),
                     float(self.limit_value))


class CartesianSpeedLimit(_FrameRowLimit):
    """‖v‖ ≤ v_max for the origin of `frame` (default the tool frame): ‖p′‖² b / v_max² ≤ 1 (eq. S)."""
    base_kind = "tool_speed"

    def __init__(self, v_max: float, frame: str | None = None):
        self.v_max = _positive(v_max, "v_max")
        super().__init__(frame)

    @property
    def limit_value(self) -> float:
        return self.v_max

    def coefficient(self, robot, q, dq):
        p = frame_velocity_direction(robot, q, dq, self.frame)
        return np.einsum("...i,...i->...", p, p) / self.v_max / self.v_max     # (v_max² overflows above 1e154)

    def limit_scale(self, s):
        return np.asarray(s) ** 2

    def ratio_from_coefficient(self, k, b):
        return np.sqrt(np.maximum(k * b, 0.0))                # ‖v‖ / v_max

    def __repr__(self):
        return f"CartesianSpeedLimit(v_max={short_repr(self.v_max)}, frame={short_repr(self.frame)})"


class CollaborativeEnergyLimit(_FrameRowLimit):
    """½ μ ‖v‖² ≤ E_max: the kinetic energy the robot can transfer in a collision along the direction of
    motion of `frame`'s origin (default the tool frame), μ the effective mass m_u = 1/(uᵀ Λ_v⁻¹ u) along
    that direction (ISO/TS 15066-style; `contact_mass` puts the human body region's effective mass in
    series). Rows: ½ μ ‖p′‖² b / E_max ≤ 1 (eq. E); inactive where the frame does not move."""
    base_kind = "collision_energy"
    needs_merged_payload = True          # Λ_v⁻¹ depends on the payload, not affinely on its parameters

    def __init__(self, E_max: float, frame: str | None = None, contact_mass: float | None = None):
        self.E_max = _positive(E_max, "E_max")
        self.contact_mass = None if contact_mass is None else _positive(contact_mass, "contact_mass")
        super().__init__(frame)

    @property
    def limit_value(self) -> float:
        return self.E_max

    def coefficient(self, robot, q, dq):
        mu_s2, _ = effective_mass_speed2(robot, q, dq, self.frame, self.contact_mass)
        return 0.5 * mu_s2 / self.E_max

    def ratio_from_coefficient(self, k, b):
        return np.maximum(k * b, 0.0)                          # E / E_max

    def __repr__(self):
        return (f"CollaborativeEnergyLimit(E_max={short_repr(self.E_max)}, frame={short_repr(self.frame)}, "
                f"contact_mass={short_repr(self.contact_mass)})")


def cartesian_limits(robot, tool_speed_max=None, collision_energy_max=None, frame=None,
                     contact_mass=None) -> list[Limit]:
    """The limits for the planner's keyword options (validated with the options' names)."""
    if frame is not None:
        if not isinstance(frame, str):
            raise InputError(f"cartesian_frame: expected a frame name (or None for the tool frame), got {short_repr(frame)}")
        try:
            robot.frame(frame)
        except (ModelError, TypeError) as exc:
            raise InputError(f"cartesian_frame: {exc}") from None
    out = []
    if tool_speed_max is not None:
        out.append(CartesianSpeedLimit(_positive(tool_speed_max, "tool_speed_max"), frame))
    if collision_energy_max is not None:
        cm = None if contact_mass is None else _positive(contact_mass, "contact_mass")
        out.append(CollaborativeEnergyLimit(_positive(collision_energy_max, "collision_energy_max"), frame, cm))
    elif contact_mass is not None:
        raise InputError("contact_mass: only used with collision_energy_max")
    return out


def check_trajectory(robot, sample, limits) -> dict:
    """{kind: Worst} of every Cartesian limit in `limits` on a sampled trajectory (e.g. `plan.sample()`)."""
    return {lim.kind: lim.check_samples(robot, sample) for lim in limits if isinstance(lim, _FrameRowLimit)}
