"""Ctrl-C, SIGTERM and SIGHUP at the command line, including those CPython swallows.

CPython raises the KeyboardInterrupt of a Ctrl-C wherever the main thread is; when that is inside a weakref
callback or a finaliser (importlib's module locks while a command imports its modules, a collected object),
it prints "Exception ignored in …" and drops the exception, and the run went on and wrote its output. So the
command's handler (`handle`) records the signal before it raises, and the commands call `check` at their
commit points — before the finished output is moved into place (`toppra_app.output`), between the phases of
a run — where a recorded interrupt is raised again. Outside the command line (`toppra_app.cli.main`) nothing
is recorded and `check` does nothing.
"""

from __future__ import annotations

import signal
import sys

_received: list[int] = []       # the signals `handle` has seen since `reset`


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C, so every temporary output is removed (`output`)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _exception(signum: int) -> KeyboardInterrupt:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


def handle(signum, frame):
    """The command line's handler of SIGINT, SIGTERM and SIGHUP: record the signal, then raise
    KeyboardInterrupt (`Terminated` for the others)."""
    _received.append(signum)
    raise _exception(signum)


def check() -> None:
    """At a commit point: raise the first recorded interrupt again (it may have been swallowed where Python
    ignores exceptions; one that was not has ended the run already)."""
    if _received:
        raise _exception(_received[0])


def pending() -> bool:
    return bool(_received)


def reset() -> None:
    _received.clear()


def quiet_unraisable(previous):
    """A `sys.unraisablehook` that says nothing of a swallowed KeyboardInterrupt recorded by `handle` (`check`
    raises it again at the next commit point, which ends the run in one line) and passes anything else to
    `previous`."""
    def hook(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and _received:
            return
        (previous or sys.__unraisablehook__)(unraisable)
    return hook
