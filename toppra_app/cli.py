"""Command line: ``toppra-app <command> ...``.

Each sub-command lives in ``toppra_app/commands/<name>.py`` with ``add_parser(subparsers)`` and
``run(args) -> int``. Errors a user can fix (``ValueError`` subclasses: bad files, fields, infeasible
paths) end with one line on stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = ("palletize", "payload-sweep", "plan", "bench", "draw")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toppra-app", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"toppra_app.commands.{name.replace('-', '_')}")
        except ModuleNotFoundError as exc:
            if exc.name != f"toppra_app.commands.{name.replace('-', '_')}":
                raise
            continue
        p = module.add_parser(sub)
        p.set_defaults(_run=module.run)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except ValueError as exc:          # ModelError, InputError, InfeasiblePathError, ...
        print(f"toppra-app {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
