"""Batch planning of many cells: `manifest` (what to plan), `tasks` (one box, where it runs), `run`
(serial, local Dask cluster or an existing scheduler), `store` (the output directory, streamed and
resumable). The command is `toppra-app batch` (scenarios/commands/batch.py; docs/batch.md)."""
