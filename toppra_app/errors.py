"""Errors the application reports to users as one line (a `ValueError` subclass in the library)."""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: a file, a field, and what is wrong with it."""


class InfeasiblePathError(ValueError):
    """The path cannot be traversed within the limits; the message says where and which limit. `argument`: the
    planner's argument it is about ("sd_start", "sd_end": a boundary speed no profile can have; "tau_rms": a thermal
    rating below the hold of the cycle's end posture), or None."""

    def __init__(self, *args, argument: str | None = None):
        super().__init__(*args)
        self.argument = argument          # (pickled with the instance's __dict__, as any exception attribute)


def short_repr(value, limit: int = 80) -> str:
    """A one-line, bounded repr of a user's value for error messages."""
    from dynamics.model import short_repr as _short
    return _short(value, limit)
