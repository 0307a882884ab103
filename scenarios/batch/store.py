"""The batch's output directory, written as tasks finish so that memory stays flat and a killed run can
be resumed (docs/safety.md, "Batch output"):

* ``DIR/.toppra-app-batch.json`` marks the directory as a batch of this tool and holds the batch's
  fingerprint; a directory is used only if it is new, empty, or holds that marker with the same
  fingerprint (then finished moves are skipped). Anything else is refused before any work.
* ``moves.csv``: one row per move, appended and flushed as each box finishes; a row is written only
  after the move's trajectory file is in place. A torn last line (a run killed while writing) is cut off
  when the batch resumes.
* ``trajectories/CELL/moveNNN_boxNNN_KIND.csv``: each written to a temporary name and renamed.
* ``batch_summary.json`` and ``report.html`` (renamed into place) when the batch ends.

Nothing outside DIR is touched, and inside it only files this module names."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import re
import secrets
import warnings
from pathlib import Path

from toppra_app.output import OutputError, check_path_length, protected_reason, resolved_out, write_error

from .tasks import COLUMNS

MARKER = ".toppra-app-batch.json"
MOVES = "moves.csv"
SUMMARY = "batch_summary.json"
REPORT = "report.html"
TRAJECTORIES = "trajectories"
TOOL = "toppra-app batch"
_TMP = r"\.tmp-\d+-[0-9a-f]+"                            # `_atomic_bytes`'s suffix
_TMP_TOP = re.compile(r"\.(\.toppra-app-batch\.json|batch_summary\.json|report\.html)" + _TMP)
_TMP_MOVE = re.compile(r"\.move\d+_box\d+_\w+\.csv" + _TMP)


class BatchStore:
    def __init__(self, out, fingerprint: str, inputs=()):
        if str(out).strip() == "":                      # (was "--out : it is the working directory")
            raise OutputError("--out: empty path; give a directory name, e.g. --out results")
        check_path_length(out)
        self.path = resolved_out(out)
        self.fingerprint = fingerprint
        why = protected_reason(self.path, inputs)
        if why:
            raise OutputError(f"--out {out}: {why}")
        if self.path.exists() and not self.path.is_dir():
            raise OutputError(f"--out {out}: exists and is not a directory")
        self.resuming, self.begun_by = False, None
        if self.path.is_dir() and any(self.path.iterdir()):
            marker = self._marker()
            if marker is None:
                raise OutputError(f"--out {out}: a non-empty directory that is not a batch of this tool; choose a "
                                  f"new or empty directory (nothing in it is changed)")
            if marker.get("fingerprint") != fingerprint:
                raise OutputError(f"--out {out}: holds a batch of other cells or options (fingerprint "
                                  f"{marker.get('fingerprint')}, this batch {fingerprint}); choose another directory")
            self.resuming = True
            self.begun_by = marker.get("version")
            self._refuse_if_locked()
        elif not self.path.parent.is_dir():
            raise OutputError(f"--out {out}: the parent directory {self.path.parent} does not exist")

    def _refuse_if_locked(self) -> None:
        """One line now if another batch holds DIR's lock (`open` takes it): the same command started again meanwhile
        read every cell, solved their pick postures and started its local Dask cluster before it was refused."""
        try:
            fh = open(self.path / MOVES, "rb")
        except OSError:
            return                                    # (no moves.csv yet: `open` decides)
        with fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                raise self._busy() from None

    def _marker(self):
        try:
            with open(self.path / MARKER, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("tool") == TOOL else None

    # ------------------------------------------------------------------ opening
    def open(self, version: str) -> dict:
        """Create or reopen DIR; returns the finished moves {(cell, move): row} of an earlier run. Only one
        batch at a time writes into DIR (a lock on moves.csv, held until `close`): a second run of the same
        command, started while the first still runs, removed the first's temporaries and appended the same
        moves again (52 rows for 32 moves, the totals in batch_summary.json counted twice)."""
        if self.resuming and self.begun_by != version:    # (the fingerprint holds the inputs, not the version: a
            warnings.warn(f"--out {self.path}: resuming a batch begun by toppra-app {self.begun_by} with {version}; "
                          f"moves.csv holds the moves of both (a new --out plans every move with {version})",
                          RuntimeWarning, stacklevel=2)     # resume after an upgrade mixed them unsaid)
        try:
            self.path.mkdir(exist_ok=True)
            if not self.resuming:                     # the marker first: a run stopped before it left a moves.csv
                self._atomic_text(MARKER, json.dumps(dict(tool=TOOL, version=version,   # the next run refused
                                                          fingerprint=self.fingerprint), indent=2) + "\n")
            self._moves = open(self.path / MOVES, "a+b")
            self._lock()
            self._remove_temporaries()
            done = self._finished_rows()
            if os.fstat(self._moves.fileno()).st_size == 0:
                self._moves.write((",".join(COLUMNS) + "\n").encode("utf-8"))
                self._flush()
        except OSError as exc:
            self.close()
            raise OutputError(f"--out {self.path}: cannot write ({exc.strerror or exc})") from None
        return done

    def _lock(self) -> None:
        try:
            fcntl.flock(self._moves.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.close()
            raise self._busy() from None

    def _busy(self) -> OutputError:
        return OutputError(f"--out {self.path}: another toppra-app batch is writing into it; let it finish (or stop "
                           f"it), then run the command again to resume")

    def _remove_temporaries(self) -> None:
        """This module's temporaries (`_atomic_bytes`) of a killed run: in DIR those of its own files, in
        trajectories/CELL/ those of move files. (Every ``.*.tmp-*`` file anywhere in DIR was removed, a user's
        ``notes/.draft.tmp-2`` too.)"""
        ours = {self.path: _TMP_TOP}
        trajectories = self.path / TRAJECTORIES
        if trajectories.is_dir() and not trajectories.is_symlink():
            ours.update({p: _TMP_MOVE for p in trajectories.iterdir() if p.is_dir() and not p.is_symlink()})
        for folder, pattern in ours.items():
            for p in folder.iterdir():
                if pattern.fullmatch(p.name) and p.is_file() and not p.is_symlink():
                    p.unlink()

    def _finished_rows(self) -> dict:
        """The rows in moves.csv, read through the locked handle (a torn last line is cut off)."""
        self._moves.seek(0)
        data = self._moves.read()
        if data and not data.endswith(b"\n"):            # torn last line of a killed run
            cut = data.rfind(b"\n") + 1
            self._moves.truncate(cut)
            data = data[:cut]
        reader = csv.DictReader(io.StringIO(data.decode("utf-8")))
        rows = list(reader)
        # a batch begun by a version with fewer columns goes on in its own (a longer row would shift them)
        self.columns = tuple(reader.fieldnames) if reader.fieldnames else COLUMNS
        return {(r["cell"], int(r["move"])): r for r in rows if r.get("move", "").isdigit()}

    def forget_partial_boxes(self, done: dict, boxes) -> None:
        """Boxes (cell id, 0-based box) of which `done` (`open`'s finished rows) holds one move of two: a run
        killed while writing a box's rows (one write per box) whose last line `open` cut off as torn. Their
        kept row is cut off moves.csv too — one truncation — and dropped from `done`, so the box is planned
        again and its two rows written together (the kept move appeared twice after a resume)."""
        keys = {(c, m) for c, b in boxes for m in (2 * b + 1, 2 * b + 2)}
        partial = {k for k in keys if k in done and (k[0], k[1] + (1 if k[1] % 2 else -1)) not in done}
        if not partial:
            return
        self._moves.seek(0)
        lines = self._moves.read().splitlines(keepends=True)
        cell, move = self.columns.index("cell"), self.columns.index("move")
        tail = 0                                          # the partial rows are the file's last ones
        for line in reversed(lines[1:]):
            row = next(csv.reader([line.decode("utf-8")]), [])
            if len(row) != len(self.columns) or not row[move].isdigit() or (row[cell], int(row[move])) not in partial:
                break
            tail += 1
        if tail != len(partial):                          # (cannot happen with one write per box: keep them)
            return
        try:
            self._moves.truncate(sum(len(x) for x in lines[:len(lines) - tail]))
            self._flush()
        except OSError as exc:
            raise self._failed(exc) from None
        for k in partial:
            del done[k]

    # ------------------------------------------------------------------ writing
    def _flush(self) -> None:
        self._moves.flush()
        os.fsync(self._moves.fileno())

    @staticmethod
    def _atomic_bytes(final: Path, data: bytes) -> None:
        """`final` written under a temporary name beside it (``.NAME.tmp-PID-XXXXXX``), then renamed."""
        tmp = final.parent / f".{final.name}.tmp-{os.getpid()}-{secrets.token_hex(3)}"
        try:
            tmp.write_bytes(data)
            os.replace(tmp, final)
        except OSError as exc:
            if exc.filename is None:          # (a write's error names no file: the line said "cannot write moves.csv")
                exc.filename = str(final)
            raise
        finally:
            if tmp.exists():
                tmp.unlink()

    def _atomic_text(self, name: str, text: str) -> None:
        self._atomic_bytes(self.path / name, text.encode("utf-8"))

    def write_outcome(self, outcome, trajectories: bool = True) -> None:
        """The trajectory files of one box, then its rows (flushed: a row means its file is complete)."""
        try:
            self._write_outcome(outcome, trajectories)
        except OSError as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: OSError) -> OutputError:
        """A full disk (or any write error) after the batch began: one line; what is finished is kept."""
        return OutputError(f"--out {self.path}: cannot write {exc.filename or MOVES}: {write_error(exc)}; the "
                           f"finished moves are kept (run the same command again to resume)")

    def _write_outcome(self, outcome, trajectories: bool) -> None:
        if trajectories and outcome.trajectories:
            folder = self.path / TRAJECTORIES / outcome.cell
            folder.mkdir(parents=True, exist_ok=True)
            written = []
            try:
                for label, data in outcome.trajectories.items():
                    self._atomic_bytes(folder / f"{label}.csv", data)
                    written.append(folder / f"{label}.csv")
            except OSError:                   # the box's rows are not written: no file of it without its row
                for p in written:
                    p.unlink(missing_ok=True)
                raise
        buf = io.StringIO()
        writer = csv.DictWriter(buf, self.columns, lineterminator="\n", extrasaction="ignore", restval="")
        for row in outcome.rows:
            writer.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})
        self._moves.write(buf.getvalue().encode("utf-8"))
        self._flush()

    def write_summary(self, summary: dict) -> None:
        self.write_text(SUMMARY, json.dumps(summary, indent=2, default=float) + "\n")

    def write_text(self, name: str, text: str) -> None:
        """One of this module's files (`SUMMARY`, `REPORT`), renamed into place."""
        try:
            self._atomic_text(name, text)
        except OSError as exc:
            raise self._failed(exc) from None

    def close(self) -> None:
        if getattr(self, "_moves", None) is not None:
            self._moves.close()
            self._moves = None
