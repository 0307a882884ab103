"""Random but physically valid robot models, for the tests and the complexity benchmarks — the one
generator of the project (the tests' fixtures and the tree benchmark build on it).

`random_robot` draws placements, axes and inertial data; options add friction, a random gravity
direction, a tool frame and a rated payload (drawn after the rest, so a model without them is the
same for the same seed). `random_tree_robot`, `binary_tree_robot`, `serial_chain_robot` and
`two_arm_robot` fix the tree's shape (Echeandia & Wensing's complexity experiments: chains, binary
trees; Chang & Khatib's two-armed tree for the operational-space inertia).
"""

from __future__ import annotations

import numpy as np

from .model import RobotModel
from .spatial import axis_rotation, homogeneous

__all__ = ["random_robot", "random_rotation", "random_inertia", "random_tree_robot", "binary_tree_parents",
           "binary_tree_robot", "serial_chain_robot", "two_arm_robot"]


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniformly distributed rotation matrix (from a random unit quaternion)."""
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def random_inertia(rng: np.random.Generator, mass: float) -> np.ndarray:
    """A physically consistent inertia about the COM: from random second moments σ of the mass
    distribution (I_xx = σ_y + σ_z, …, so the triangle inequality holds), turned by a random rotation."""
    sigma = rng.uniform(0.002, 0.05, size=3) * mass
    principal = np.array([sigma[1] + sigma[2], sigma[0] + sigma[2], sigma[0] + sigma[1]])
    R = random_rotation(rng)
    return R @ np.diag(principal) @ R.T


def random_robot(n: int, seed: int | np.random.Generator = 0, *, tree: bool = False,
                 prismatic=0.0, name: str | None = None, parents=None, friction: bool = False,
                 random_gravity: bool = False, tool_frame: str | None = None,
                 rated_payload: float | None = None) -> RobotModel:
    """A random kinematic chain (or tree when ``tree``, numbered in depth-first order) with n joints.

    Placements have random rotations and offsets up to ~0.3 m, axes are random unit vectors, masses
    in [0.5, 3] kg, inertias random rotations of principal moments that satisfy the triangle
    inequality. ``prismatic``: the fraction of prismatic joints (in expectation), or one boolean per
    joint. ``parents`` gives the tree's shape instead of drawing it.

    Drawn after the rest: ``friction`` (Coulomb in [0, 2], viscous in [0, 1]), ``random_gravity``
    (9.81 m/s² in a random direction), ``tool_frame`` (a frame of that name at a random pose on the last
    body, the default frame); ``rated_payload`` (kg) is set as given."""
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
    if np.ndim(prismatic) == 0:
        types = ["prismatic" if rng.random() < prismatic else "revolute" for _ in range(n)]
    else:
        types = ["prismatic" if p else "revolute" for p in prismatic]
    translations, axes = rng.uniform(-0.3, 0.3, (n, 3)), rng.normal(size=(n, 3))
    masses, coms = rng.uniform(0.5, 3.0, n), rng.uniform(-0.1, 0.1, (n, 3))
    extra = {}
    if friction:
        extra.update(coulomb=rng.uniform(0.0, 2.0, size=n), viscous=rng.uniform(0.0, 1.0, size=n))
    if random_gravity:
        g = rng.normal(size=3)
        extra["gravity"] = 9.81 * g / np.linalg.norm(g)
    if tool_frame is not None:
        extra.update(frames={tool_frame: (n - 1, homogeneous(random_rotation(rng), rng.uniform(-0.2, 0.2, 3)))},
                     tool_frame=tool_frame)
    return RobotModel.create(
        name=name or f"random{n}{'-tree' if tree else ''}", parents=parents, joint_types=types,
        placement_rotations=rotations, placement_translations=translations, axes=axes, masses=masses,
        coms=coms, inertias=inertias, rated_payload=rated_payload, **extra)


# ---------------------------------------------------------------------------------- tree shapes
def binary_tree_parents(n: int) -> list[int]:
    """Parents of a complete binary tree with n bodies (heap shape: node h has children 2h, 2h+1),
    numbered depth-first (pre-order) as Pinocchio requires."""
    order, stack = [], [1]
    while stack:
        h = stack.pop()
        if h <= n:
            order.append(h)
            stack.extend((2 * h + 1, 2 * h))
    number = {h: i for i, h in enumerate(order)}
    return [-1 if h == 1 else number[h // 2] for h in order]


def random_tree_robot(parents, seed: int = 0, *, prismatic: float = 0.0, name: str | None = None) -> RobotModel:
    """A physically valid random model on a given tree (random placements, axes and inertias)."""
    return random_robot(len(parents), seed, prismatic=prismatic, parents=parents, name=name or f"tree{len(parents)}")


def binary_tree_robot(n: int, seed: int = 0, *, prismatic: float = 0.0) -> RobotModel:
    return random_tree_robot(binary_tree_parents(n), seed, prismatic=prismatic, name=f"binary{n}")


def serial_chain_robot(n: int, seed: int = 0, *, prismatic: float = 0.0) -> RobotModel:
    return random_tree_robot(list(range(-1, n - 1)), seed, prismatic=prismatic, name=f"chain{n}")


def two_arm_robot(n: int, seed: int = 0) -> RobotModel:
    """A trunk carrying two equal arms (n bodies in all; n ≥ 18 gives 6-joint arms and an invertible
    12×12 Λ) with a frame at each arm's tip."""
    trunk = max(1, n - 2 * (n // 3))
    arm = (n - trunk) // 2
    parents = list(range(-1, trunk - 1))
    for _ in range(2):
        parents += [trunk - 1] + list(range(len(parents), len(parents) + arm - 1))
    base = random_tree_robot(parents, seed, name=f"two-arms{n}")
    tip = np.eye(4)
    tip[:3, 3] = 0.1
    return base.replace(frame_names=("left", "right"), frame_bodies=np.array([trunk + arm - 1, n - 1]),
                        frame_transforms=np.array([tip, tip]))
