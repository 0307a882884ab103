"""Errors the application reports to users as one line (a `ValueError` subclass in the library)."""


class InputError(ValueError):
    """Bad user input: a file, a field, and what is wrong with it."""


class InfeasiblePathError(ValueError):
    """The path cannot be traversed within the limits; the message says where and which limit."""
