"""Command line: ``toppra-app <command> ...``.

Each sub-command is a module with ``add_parser(subparsers)`` and ``run(args) -> int``: the planner's own
in ``toppra_app/commands/``, others registered as entry points in the group ``toppra_app.commands``
(the scenarios' ``palletize`` and ``payload-sweep``, so that ``toppra_app`` never imports ``scenarios``
— data flows one way, scenario → planner → dynamics). Errors a user can fix (``ValueError`` subclasses: bad files, fields, infeasible
paths) end with one line on stderr and a non-zero exit code, never a traceback; a closed stdout pipe ends
the run quietly (code 141).
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()        # wall times "since start" (palletize) count from here

import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402


def _interrupted_while_starting(signum, frame):
    """Ctrl-C before `main` runs (while the modules load, ~20–50 ms): one line, not the traceback of an import;
    nothing has been written yet."""
    sys.stderr.write("toppra-app: interrupted; nothing was written\n")
    sys.stderr.flush()
    os._exit(130)


# as the command (`toppra-app`, `python -m toppra_app`; not when imported as a library, e.g. by tests), and unless
# SIGINT is ignored (a background job)
_RUN_AS = getattr(getattr(sys.modules.get("__main__"), "__spec__", None), "name", None)
if (os.path.basename(sys.argv[0]) == "toppra-app" or __name__ == "__main__" or _RUN_AS == "toppra_app.__main__") and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted_while_starting)

import argparse  # noqa: E402
import importlib  # noqa: E402
import importlib.metadata  # noqa: E402
import threading  # noqa: E402

from . import interrupt  # noqa: E402
from .interrupt import Terminated  # noqa: E402,F401  (cli.Terminated: SIGTERM, SIGHUP)

DESCRIPTION = """Minimum-time robot motions along fixed paths with full rigid-body dynamics.
`toppra-app COMMAND --help` for a command's options; `python -m toppra_app` is the same command."""
EXIT_CODES = """exit codes (docs/safety.md):
  0           done (with --strict: every plan within its limits)
  2           bad input, an infeasible path, an output that cannot be written (one line on stderr)
  3           no solver could solve a problem; batch: moves failed to plan or a task was lost
  4           --strict: a plan did not keep its limits (the output is written in full)
  130, 128+N  Ctrl-C, SIGTERM, SIGHUP (signal N)
  141         stdout closed early (piped to head)"""

BUILTIN_COMMANDS = {name: f"toppra_app.commands.{name}" for name in ("plan", "bench", "draw")}
ENTRY_POINT_GROUP = "toppra_app.commands"


def command_modules() -> dict[str, str]:
    """Sub-command name → module path: registered commands first (palletize, …), then the built-ins."""
    found = {ep.name: ep.value for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    return {**dict(sorted(found.items())), **BUILTIN_COMMANDS}


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments in one line (argparse prints its whole usage first), naming the argument."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (--help for usage)\n")


def version() -> str:
    """The installed distribution's version (``toppra-app --version``), from its metadata."""
    try:
        return importlib.metadata.version("toppra-app")
    except importlib.metadata.PackageNotFoundError:         # run from a source tree that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="toppra-app", description=DESCRIPTION, epilog=EXIT_CODES,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"toppra-app {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_path in command_modules().values():
        module = importlib.import_module(module_path)
        p = module.add_parser(sub)
        p.set_defaults(_run=module.run)
    return parser


def _what_was_written() -> str:
    """How an interrupted run ends: nothing written, or the output directories already in place in full."""
    from . import output
    if not output.WRITTEN:
        return "nothing was written"
    return f"{', '.join(str(p) for p in output.WRITTEN)} had been written in full"


