"""Joint waypoints from a CSV file, strictly: what is not clearly a number or a header is an error naming
the file, the row and the column — never a silently dropped waypoint (docs/safety.md, "Inputs").

* one waypoint per row, one column per joint, separated by commas — or by semicolons or tabs where the first
  row has no comma (the decimal point is '.' either way); optional header row of joint names (every cell a name);
  an optional path-parameter column named s, theta or θ (strictly increasing);
* given the robot's joint names, a header must name exactly those joints (in any order: the columns are
  put in the robot's order) or be the generic ``q1 … qn`` / ``j1 … jn`` in order (`joint_order`);
* numbers as Python would write them without surprises: ``-1.5``, ``2``, ``3e-2`` — not ``0.1_5`` (Python
  reads 0.15), ``0x1A``, ``nan``, ``inf``, ``1,5`` or ``0.4rad``;
* UTF-8, with or without a byte-order mark (Excel's "CSV UTF-8"); UTF-16 and binary files are refused;
* empty lines and lines starting with ``#`` are skipped;
* at most `MAX_BYTES` bytes, `MAX_ROWS` waypoints and `MAX_COLUMNS` columns, checked before parsing; values
  at most `MAX_VALUE` in magnitude (`MAX_PARAMETER` for the path parameter).
"""

from __future__ import annotations

import csv
import io
import re

import numpy as np

from dynamics.checks import plain_number

from .errors import InputError, short_repr
from .textfile import read_text

MAX_BYTES = 256 * 1024 * 1024
MAX_ROWS = 1_000_000
MAX_VALUE = 1e6         # a joint position (rad, m or degrees); 1e308 overflowed in the spline
MAX_PARAMETER = 1e13    # a path parameter (s ∈ [0, 2·10¹²] plans: the planner works in normalised variables)
MAX_COLUMNS = 64
PARAM_COLUMNS = ("s", "theta", "θ")

_EOL = re.compile(r"\r\n|\r|\n")
_NAME = re.compile(r"^[^\W\d][\w .:/()\[\]-]*$")


def number(text: str) -> float | None:
    """The value of a plain decimal number (`dynamics.checks.plain_number`: ASCII digits, no inf or nan), or None."""
    return plain_number(text)


def _lines(text: str):
    """The lines of `text` one at a time, split at \\n, \\r and \\r\\n as the CSV reader splits its rows (`splitlines`
    built a list of every line of a file of up to `MAX_BYTES` only for `_delimiter` to look at the first)."""
    start = 0
    for end in _EOL.finditer(text):
        yield text[start:end.start()]
        start = end.end()
    yield text[start:]


def _delimiter(text: str) -> str:
    """',' — or ';' or a tab where the first row that is not empty or a comment has no comma but one of those
    (a spreadsheet's export in a locale with a decimal comma, or a tab-separated copy)."""
    first = next((ln for ln in _lines(text) if ln.strip() and not ln.lstrip().startswith("#")), "")
    if "," in first:
        return ","
    return next((d for d in (";", "\t") if d in first), ",")


