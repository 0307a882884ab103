"""Reading robot descriptions as they are found in the wild (`dynamics.io.urdf.from_urdf`): ``.xacro`` files
expanded by the `xacro` package (its ROS packages found by `dynamics.io.packages`), and the corrections and assumptions a non-strict load makes — a tiny
negative inertia moment clipped, an inertia no mass distribution can have kept as given (as Pinocchio
does), a limit of 0 read as none — each reported once in a `URDFWarning`."""

from __future__ import annotations

import os
import threading
import xml.etree.ElementTree as ET
from contextlib import contextmanager

import numpy as np

from ..checks import ModelError, read_at_most, stacklevel_outside
from ..inertial_parameters import check_inertial
from .packages import find_in_package, package_roots


MAX_URDF_BYTES = 64 << 20          # the largest example-robot-data URDF is a few MB


def read_urdf_root(path: str, xacro_args: dict | None = None, package_dirs=()):
    """The XML root of a URDF file, or of a ``.xacro`` file expanded by the `xacro` package (``$(find NAME)`` and
    ``package://NAME/…`` includes found through `package_dirs`, `dynamics.io.packages`); one-line `ModelError`s
    naming the file."""
    try:
        if os.fsdecode(path).lower().endswith(".xacro"):          # (as --robot reads the name: any case)
            return ET.fromstring(_expand_xacro(path, xacro_args, package_dirs))
        with open(path, "rb") as fh:   # whole: expat < 2.6 fed in 64 kB pieces (ET.parse) rescans a long token at each
            data = read_at_most(fh, os.fstat(fh.fileno()).st_size, MAX_URDF_BYTES)   # piece (40 MB attribute: 20 s)
        if len(data) > MAX_URDF_BYTES:
            raise ModelError(f"{path}: larger than {MAX_URDF_BYTES >> 20} MiB; expected a URDF file")
        return ET.fromstring(data)
    except FileNotFoundError:
        raise ModelError(f"{path}: file not found") from None
    except ET.ParseError as exc:
        raise ModelError(f"{path}: not valid XML: {exc}") from None
    except OSError as exc:
        raise ModelError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _expand_xacro(path: str, args: dict | None, package_dirs=()) -> str:
    try:
        import xacro
    except ImportError:
        raise ModelError(f"{path}: a .xacro file needs the xacro package: pip install xacro (or expand it with "
                         f"`xacro {os.path.basename(path)} > robot.urdf`)") from None
    if not os.path.isfile(path):
        raise FileNotFoundError(path)
    mappings = _SeenArgs({str(k): str(v) for k, v in (args or {}).items()})
    try:
        with _XACRO_LOCK, _package_lookups(xacro, list(package_dirs), path):
            text = xacro.process_file(path, mappings=mappings).toxml()
    except Exception as exc:                                    # noqa: BLE001 - xacro raises many kinds
        inner = exc
        while getattr(inner, "exc", None) is not None and not isinstance(inner, PackageNotFound):
            inner = inner.exc
        exc = inner if isinstance(inner, PackageNotFound) else exc    # (xacro wraps ours, repeating its message)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ModelError(f"{path}: xacro could not expand it: {first}") from None
    unknown = sorted(set(mappings) - mappings.seen)
    if unknown:
        known = sorted(mappings.seen)
        raise ModelError(f"{path}: xacro argument '{unknown[0]}' is neither declared (<xacro:arg>) nor used by the file "
                         f"or its includes, so it would change nothing (its arguments: "
                         f"{', '.join(known) if known else 'none'})", argument="xacro_args")
    return text


class _SeenArgs(dict):
    """xacro's table of arguments (its `mappings`, which it reads in place), noting each name the file looks up:
    an <xacro:arg> declaration asks whether it is given, $(arg NAME), xacro.arg() and $(eval) read it. A name
    given but never looked up is misspelt or not the file's: xacro ignores it, and the default was planned."""

    def __init__(self, given):
        super().__init__(given)
        self.seen = set()

    def __contains__(self, name):
        self.seen.add(name)
        return super().__contains__(name)

    def __getitem__(self, name):
        self.seen.add(name)
        return super().__getitem__(name)

    def get(self, name, default=None):
        self.seen.add(name)
        return super().get(name, default)


class PackageNotFound(LookupError):
    """A ``$(find NAME)`` or ``package://NAME/…`` include of a xacro file that `package_dirs` does not hold."""


_XACRO_LOCK = threading.Lock()      # xacro keeps its file stack in module globals, and we swap two of its functions