def _stdout_to_devnull() -> None:
    """After a broken pipe: what is still buffered for stdout goes nowhere (the recipe of Python's `signal`
    documentation), so that the interpreter's last flush does not fail again with a traceback."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):       # replaced by a caller (tests): nothing to redirect
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _flush_stdout() -> None:
    if sys.stdout is not None:
        sys.stdout.flush()


def main(argv=None) -> int:
    """Run one command. Its output read by a pipe that closed early (``| head -1``, ``| true``) ends the run
    quietly, with code 141 as a program stopped by SIGPIPE would (`_stdout_to_devnull`); any other
    `OSError` is not caught here."""
    try:
        try:
            code = _main(argv)
        except SystemExit:                  # --help, argparse's errors: their text may still be in the buffer
            _flush_stdout()
            raise
        _flush_stdout()                     # here, not at the interpreter's exit: a broken pipe is caught below
        return code
    except BrokenPipeError:
        _stdout_to_devnull()
        return 128 + signal.SIGPIPE


def _install_handlers() -> dict:
    """In the main thread, `interrupt.handle` for SIGINT (unless it is ignored or someone else's: a background
    job, a caller), SIGTERM and SIGHUP; the handlers it replaced. SIGINT goes back to KeyboardInterrupt after
    the run, never to the start-up handler (it exits the process)."""
    previous = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    if signal.getsignal(signal.SIGINT) in (_interrupted_while_starting, signal.default_int_handler):
        signal.signal(signal.SIGINT, interrupt.handle)
        previous[signal.SIGINT] = signal.default_int_handler
    for sig in (signal.SIGTERM, signal.SIGHUP):
        previous[sig] = signal.signal(sig, interrupt.handle)
    return previous


def _main(argv=None) -> int:
    interrupt.reset()
    previous = _install_handlers()
    unraisable = sys.unraisablehook
    sys.unraisablehook = interrupt.quiet_unraisable(unraisable)
    try:
        return _command(argv)
    finally:
        sys.unraisablehook = unraisable
        for sig, handler in previous.items():
            if signal.getsignal(sig) is interrupt.handle:       # (SIG_IGN after a complete run stays)
                signal.signal(sig, handler)


def _command(argv) -> int:
    try:
        parser = build_parser()                 # imports the commands (numpy, ...): Ctrl-C may come here
        interrupt.check()                       # (one swallowed by an import's callback: here)
    except Terminated as exc:
        print(f"toppra-app: terminated by signal {exc.signum}; nothing was written", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print("toppra-app: interrupted; nothing was written", file=sys.stderr)
        return 130
    args = parser.parse_args(argv)
    from . import output
    output.WRITTEN.clear()
    import warnings

    def one_line(message, category, filename, lineno, file=None, line=None):
        # a warning for the user (a URDF read with a correction, merged waypoints, ...) as one line
        print(f"toppra-app {args.command}: warning: {message}", file=sys.stderr)

    shown = warnings.showwarning
    warnings.showwarning = one_line
    try:
        code = int(args._run(args) or 0)
        if code == 0 and output.WRITTEN:
            interrupt.check()           # one swallowed after the output was put in place: said as any late Ctrl-C
        if argv is None and threading.current_thread() is threading.main_thread():
            # the run is complete: a Ctrl-C while the interpreter shuts down (threads, a second process) would
            # only end it with status 130 and no word
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        return code
    except ValueError as exc:          # ModelError, InputError, InfeasiblePathError, OutputError, ...
        print(f"toppra-app {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except Terminated as exc:
        print(f"toppra-app {args.command}: terminated by signal {exc.signum}; {_what_was_written()}",
              file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print(f"toppra-app {args.command}: interrupted; {_what_was_written()}", file=sys.stderr)
        return 130
    except RecursionError:
        print(f"toppra-app {args.command}: error: input nested too deeply", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        from .socp.solvers import SolverError
        if not isinstance(exc, SolverError):
            raise
        # no solver could solve a problem (not the user's input, but one line too; `plan` says the same)
        print(f"toppra-app {args.command}: error: {exc}", file=sys.stderr)
        return 3
    except MemoryError:
        print(f"toppra-app {args.command}: error: out of memory (an input asks for too much; see docs/safety.md "
              f"for the limits)", file=sys.stderr)
        return 2
    finally:
        warnings.showwarning = shown


if __name__ == "__main__":
    sys.exit(main())
