"""Collision geometry of a URDF's links, placed on the bodies of the model `from_urdf` makes of the same
file (a welded link's shapes go to the body it is welded to). Shapes are plain data — box, cylinder,
sphere, capsule or mesh file — for a collision library (coal) to build.

``package://NAME/rest`` mesh names are resolved through `search_paths` (a directory or a list of directories
that hold a folder NAME, or are NAME), then ``ROS_PACKAGE_PATH``, then ``<prefix>/share`` of ``AMENT_PREFIX_PATH``
(a sourced ROS 2 workspace), then the URDF's own ancestors (a directory
named NAME, or holding NAME): example-robot-data's files resolve without any setting. ``file://`` and
relative names are taken from the URDF's directory."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..checks import ModelError, file_name, short_repr
from ..model import RobotModel
from .packages import find_in_package, package_roots, search_dirs
from .urdf_as_found import read_urdf_root
from .urdf_xml import Reader, one_line_errors


@dataclass(frozen=True)
class Shape:
    link: str
    body: int                  # the model's body the link is on
    T: np.ndarray              # (4, 4) the shape's frame in the body frame
    kind: str                  # "box", "cylinder", "sphere", "capsule", "mesh"
    size: tuple                # box (x, y, z); cylinder/capsule (radius, length); sphere (radius,); mesh scale (3)
    file: str | None = None    # mesh file, resolved


def resolve_uri(uri: str, urdf_path: str, search_paths=(), where: str = "") -> str:
    """The file a URDF's mesh name refers to (see the module doc); `ModelError` naming it (after `where`, e.g. the
    link) if it is not a regular file, or a ``package://`` name leaves its package with '..'."""
    base = os.path.dirname(os.path.abspath(urdf_path))
    shown = f"{where}: mesh {short_repr(uri)}" if where else f"mesh {short_repr(uri)}"
    if uri.startswith("file://") or not uri.startswith("package://"):
        path = uri[len("file://"):] if uri.startswith("file://") else uri
        path = path if os.path.isabs(path) else os.path.join(base, path)
        if not os.path.isfile(path):          # (coal's loader said it in six lines naming its C++ source, not the URDF)
            raise ModelError(f"{urdf_path}: {shown}: " + ("not a regular file" if os.path.exists(path)
                                                                else "no such file"))
        return path
    name, _, rest = uri[len("package://"):].partition("/")
    if os.path.normpath(rest or ".").split(os.sep)[0] == ".." or os.path.isabs(rest):
        raise ModelError(f"{urdf_path}: {shown}: the path leaves package '{name}' ('..'); name the file "
                         f"in its own package (package://OTHER/…)")
    roots = package_roots(_search_paths("resolve_uri", search_paths), urdf_path)
    found = find_in_package(name, rest, roots)
    folder = None if found is not None else find_in_package(name, "", roots, directory=True)
    if folder is not None:                       # (it said the package was not found)
        raise ModelError(f"{urdf_path}: {shown}: no such file in package '{name}' ({folder})")
    if found is None:
        raise ModelError(f"{urdf_path}: {shown}: package '{name}' not found (give its parent directory in "
                         f"package_paths / search_paths, or set ROS_PACKAGE_PATH or AMENT_PREFIX_PATH)")
    return found


def _search_paths(func: str, value) -> list[str]:
    """The directories of a `search_paths` argument: one (a str or a path) or a list of them; None: none."""
    return search_dirs(f"{func}: search_paths", value)


@one_line_errors
def collision_shapes(urdf_path, robot: RobotModel, search_paths=()) -> list[Shape]:
    """Every `<collision>` of every link that is on a moving body of `robot` (the model read from the
    same file; links of the fixed base are left out). `search_paths`: a directory or a list of them."""
    path = file_name("collision_shapes: urdf_path", urdf_path)
    if not isinstance(robot, RobotModel):
        raise ModelError(f"collision_shapes: robot: expected a RobotModel, got {type(robot).__name__}")
    search_paths = _search_paths("collision_shapes", search_paths)
    root = read_urdf_root(path, package_dirs=search_paths)        # (a xacro file: its packages too)
    rd = Reader(path)                                 # the same attribute parsing and errors as from_urdf

    def positive(elem, key, where):
        value = rd.number(elem, key, where)
        if not (np.isfinite(value) and value >= 0):
            raise rd.error(where, f"<{elem.tag} {key}=\"{elem.get(key)}\">: expected a finite number >= 0")
        return value

    shapes = []
    for link in root.findall("link"):
        name = link.get("name", "")
        try:
            body, T_body_link = robot.frame(name)
        except ModelError:
            continue                                   # on the fixed base (or not in the model)
        for k, col in enumerate(link.findall("collision")):
            where = f"link '{name}' <collision> {k + 1}"
            T = T_body_link @ rd.origin(col, where)
            g = rd.child(col, "geometry", where)
            if len(g) == 0:
                raise rd.error(where, "<geometry> is empty")
            g = g[0]
            if g.tag == "box":
                rd.attr(g, "size", where)                                # required
                shapes.append(Shape(name, body, T, "box", tuple(rd.vector(g, "size", where, None))))
            elif g.tag in ("cylinder", "capsule"):
                shapes.append(Shape(name, body, T, g.tag, (positive(g, "radius", where), positive(g, "length", where))))
            elif g.tag == "sphere":
                shapes.append(Shape(name, body, T, "sphere", (positive(g, "radius", where),)))
            elif g.tag == "mesh":
                scale = tuple(rd.vector(g, "scale", where, (1.0, 1.0, 1.0)))
                shapes.append(Shape(name, body, T, "mesh", scale,
                                    resolve_uri(rd.attr(g, "filename", where), path, search_paths, where)))
            else:
                raise rd.error(where, f"unknown geometry <{g.tag}>")
    return shapes
