"""Where a ROS package named in a robot description is: ``package://NAME/rest`` (mesh names, xacro includes) and
xacro's ``$(find NAME)``. One lookup for `from_urdf`'s xacro expansion and `urdf_collision`'s meshes.

The directories searched, in order: the caller's (``package_dirs`` / ``search_paths``: a directory or a list of
directories, each holding a folder NAME or being NAME itself), then ``ROS_PACKAGE_PATH``, then the prefixes of
a sourced ROS 2 workspace (``AMENT_PREFIX_PATH``: ament installs package NAME's files in ``<prefix>/share/NAME``),
then the description file's own ancestors — so a file inside ``NAME/urdf/`` finds its own package, and
example-robot-data's files resolve without any setting. Without ROS, xacro's own ``$(find)`` needs `ament_index_python`, which is not
there (nor in a virtual environment beside a sourced ROS 2), and a mesh's ``package://`` is never looked up
by xacro; this lookup is what a user without ROS's Python packages has."""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..checks import ModelError, file_name, short_repr

__all__ = ["search_dirs", "package_roots", "find_in_package"]


def search_dirs(where: str, value) -> list[str]:
    """The directories of a ``package_dirs`` / ``search_paths`` argument: one (a str or a path) or a list of
    them; None: none. A one-line `ModelError` starting with `where` for anything else."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)):
        value = [value]
    elif not isinstance(value, Iterable):
        raise ModelError(f"{where}: expected a directory or a list of directories, got {short_repr(value)}")
    return [file_name(where, d) for d in value]


def package_roots(dirs: list[str], description_path: str) -> list[str]:
    """The directories to look for packages in (see the module doc), in order."""
    roots = list(dirs) + [p for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
    roots += [os.path.join(p, "share") for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    d = os.path.dirname(os.path.abspath(description_path))
    while True:
        roots.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            return roots
        d = parent


def find_in_package(name: str, rest: str, roots: list[str], directory: bool = False) -> str | None:
    """The file (or, `directory`, the folder) ``rest`` of package `name` in the first root that has it: the
    root's folder `name`, or the root itself when it is named `name`; None if no root has it."""
    exists = os.path.isdir if directory else os.path.isfile
    for root in roots:
        for base in (os.path.join(root, name), root if os.path.basename(os.path.normpath(root)) == name else None):
            target = base and (os.path.join(base, rest) if rest else base)
            if target and exists(target):
                return target
    return None
