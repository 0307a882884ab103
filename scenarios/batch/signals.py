"""Signals while a batch starts its local workers and writes a box: Ctrl-C held off the workers as they are spawned
and shut down (`ctrl_c_held`), SIGINT, SIGTERM and SIGHUP recorded to be acted on after a step (`signals_deferred`)."""

from __future__ import annotations

import contextlib
import signal
import threading


@contextlib.contextmanager
def signals_deferred():
    """SIGINT, SIGTERM and SIGHUP recorded, not raised, inside (main thread only): the list of those received."""
    received = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    sigs = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
            if signal.getsignal(s) not in (signal.SIG_IGN, None)]
    previous = {s: signal.signal(s, lambda signum, frame: received.append(signum)) for s in sigs}
    try:
        yield received
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def ctrl_c_held():
    """Ctrl-C ignored inside (main thread only): while local workers start (they inherit it — Ctrl-C reaches the
    whole process group, and each worker printed its traceback, 90-100 lines after ours; this process stops them
    when it unwinds) and while they are shut down (a Ctrl-C there left them and a traceback behind)."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
