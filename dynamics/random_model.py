"""Random but physically valid robot models, for tests and the complexity benchmarks."""

from __future__ import annotations

import numpy as np

from .model import RobotModel
from .spatial import axis_rotation


def random_robot(n: int, seed: int | np.random.Generator = 0, *, tree: bool = False,
                 prismatic: float = 0.0, name: str | None = None, parents=None) -> RobotModel:
    """A random kinematic chain (or tree when ``tree``, numbered in depth-first order) with n joints.

    Placements have random rotations and offsets up to ~0.3 m, axes are random unit vectors, masses
    in [0.5, 3] kg, inertias random rotations of principal moments that satisfy the triangle
    inequality. A fraction ``prismatic`` of the joints (in expectation) is prismatic. ``parents``
    gives the tree's shape instead of drawing it."""
    rng = np.random.default_rng(seed)
    given = parents is not None
    parents = list(parents) if given else [-1]
    for i in range(1, 0 if given else n):
        if tree:   # depth-first (pre-)order, as Pinocchio needs: the parent is on the path to body i-1
            path = [i - 1]
            while path[-1] >= 0:
                path.append(parents[path[-1]])
            parents.append(int(rng.choice(path)))
        else:
            parents.append(i - 1)
    rotations, inertias = [], []
    for _ in range(n):
        a = rng.normal(size=3)
        rotations.append(axis_rotation(a / np.linalg.norm(a), np.array([rng.uniform(-np.pi, np.pi)]))[0])
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        ev = np.sort(rng.uniform(0.01, 0.1, 3))
        ev[2] = min(ev[2], ev[0] + ev[1])
        inertias.append(Q @ np.diag(ev) @ Q.T)
    types = ["prismatic" if rng.random() < prismatic else "revolute" for _ in range(n)]
    return RobotModel.create(
        name=name or f"random{n}{'-tree' if tree else ''}", parents=parents, joint_types=types,
        placement_rotations=rotations, placement_translations=rng.uniform(-0.3, 0.3, (n, 3)),
        axes=rng.normal(size=(n, 3)), masses=rng.uniform(0.5, 3.0, n),
        coms=rng.uniform(-0.1, 0.1, (n, 3)), inertias=inertias)
