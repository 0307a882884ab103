"""Collision geometry of a URDF's links, placed on the bodies of the model `from_urdf` makes of the same
file (a welded link's shapes go to the body it is welded to). Shapes are plain data — box, cylinder,
sphere, capsule or mesh file — for a collision library (coal) to build.

``package://NAME/rest`` mesh names are resolved through `search_paths` (directories that hold a folder
NAME, or are NAME), then ``ROS_PACKAGE_PATH``, then the URDF's own ancestors (a directory named NAME, or
holding NAME): example-robot-data's files resolve without any setting. ``file://`` and relative names are
taken from the URDF's directory."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .builders import homogeneous, rpy_matrix
from .model import ModelError, RobotModel


@dataclass(frozen=True)
class Shape:
    link: str
    body: int                  # the model's body the link is on
    T: np.ndarray              # (4, 4) the shape's frame in the body frame
    kind: str                  # "box", "cylinder", "sphere", "capsule", "mesh"
    size: tuple                # box (x, y, z); cylinder/capsule (radius, length); sphere (radius,); mesh scale (3)
    file: str | None = None    # mesh file, resolved


def resolve_uri(uri: str, urdf_path: str, search_paths=()) -> str:
    """The file a URDF's mesh name refers to (see the module doc); `ModelError` naming it if none exists."""
    base = os.path.dirname(os.path.abspath(urdf_path))
    if uri.startswith("file://"):
        path = uri[len("file://"):]
        return path if os.path.isabs(path) else os.path.join(base, path)
    if not uri.startswith("package://"):
        return uri if os.path.isabs(uri) else os.path.join(base, uri)
    name, _, rest = uri[len("package://"):].partition("/")
    roots = list(search_paths) + [p for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
    d = base
    while True:
        roots.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for root in roots:
        for candidate in (os.path.join(root, name, rest), os.path.join(root, rest) if os.path.basename(root) == name
                          else None):
            if candidate and os.path.isfile(candidate):
                return candidate
    raise ModelError(f"{urdf_path}: mesh '{uri}': package '{name}' not found (give its parent directory in "
                     f"package_paths / search_paths, or set ROS_PACKAGE_PATH)")


def _floats(text, n, where):
    try:
        v = [float(x) for x in (text or "").split()]
    except ValueError:
        v = []
    if len(v) != n or not np.isfinite(v).all():
        raise ModelError(f"{where}: expected {n} finite numbers, got '{text}'")
    return v


def collision_shapes(urdf_path, robot: RobotModel, search_paths=()) -> list[Shape]:
    """Every `<collision>` of every link that is on a moving body of `robot` (the model read from the
    same file; links of the fixed base are left out)."""
    path = os.fspath(urdf_path)
    from .urdf_as_found import read_urdf_root
    root = read_urdf_root(path)
    shapes = []
    for link in root.findall("link"):
        name = link.get("name", "")
        try:
            body, T_body_link = robot.frame(name)
        except ModelError:
            continue                                   # on the fixed base (or not in the model)
        for k, col in enumerate(link.findall("collision")):
            where = f"{path}: link '{name}' <collision> {k + 1}"
            origin = col.find("origin")
            xyz = _floats(origin.get("xyz", "0 0 0"), 3, where + " <origin xyz>") if origin is not None else [0, 0, 0]
            rpy = _floats(origin.get("rpy", "0 0 0"), 3, where + " <origin rpy>") if origin is not None else [0, 0, 0]
            T = T_body_link @ homogeneous(rpy_matrix(*rpy), np.array(xyz))
            geom = col.find("geometry")
            if geom is None or len(geom) == 0:
                raise ModelError(f"{where}: missing <geometry>")
            g = geom[0]
            if g.tag == "box":
                shapes.append(Shape(name, body, T, "box", tuple(_floats(g.get("size"), 3, where + " <box size>"))))
            elif g.tag in ("cylinder", "capsule"):
                r = _floats(g.get("radius"), 1, where + f" <{g.tag} radius>")[0]
                L = _floats(g.get("length"), 1, where + f" <{g.tag} length>")[0]
                shapes.append(Shape(name, body, T, g.tag, (r, L)))
            elif g.tag == "sphere":
                shapes.append(Shape(name, body, T, "sphere", (_floats(g.get("radius"), 1, where + " <sphere radius>")[0],)))
            elif g.tag == "mesh":
                scale = tuple(_floats(g.get("scale", "1 1 1"), 3, where + " <mesh scale>"))
                shapes.append(Shape(name, body, T, "mesh", scale, resolve_uri(g.get("filename", ""), path, search_paths)))
            else:
                raise ModelError(f"{where}: unknown geometry <{g.tag}>")
    return shapes