@contextmanager
def _package_lookups(xacro, dirs: list[str], path: str):
    """xacro with ``$(find NAME)`` and ``<xacro:include filename="package://NAME/…">`` resolved while the block
    runs: in `dirs` (package_dirs), then by ROS's ament index where ROS 2 is installed (xacro's own lookup),
    then in ``ROS_PACKAGE_PATH`` and the file's ancestors (`dynamics.io.packages`). xacro has no hook for
    either: its ``$(find)`` asks `ament_index_python` only (absent without ROS: every description using it
    failed), and it joins a ``package://`` include to the including file's directory (a path that never exists)."""
    from xacro import substitution_args as subst
    saved = subst._eval_find, subst._eval_dict.get("find"), xacro.abs_filename_spec
    later = package_roots([], path)

    def package(name):
        """The package's folder, or None."""
        found = find_in_package(name, "", dirs, directory=True)
        if found is None:
            try:
                found = saved[0](name)                    # ROS 2's ament index (ImportError without ROS)
            except Exception:                             # noqa: BLE001 - not installed, or not known there
                found = None
        return found or find_in_package(name, "", later, directory=True)

    def find(name):
        found = package(str(name))
        if found is None:
            raise PackageNotFound(f"$(find {name}): package '{name}' not found (give its parent directory in "
                                  f"package_dirs, or set ROS_PACKAGE_PATH or AMENT_PREFIX_PATH)")
        return found

    def include(spec):
        if not str(spec).startswith("package://"):
            return saved[2](spec)
        name, _, rest = str(spec)[len("package://"):].partition("/")
        where = package(name)
        if where is None or not os.path.isfile(os.path.join(where, rest)):
            raise PackageNotFound(f"include '{spec}': " + (
                f"no file '{rest}' in package '{name}' ({where})" if where else
                f"package '{name}' not found (give its parent directory in package_dirs, or set ROS_PACKAGE_PATH or AMENT_PREFIX_PATH)"))
        return os.path.join(where, rest)

    subst._eval_find, subst._eval_dict["find"], xacro.abs_filename_spec = find, find, include
    try:
        yield
    finally:
        subst._eval_find, xacro.abs_filename_spec = saved[0], saved[2]
        if saved[1] is None:
            subst._eval_dict.pop("find", None)
        else:
            subst._eval_dict["find"] = saved[1]


class URDFWarning(UserWarning):
    """A URDF was loaded with a correction or an assumption (named in the message); strict=True refuses it."""


CLIP_TOL = 1e-6       # a negative principal moment up to this share of the largest, or up to
CLIP_ABS = 1e-6       # this many kg·m² (a 10 g body 1 cm across), is exporter rounding or a negligible body


def lenient_inertia(where: str, lname: str, mass: float, I: np.ndarray, strict: bool, notes: dict) -> np.ndarray:
    """The link's inertia as checked by `check_inertial`, or (not strict) clipped / accepted as noted."""
    try:
        check_inertial(where, mass, I)
        return I
    except ModelError:
        if strict or not (np.isfinite(mass) and np.isfinite(I).all() and mass >= 0):
            raise                                          # not numbers, or negative mass: never corrected
    S = 0.5 * (I + I.T)
    ev, V = np.linalg.eigh(S)
    top = max(float(np.abs(ev).max()), 1e-300)
    if mass >= 0 and np.isfinite(S).all() and ev[0] < 0 and -ev[0] <= max(CLIP_TOL * top, CLIP_ABS):
        S = (V * np.maximum(ev, 0.0)) @ V.T
        notes["clipped"].append(f"{lname} ({ev[0]:.3g} kg·m² → 0)")
    check_inertial(where, mass, S, realisable=False)           # what the algorithms need, else refused
    try:
        check_inertial(where, mass, S)
    except ModelError:
        notes["unrealisable"].append(lname)
    return S


def warn_corrections(path: str, notes: dict) -> None:
    import warnings
    said = []
    if notes["clipped"]:
        said.append("negative principal moments clipped to 0 at link(s) " + ", ".join(notes["clipped"]))
    if notes["unrealisable"]:
        said.append("inertia no mass distribution can have (triangle inequality, or inertia without mass) kept "
                    "as given at link(s) " + ", ".join(notes["unrealisable"]))
    if notes["unlimited"]:
        said.append("limit 0 read as no limit for " + ", ".join(notes["unlimited"]))
    if said:
        warnings.warn(f"{path}: " + "; ".join(said) + " (from_urdf(..., strict=True) refuses it)", URDFWarning,
                      stacklevel=stacklevel_outside())
