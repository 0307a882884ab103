"""What a batch plans: cell files, or one cell swept over box types, masses, patterns and robots.

A batch *source* is one of

* a directory: every ``*.toml`` cell file in it (sorted by name), each planned as it is;
* a cell file: that cell;
* a manifest: a TOML file with a ``[batch]`` table::

      [batch]
      cells = ["line1.toml", "line2.toml"]   # cell files, relative to the manifest ("default": built-in)
      boxes = "all"                          # "all", "quick" (first box of every layer) or [1, 2, 5]
      nominal = false                        # also plan each loaded move for the empty gripper

      [sweep]                                # every combination of these values, for every cell
      "boxes.heavy.mass" = [3.0, 5.0, 7.0]   # a dotted key of the cell file, and its values
      "cell.robot" = ["iiwa7", "ur5e"]
      "pattern.layers" = [1, 2]

Every combination becomes a *variant* named ``<cell stem>~<k>`` (k from 1, in the order of the product)
whose cell document is the file's with those keys replaced, validated by the same reader as a cell file.
Nothing here plans or solves IK: it only reads and checks (fast, before any work).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from dataclasses import dataclass
from pathlib import Path

from toppra_app.errors import InputError, short_repr
from toppra_app.textfile import read_toml

MAX_MANIFEST_BYTES = 1 << 20
MAX_VARIANTS = 100_000
MAX_CELL_FILES = 10_000
_BATCH_KEYS = {"cells", "boxes", "nominal"}


@dataclass(frozen=True)
class CellSpec:
    """One cell of the batch: its id (file stem, or stem~k for a sweep variant), its document, where it
    came from and the swept values that made it."""
    id: str
    document: dict
    source: str                  # the cell file, and for a sweep variant its id and swept values
    file: str                    # the cell file alone
    base_dir: str
    default_name: str
    overrides: tuple             # ((dotted key, value), ...)


@dataclass(frozen=True)
class BatchSpec:
    cells: tuple                 # CellSpec, ...
    boxes: object                # "all" | "quick" | tuple of 0-based box indices
    nominal: bool
    sources: tuple               # files read (never written or replaced)

    def fingerprint(self, **options) -> str:
        """A hash of everything that decides the results (the cells, boxes and `options` such as the
        sampling period): a resumed batch must have the same."""
        data = dict(cells=[(c.id, c.document) for c in self.cells], boxes=self.boxes, nominal=self.nominal,
                    options=options)
        text = json.dumps(data, sort_keys=True, default=repr)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _toml(path: Path, what: str) -> dict:
    return read_toml(path, MAX_MANIFEST_BYTES, what)


def _cell_file(path: Path) -> tuple[dict, str]:
    from scenarios.palletizing import DEFAULT_CELL
    p = DEFAULT_CELL if str(path) == "default" else path
    return _toml(p, "a cell file (TOML)"), str(p)


def _set(doc: dict, key: str, value, source: str) -> None:
    """doc[a][b][c] = value for key "a.b.c"; the tables a and a.b must exist in the cell file."""
    parts = key.split(".")
    if len(parts) < 2 or not all(parts):
        raise InputError(f"{source}: sweep.{key}: expected a dotted key TABLE.KEY of the cell file "
                         f"(e.g. \"boxes.heavy.mass\")")
    node = doc
    for k, part in enumerate(parts[:-1]):
        if part not in node or not isinstance(node[part], dict):
            raise InputError(f"{source}: sweep.{key}: the cell file has no table [{'.'.join(parts[:k + 1])}]")
        node = node[part]
    node[parts[-1]] = copy.deepcopy(value)


def _boxes(value, source: str):
    if value in ("all", "quick"):
        return value
    if isinstance(value, list) and value and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1
                                                 for v in value):
        return tuple(sorted({v - 1 for v in value}))
    raise InputError(f"{source}: batch.boxes: expected \"all\", \"quick\" or a list of box numbers ≥ 1, got "
                     f"{short_repr(value)}")


def read_source(source) -> BatchSpec:
    """The batch described by a directory of cell files, a cell file or a manifest (module doc)."""
    path = Path(source)
    if str(source) == "default":
        doc, src = _cell_file(path)
        return BatchSpec((_spec(doc, src, ()),), "all", False, ())
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix == ".toml" and p.is_file())
        if not files:
            raise InputError(f"{path}: no cell files (*.toml) in this directory")
        if len(files) > MAX_CELL_FILES:
            raise InputError(f"{path}: {len(files)} cell files, more than the {MAX_CELL_FILES} a batch may have")
        cells = []
        for f in files:
            doc, src = _cell_file(f)
            if "batch" in doc:
                raise InputError(f"{f}: a manifest ([batch]) inside a directory of cell files; give it on its own")
            cells.append(_spec(doc, src, ()))
        return BatchSpec(tuple(cells), "all", False, tuple(str(f) for f in files))
    doc = _toml(path, "a cell file or batch manifest (TOML)")
    if "batch" not in doc:
        return BatchSpec((_spec(doc, str(path), ()),), "all", False, (str(path),))
    return _manifest(path, doc)


def _manifest(path: Path, doc: dict) -> BatchSpec:
    src = str(path)
    unknown = sorted(set(doc) - {"batch", "sweep"})
    if unknown:
        raise InputError(f"{src}: {unknown[0]}: unknown table (a manifest has [batch] and [sweep])")
    batch = doc["batch"]
    if not isinstance(batch, dict):
        raise InputError(f"{src}: batch: expected a table")
    bad = sorted(set(batch) - _BATCH_KEYS)
    if bad:
        raise InputError(f"{src}: batch.{bad[0]}: unknown key (known: {', '.join(sorted(_BATCH_KEYS))})")
    names = batch.get("cells", ["default"])
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise InputError(f"{src}: batch.cells: expected a list of cell files, got {short_repr(names)}")
    nominal = batch.get("nominal", False)
    if not isinstance(nominal, bool):
        raise InputError(f"{src}: batch.nominal: expected true or false, got {short_repr(nominal)}")
    sweep = doc.get("sweep", {})
    if not isinstance(sweep, dict):
        raise InputError(f"{src}: sweep: expected a table of dotted keys and lists of values")
    axes = []
    for key, values in _flatten(sweep):
        if not isinstance(values, list) or not values:
            raise InputError(f"{src}: sweep.{key}: expected a non-empty list of values, got {short_repr(values)}")
        axes.append((key, values))
    count = 1
    for _, values in axes:
        count *= len(values)
    if count * len(names) > MAX_VARIANTS:
        raise InputError(f"{src}: sweep: {count * len(names)} cells, more than the {MAX_VARIANTS} a batch may have")
    cells, files, seen = [], [], set()
    for name in names:
        file = name if name == "default" else path.parent / name
        if name != "default" and not Path(file).is_file():     # (named itself only, the manifest and key were lost)
            why = "is a directory, not a cell file" if Path(file).is_dir() else "no such file"
            raise InputError(f"{src}: batch.cells: {file}: {why}")
        doc0, cell_src = _cell_file(Path(file))
        files.append(cell_src)
        for k, combo in enumerate(itertools.product(*[v for _, v in axes])):
            variant = copy.deepcopy(doc0)
            for (key, _), value in zip(axes, combo):
                _set(variant, key, value, src)
            spec = _spec(variant, cell_src, tuple((key, value) for (key, _), value in zip(axes, combo)),
                         suffix=f"~{k + 1}" if axes else "")
            if spec.id in seen:
                raise InputError(f"{src}: batch.cells: two cells are named '{spec.id}' (cell files need distinct names)")
            seen.add(spec.id)
            cells.append(spec)
    return BatchSpec(tuple(cells), _boxes(batch.get("boxes", "all"), src), nominal, (src, *files))


def _flatten(table: dict, prefix: str = ""):
    """Dotted keys of a sweep table: "boxes.heavy.mass" = [...] and [sweep.boxes.heavy] mass = [...] alike."""
    for key, value in table.items():
        full = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten(value, full + ".")
        else:
            yield full, value


def _spec(doc: dict, source: str, overrides: tuple, suffix: str = "") -> CellSpec:
    stem = Path(source).stem
    if stem in (".", ".."):          # ("...toml": its moves were written to trajectories/../, DIR itself)
        raise InputError(f"{source}: a cell's id is its file name without .toml, the name of its folder in "
                         f"trajectories/; '{stem}' cannot be one: rename the file")
    swept = ", ".join(f"{k} = {short_repr(v, 30)}" for k, v in overrides)
    return CellSpec(id=stem + suffix, document=doc, source=source + (f" [{stem + suffix}: {swept}]" if swept else ""),
                    file=source,
                    base_dir=str(Path(source).parent), default_name=stem, overrides=overrides)
