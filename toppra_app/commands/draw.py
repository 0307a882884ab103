"""`toppra-app draw ROBOT --q 0.1,0.2,... --out fig.png`: a 3-D line drawing of a robot in a configuration.

ROBOT is a built-in model name (`dynamics.load_robot`) or a URDF file. ``charmie`` is drawn from its
Euler-angle model (Gonçalves et al. 2022) with the head, claws and torso actuators: give its 19 joint
values (as `load_robot("charmie")`), or 21 with the two claw angles last.
"""

from __future__ import annotations

import math
import os


def add_parser(sub):
    p = sub.add_parser("draw", help="draw a robot in a configuration (3-D PNG)",
                       description=__doc__.splitlines()[0])
    p.add_argument("robot", metavar="ROBOT", help="built-in robot name or URDF file")
    p.add_argument("--q", default=None, help="joint values, comma-separated (rad, m); default all zero")
    p.add_argument("--out", default=None, help="output image (default ROBOT.png); written atomically, never over a file this tool did not write")
    p.add_argument("--lock", action="append", default=[], metavar="JOINT[=VALUE]",
                   help="URDF only: hold a joint fixed (repeatable), e.g. --lock panda_finger_joint1=0.02")
    p.add_argument("--elev", type=float, default=20.0, help="view elevation [deg]")
    p.add_argument("--azim", type=float, default=-60.0, help="view azimuth [deg]")
    p.add_argument("--title", default=None, help="figure title (default the robot's name)")
    return p


def _parse_q(text, n_allowed, robot_name):
    from toppra_app.errors import InputError
    if text is None:
        return None
    from dynamics.checks import plain_number
    fields = text.replace(" ", "").split(",")
    if fields and fields[-1] == "" and len(fields) > 1:
        fields.pop()                                   # (one trailing comma is harmless)
    # an empty field ("0,,1") was dropped and shifted every later value onto the wrong joint; float() also
    # read "1_0" as 10 and other scripts' digits
    values = [math.nan if x.lower() == "nan" else plain_number(x, inf=True) for x in fields]   # (NaN: below)
    if None in values:
        k = values.index(None)
        raise InputError(f"--q: value {k + 1} is {fields[k]!r}, not a number (expected comma-separated numbers, "
                         f"rad or m)")
    q = values
    if len(q) not in n_allowed:
        want = " or ".join(str(k) for k in n_allowed)
        raise InputError(f"--q: robot '{robot_name}' has {want} joints, got {len(q)} values")
    bad = [k for k, x in enumerate(q) if not math.isfinite(x)]
    if bad:
        raise InputError(f"--q: value {bad[0] + 1} is {q[bad[0]]}, not a finite number")
    return q


def _load(args):
    """(model, joint-count options, extra lines) for ROBOT."""
    import dynamics
    from toppra_app.errors import InputError
    name = args.robot
    if name.lower().endswith(".urdf") or os.path.sep in name or os.path.exists(name):
        from toppra_app.commands.robot_arg import parse_locks
        robot = dynamics.RobotModel.from_urdf(name, locked_joints=parse_locks(args.lock, bare=True))
        return robot, (robot.n,), ()
    if args.lock:
        raise InputError(f"--lock: only for a URDF robot ('{name}' is built in; its joints cannot be locked)")
    if name.strip().lower() == "charmie":
        from dynamics.charmie import ACTUATORS, charmie_euler
        model = charmie_euler()
        return model, (19, 21), ACTUATORS
    try:
        load_robot = dynamics.load_robot
    except AttributeError:
        from dynamics.robots import load_robot
    robot = load_robot(name)
    return robot, (robot.n,), ()


def run(args) -> int:
    import numpy as np

    from toppra_app.drawing import draw_robot, save_figure
    from toppra_app.output import check_output_file
    out = args.out if args.out is not None else f"{os.path.splitext(os.path.basename(args.robot))[0] or 'robot'}.png"
    inputs = [args.robot] if os.path.exists(args.robot) else []
    check_output_file(out, inputs)
    from toppra_app.errors import InputError
    from matplotlib.backend_bases import FigureCanvasBase
    kinds = FigureCanvasBase.get_supported_filetypes()           # (matplotlib's own list: what savefig takes)
    ext = os.path.splitext(out)[1][1:].lower()
    if ext and ext not in kinds:
        raise InputError(f"--out {out}: no image format '.{ext}'; use one of {', '.join(sorted(kinds))}")
    for flag, value in (("--elev", args.elev), ("--azim", args.azim)):
        if not math.isfinite(value):
            raise InputError(f"{flag}: expected a finite angle in degrees, got {value}")
    model, sizes, extra = _load(args)
    q = _parse_q(args.q, sizes, args.robot)
    q = np.zeros(model.n) if q is None else np.concatenate((q, np.zeros(model.n - len(q))))
    ax = draw_robot(model, q, title=args.title, extra_lines=extra, elev=args.elev, azim=args.azim)
    from toppra_app.output import OutputError, write_error

    def replaceable(path) -> bool:      # checked again when the figure is done: a file that appeared meanwhile
        try:                            # (another program, a second draw) was replaced by the figure
            check_output_file(out, inputs)
        except OutputError:
            return False
        return True
    try:
        save_figure(ax.figure, out, replaceable=replaceable)   # (a temporary beside it: nothing half-written)
    except FileExistsError:
        raise OutputError(f"--out {out}: appeared while the robot was drawn and was not written by this tool; it is "
                          f"kept and nothing was written (choose a new file name)") from None
    except OSError as exc:
        raise OutputError(f"--out {out}: cannot write: {write_error(exc)}; nothing was written") from None
    print(f"wrote {out}")
    return 0
