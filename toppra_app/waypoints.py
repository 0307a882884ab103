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
* at most `MAX_BYTES` bytes (checked before reading), `MAX_ROWS` waypoints and `MAX_COLUMNS` columns (as each row
  is read: a line's fields counted before it is split, a row's numbers converted at once); values
  at most `MAX_VALUE` in magnitude (`MAX_PARAMETER` for the path parameter).
"""

from __future__ import annotations

import csv
import math
import re
from array import array

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

_NAME = re.compile(r"^[^\W\d][\w .:/()\[\]-]*$")


def number(text: str) -> float | None:
    """The value of a plain decimal number (`dynamics.checks.plain_number`: ASCII digits, no inf or nan), or None."""
    return plain_number(text)


def _spans(text: str):
    """(start, end) of each line of `text`, its end included, split at \\n, \\r and \\r\\n as the CSV reader splits its rows,
    by `str.find` (a regular expression took 1.4 s to find the end of a 200 MB line; `splitlines` built a list of
    every line of a file of up to `MAX_BYTES`)."""
    size, start, nl, cr = len(text), 0, -2, -2          # nl, cr: the next \\n and \\r (-1: none left, -2: not looked for)
    while start < size:
        if -1 != nl < start:
            nl = text.find("\n", start)
        if -1 != cr < start:
            cr = text.find("\r", start)
        end = min((p for p in (nl, cr) if p >= 0), default=size - 1)
        if end == cr and end + 1 == nl:
            end = nl
        yield start, end + 1
        start = end + 1


def _lines(text: str):
    """The lines of `text` one at a time, without their ends."""
    for a, b in _spans(text):
        yield text[a:b].rstrip("\r\n")


def _delimiter(text: str) -> str:
    """',' — or ';' or a tab where the first row that is not empty or a comment has no comma but one of those
    (a spreadsheet's export in a locale with a decimal comma, or a tab-separated copy)."""
    first = next((ln for ln in _lines(text) if ln.strip() and not ln.lstrip().startswith("#")), "")
    if "," in first:
        return ","
    return next((d for d in (";", "\t") if d in first), ",")


def _physical_rows(text: str, delimiter: str, filename: str):
    """The lines of `text` with their ends, for the CSV reader, each checked before it is split into fields: a line
    of more than `MAX_COLUMNS` fields is refused here (the reader built the list of all its fields first: 2.9 GB
    for a 200 MB line of commas), a comment or a line of empty fields passed on as an empty line (skipped)."""
    for i, (a, b) in enumerate(_spans(text), start=1):
        yield _checked(text[a:b], delimiter, filename, i)


def _checked(line: str, delimiter: str, filename: str, i: int) -> str:
    if line.count(delimiter) < MAX_COLUMNS:
        return line
    if line.lstrip().startswith("#") or sum(line.count(c) for c in {delimiter, " ", "\t", "\r", "\n"}) == len(line):
        return "\n"
    if '"' not in line:
        raise InputError(f"{filename}: row {i}: {line.count(delimiter) + 1} columns, more than {MAX_COLUMNS}")
    d = re.escape(delimiter)     # a field as the reader splits it (a delimiter in quotes is not one), and its delimiter
    field, pos = re.compile(f'(?>"(?:[^"]|"")*+(?:"[^{d}]*+)?|[^{d}"][^{d}]*+|){d}'), 0
    for _ in range(MAX_COLUMNS):
        m = field.match(line, pos)
        if m is None:
            return line
        pos = m.end()
    raise InputError(f"{filename}: row {i}: more than {MAX_COLUMNS} columns")


def read_waypoints(filename: str, n: int | None = None, joint_names=None,
                   not_joints=None) -> tuple[np.ndarray, np.ndarray | None, list]:
    """(waypoints (m, n), s or None, joint column names); `InputError` naming file, row and field. With the
    robot's `joint_names`, a header's columns are matched to them (`joint_order`) and the waypoints returned
    in the robot's joint order. `not_joints`: {name: why} of the robot's joints that are not its coordinates
    (locked, or a coupled <mimic> joint), for the message about a column naming one."""
    text = read_text(filename, MAX_BYTES, "a CSV file of waypoints", "row")
    delimiter = _delimiter(text)
    header = names = first_line = None
    values, lines = array("d"), array("q")  # each row's numbers as it is read: 8 B a value (the rows' fields held as
    try:                                    # text took ~1 kB a row, 1 GB for 1 000 000 rows of 7 joints)
        for i, r in enumerate(csv.reader(_physical_rows(text, delimiter, filename), delimiter=delimiter), start=1):
            if not r or not any(f.strip() for f in r) or r[0].strip().startswith("#"):
                continue
            if len(r) > MAX_COLUMNS:
                raise InputError(f"{filename}: row {i}: {len(r)} columns, more than {MAX_COLUMNS}")
            fields = [f.strip() for f in r]
            if first_line is None:
                first_line = i
                header = _header(filename, i, fields, delimiter, joint_names)
                names = header or [f"q{k + 1}" for k in range(len(fields))]
                if header:
                    continue
            if len(lines) >= MAX_ROWS:
                raise InputError(f"{filename}: row {i}: more than the {MAX_ROWS} waypoints a path may have")
            _convert(filename, i, fields, names, delimiter, header is None and i == first_line, values)
            lines.append(i)
    except csv.Error as exc:
        raise InputError(f"{filename}: not a CSV file ({exc})") from None
    if first_line is None:
        raise InputError(f"{filename}: no waypoints (the file is empty)")
    values = np.frombuffer(values, dtype=float).reshape(len(lines), len(names))
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
            raise InputError(f"{filename}: row {lines[j + 1]}, field {short_repr(s_name)}: the path parameter must "
                             f"increase ({s[j + 1]:g} after {s[j]:g})")
    if joint_names is not None and header is not None:
        order = joint_order(filename, first_line, names, list(joint_names), not_joints)
        data, names = data[:, order], [names[k] for k in order]
    elif n is not None and data.shape[1] != n:
        raise InputError(f"{filename}: row {lines[0]}: {data.shape[1]} joint columns but the robot has {n} joints")
    return data, s, names


def _header(filename: str, line: int, first: list, delimiter: str, joint_names) -> list | None:
    """The first row's fields if they are a header (no field a number), else None; an `InputError` for a
    first row of text that is not column names, or that names a column twice."""
    if any(number(f) is not None for f in first):
        return None
    bad = [f for f in first if not _NAME.match(f) and f not in (joint_names or ())]   # (any URDF joint name)
    if bad:
        hint = ("; fields separated by ';' or tabs: the decimal point is '.', not ','"
                if delimiter == "," and any(";" in f or "\t" in f for f in first) else "")
        raise InputError(f"{filename}: row {line}: {short_repr(bad[0])} is neither a number nor a column name{hint}")
    lowered = [h.lower() for h in first]
    dup = sorted({h for h in lowered if lowered.count(h) > 1})
    if dup:
        raise InputError(f"{filename}: row {line}: the column name {short_repr(dup[0])} appears twice")
    return list(first)


def _convert(filename: str, line: int, fields: list, names: list, delimiter: str, first: bool, values) -> None:
    """The row's numbers appended to `values`, or an `InputError` naming the row and the field."""
    if len(fields) != len(names):
        raise InputError(f"{filename}: row {line}: expected {len(names)} fields, got {len(fields)}")
    row = [plain_number(f) for f in fields]
    if all(v is not None and -MAX_VALUE <= v <= MAX_VALUE for v in row):     # (plain numbers are never NaN)
        values.extend(row)
        return
    for name, f, v in zip(names, fields, row):
        if v is None or not math.isfinite(v):
            what = "is empty" if f == "" else f"{short_repr(f)} is not a plain number (like -1.25 or 3e-2)"
            if delimiter == "," and (";" in f or "\t" in f):
                what += "; fields separated by ';' or tabs: the decimal point is '.', not ','"
            elif delimiter != "," and "," in f:
                what += "; the decimal point is '.', not ','"
            if first:
                what += "; the first row mixes numbers and text, so it is not a header either"
            raise InputError(f"{filename}: row {line}, field {short_repr(name)}: {what}")
        most = MAX_PARAMETER if name.lower() in PARAM_COLUMNS else MAX_VALUE
        if abs(v) > most:
            raise InputError(f"{filename}: row {line}, field {short_repr(name)}: {short_repr(f)} is too large "
                             f"(at most {most:g} in magnitude)")
        values.append(v)

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
