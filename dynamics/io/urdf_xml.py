"""Attribute parsing of URDF XML elements with one-line errors that name the file and the element
(shared by the model reader `dynamics.io.urdf` and the collision reader `dynamics.io.urdf_collision`)."""

from __future__ import annotations

import functools
import math
import re

import numpy as np

from ..checks import ModelError, plain_number, short_repr
from ..spatial import homogeneous, rpy_matrix

__all__ = ["Reader", "one_line", "one_line_errors"]


class Reader:
    """Attribute parsing with error messages that name the file and the element."""

    def __init__(self, path: str):
        self.path = path

    def error(self, where: str, what: str) -> ModelError:
        return ModelError(one_line(f"{self.path}: {where}: {what}"))

    def attr(self, elem, key: str, where: str, default=None, required: bool = True):
        value = elem.get(key)
        if value is None:
            if required and default is None:
                raise self.error(where, f"<{elem.tag}> is missing the attribute '{key}'")
            return default
        return value

    def name(self, elem, where: str) -> str:
        """The ``name`` attribute of a <robot>, <link> or <joint>: one line of printable text. A name with a
        newline, tab, carriage return (``&#10;``, ``&#9;``, ``&#13;``) or a right-to-left override split or
        garbled every one-line message and terminal line naming the joint, and the report's tables."""
        value = self.attr(elem, "name", where)
        if not value.isprintable():
            raise ModelError(f"{self.path}: <{elem.tag} name={short_repr(value)}>: a name must be one line of printable text")
        return value

    def number(self, elem, key: str, where: str, default: float | None = None) -> float:
        raw = self.attr(elem, key, where, default=None, required=default is None)
        if raw is None:
            return float(default)
        value = _number(raw)
        if value is None:
            raise self.error(where, f"<{elem.tag} {key}=\"{raw}\">: not a number")
        return value

    def vector(self, elem, key: str, where: str, default) -> np.ndarray:
        raw = elem.get(key)
        if raw is None:
            return np.array(default, dtype=float)
        parts = raw.split(maxsplit=3)          # (a fourth is one too many: a 60 MB value was split into 20 million)
        values = [_number(p) for p in parts[:3]]
        if None in values:
            raise self.error(where, f"<{elem.tag} {key}=\"{raw}\">: not a list of numbers")
        if len(parts) != 3 or not np.isfinite(values).all():
            raise self.error(where, f"<{elem.tag} {key}=\"{raw}\">: expected 3 finite numbers")
        return np.array(values)

    def origin(self, parent, where: str) -> np.ndarray:
        el = parent.find("origin")
        if el is None:
            return np.eye(4)
        xyz = self.vector(el, "xyz", where, (0.0, 0.0, 0.0))
        rpy = self.vector(el, "rpy", where, (0.0, 0.0, 0.0))
        return homogeneous(rpy_matrix(*rpy), xyz)

    def child(self, elem, tag: str, where: str):
        el = elem.find(tag)
        if el is None:
            raise self.error(where, f"missing <{tag}>")
        return el


def _number(text: str) -> float | None:
    """A plain decimal number (`checks.plain_number`, ±inf written out allowed), or None. float() alone read
    ``velocity="1_0"`` as 10 and other spellings C++ URDF parsers refuse, and ``1e400`` as inf — a limit
    silently gone; NaN is no number either."""
    text = text.strip()
    value = plain_number(text, inf=True)
    return value if value is None or math.isfinite(value) or text.lower().lstrip("+-") == "inf" else None


_QUOTED = re.compile(r'"([^"]{80,})"|\'([^\']{80,})\'')
MAX_MESSAGE = 1000                  # characters; messages up to 300 that are printable are left as they are


def one_line(text: str) -> str:
    """A message as one bounded line: the values and names it quotes from the file shortened to 80 characters,
    what is not printable escaped (``\\n``). A 2 MB attribute was quoted whole, and a name holding ``&#10;`` broke
    the message over lines."""
    if len(text) <= 300 and text.isprintable():
        return text

    def short(m):
        q = '"' if m.group(1) is not None else "'"
        value = m.group(1) if m.group(1) is not None else m.group(2)
        return f"{q}{value[:77]}…{q}"
    text = _QUOTED.sub(short, text)
    if not text.isprintable():
        text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 1] + "…"


def one_line_errors(func):
    """`func` with its `ModelError`s made `one_line` (the readers' messages quote names and values of the file)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except ModelError as exc:
            text = one_line(str(exc))
            if text == str(exc):
                raise
            raise type(exc)(text, argument=exc.argument) from None
    return wrapper


_Reader = Reader      # the former private name