def read_waypoints(filename: str, n: int | None = None, joint_names=None,
                   not_joints=None) -> tuple[np.ndarray, np.ndarray | None, list]:
    """(waypoints (m, n), s or None, joint column names); `InputError` naming file, row and field. With the
    robot's `joint_names`, a header's columns are matched to them (`joint_order`) and the waypoints returned
    in the robot's joint order. `not_joints`: {name: why} of the robot's joints that are not its coordinates
    (locked, or a coupled <mimic> joint), for the message about a column naming one."""
    text = read_text(filename, MAX_BYTES, "a CSV file of waypoints", "row")
    delimiter = _delimiter(text)
    rows = []            # counted as they are read: every row's fields held first took ~1 kB a row (1 GB for a
    try:                 # CSV of 1 000 001 rows, tens of GB for the 256 MiB one of short rows) before the count
        for i, r in enumerate(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), start=1):
            if not r or not any(f.strip() for f in r) or r[0].strip().startswith("#"):
                continue
            if len(rows) > MAX_ROWS:               # (a header is one more; without one, checked below)
                raise InputError(f"{filename}: row {i}: more than the {MAX_ROWS} waypoints a path may have")
            if len(r) > MAX_COLUMNS:
                raise InputError(f"{filename}: row {i}: {len(r)} columns, more than {MAX_COLUMNS}")
            rows.append((i, [f.strip() for f in r]))
    except csv.Error as exc:
        raise InputError(f"{filename}: not a CSV file ({exc})") from None
    if not rows:
        raise InputError(f"{filename}: no waypoints (the file is empty)")
    header = None
    first_line, first = rows[0]
    numeric = [number(f) is not None for f in first]
    if not any(numeric):
        bad = [f for f in first if not _NAME.match(f) and f not in (joint_names or ())]   # (any URDF joint name)
        if bad:
            hint = ("; fields separated by ';' or tabs: the decimal point is '.', not ','"
                    if delimiter == "," and any(";" in f or "\t" in f for f in first) else "")
            raise InputError(f"{filename}: row {first_line}: {short_repr(bad[0])} is neither a number nor a column "
                             f"name{hint}")
        header = list(first)
        rows = rows[1:]
        lowered = [h.lower() for h in header]
        dup = sorted({h for h in lowered if lowered.count(h) > 1})
        if dup:
            raise InputError(f"{filename}: row {first_line}: the column name {short_repr(dup[0])} appears twice")
    if header is None and len(rows) > MAX_ROWS:
        raise InputError(f"{filename}: {len(rows)} waypoints, more than the {MAX_ROWS} a path may have")
    width = len(header) if header else len(first)
    names = header or [f"q{k + 1}" for k in range(width)]
    values = np.empty((len(rows), width))
    for r, (line, fields) in enumerate(rows):
        if len(fields) != width:
            raise InputError(f"{filename}: row {line}: expected {width} fields, got {len(fields)}")
        for k, (name, f) in enumerate(zip(names, fields)):
            v = number(f)
            if v is None or not np.isfinite(v):
                what = "is empty" if f == "" else f"{short_repr(f)} is not a plain number (like -1.25 or 3e-2)"
                if delimiter == "," and (";" in f or "\t" in f):
                    what += "; fields separated by ';' or tabs: the decimal point is '.', not ','"
                elif delimiter != "," and "," in f:
                    what += "; the decimal point is '.', not ','"
                if header is None and r == 0:
                    what += "; the first row mixes numbers and text, so it is not a header either"
                raise InputError(f"{filename}: row {line}, field {short_repr(name)}: {what}")
            most = MAX_PARAMETER if name.lower() in PARAM_COLUMNS else MAX_VALUE
            if abs(v) > most:
                raise InputError(f"{filename}: row {line}, field {short_repr(name)}: {short_repr(f)} is too large "
                                 f"(at most {most:g} in magnitude)")
            values[r, k] = v
    if len(values) < 2:
        raise InputError(f"{filename}: need at least 2 waypoints, got {len(values)}")
    data = values
    s = None
    s_cols = [k for k, name in enumerate(names) if name.lower() in PARAM_COLUMNS]
    if len(s_cols) > 1:
        raise InputError(f"{filename}: more than one path-parameter column ({', '.join(PARAM_COLUMNS)})")
    if s_cols:
        s_name = names[s_cols[0]]
        s = data[:, s_cols[0]]
        data = np.delete(data, s_cols[0], axis=1)
        names = [nm for k, nm in enumerate(names) if k != s_cols[0]]
        steps = np.diff(s)
        if (steps <= 0).any():
            j = int(np.flatnonzero(steps <= 0)[0])
            raise InputError(f"{filename}: row {rows[j + 1][0]}, field {short_repr(s_name)}: the path parameter must "
                             f"increase ({s[j + 1]:g} after {s[j]:g})")
    if joint_names is not None and header is not None:
        order = joint_order(filename, first_line, names, list(joint_names), not_joints)
        data, names = data[:, order], [names[k] for k in order]
    elif n is not None and data.shape[1] != n:
        raise InputError(f"{filename}: row {rows[0][0]}: {data.shape[1]} joint columns but the robot has {n} joints")
    return data, s, names


def _listing(names, most: int = 8) -> str:
    shown = ", ".join(short_repr(x, 40) for x in names[:most])
    return shown + (f", … ({len(names) - most} more)" if len(names) > most else "")


def joint_order(filename: str, line: int, columns: list, joints: list, not_joints=None) -> list[int]:
    """The file's column of each of the robot's `joints`, from the header's names `columns` (the path
    parameter already removed): the joints' own names in any order (exactly, or else ignoring case), or the
    generic ``q1 … qn`` or ``j1 … jn`` in the robot's order. Anything else — a name that is not a joint, a
    joint without a column — is an `InputError` naming the file, the columns and the robot's joints; a column
    of `not_joints` (a locked joint of a tree's other arm, a gripper's mimic finger) says why it is not one."""
    for key in (str, str.lower):
        named = {key(c): k for k, c in enumerate(columns)}
        wanted = [key(j) for j in joints]
        if len(named) == len(columns) == len(joints) and len(set(wanted)) == len(joints) and set(wanted) == set(named):
            return [named[j] for j in wanted]
    lowered = [c.lower() for c in columns]
    for generic in ([f"{p}{k + 1}" for k in range(len(joints))] for p in ("q", "j")):
        if lowered == generic:
            return list(range(len(joints)))
        if sorted(lowered) == sorted(generic):
            raise InputError(f"{filename}: row {line}: the generic column names {generic[0]} … {generic[-1]} must be "
                             f"in their order (they name the robot's joints by position); got {_listing(columns)}")
    known = {j.lower() for j in joints}
    unknown = [c for c in columns if c.lower() not in known]
    missing = [j for j in joints if j.lower() not in set(lowered)]
    what = []
    held = {k.lower(): (k, why) for k, why in (not_joints or {}).items()}
    for c in [c for c in unknown if c.lower() in held]:    # ('is not a joint of the robot' for a joint it locked)
        what.append(f"column {short_repr(c)} is {held[c.lower()][1]}: leave it out")
    unknown = [c for c in unknown if c.lower() not in held]
    if unknown:
        what.append(f"{'column' if len(unknown) == 1 else 'columns'} {_listing(unknown)} "
                    f"{'is not a joint' if len(unknown) == 1 else 'are not joints'} of the robot")
    if missing and len(missing) < len(joints):        # (none matched: the list of joints below says it)
        what.append(f"no column for {_listing(missing)}")
    if not what:                                      # generic names out of order, or a joint named twice
        what.append(f"the columns {_listing(columns)} do not match the robot's joints one to one")
    raise InputError(f"{filename}: row {line}: {'; '.join(what)}; name the columns by the robot's joints "
                     f"({_listing(joints, 12)}) in any order, or q1 … q{len(joints)} in their order, or leave the "
                     f"header out")
