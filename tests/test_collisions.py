"""Collision checks of the palletizing moves (coal): the certified stepping finds the same closest
approach as checking every 1 ms sample against every obstacle; a cell whose boxes touch is refused with
the box, move, time and bodies; summary and report carry the clearance."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from dynamics.forward_kinematics import forward_kinematics
from scenarios.palletizing import DEFAULT_CELL, load_cell, plan_pallet
from scenarios.palletizing import collisions as cl
from toppra_app.cli import main

coal = pytest.importorskip("coal")


def brute_force(cell, move, sample) -> float:
    """Every sample, every moving body against every obstacle (supports of the carried box left out)."""
    segs, tcp = cl._segments(cell, forward_kinematics(cell.robot, sample.q))
    obs = cl.obstacles(cell, move.box, move.kind)
    req, res = coal.DistanceRequest(), coal.DistanceResult()
    best = np.inf
    for name, kind, a, b, r in segs:
        L = float(np.linalg.norm(b[0] - a[0]))
        o = coal.CollisionObject(coal.Capsule(r, L) if kind == "capsule" else coal.Cylinder(r, L), coal.Transform3s())
        R, c = cl._poses_along(a, b)
        for k in range(len(sample.t)):
            o.setTransform(coal.Transform3s(np.ascontiguousarray(R[k]), c[k]))
            for _, oo, *_ in obs:
                res.clear()
                best = min(best, coal.distance(o, oo, req, res))
    if move.kind == "loaded":
        size = move.slot.box.size
        bottom = move.slot.centre[2] - 0.5 * size[2]
        o = coal.CollisionObject(coal.Box(*size), coal.Transform3s())
        for k in range(len(sample.t)):
            T = tcp[k]
            o.setTransform(coal.Transform3s(T[:3, :3].copy(), T[:3, 3] + 0.5 * size[2] * T[:3, 2]))
            for name, oo, _, _, top in obs:
                if name != "conveyor" and abs(top - bottom) >= 1e-6:
                    res.clear()
                    best = min(best, coal.distance(o, oo, req, res))
    return best


@pytest.fixture(scope="module")
def second_layer():
    cell = load_cell()
    return cell, plan_pallet(cell, boxes=[5, 7])          # boxes 6 and 8: the second layer, beside others


def test_certified_stepping_finds_the_closest_approach_of_every_sample(second_layer):
    cell, report = second_layer
    for m in report.moves:
        smp = m.plan.sample(1e-3)
        ours = cl.check_move(cell, m, smp)
        assert ours.checks < len(smp.t) / 2                # far fewer checks than samples
        assert ours.distance == pytest.approx(brute_force(cell, m, smp), abs=1e-9)
        assert 0.0 < ours.distance < 0.02                  # the carried box passes its neighbour by mm


def test_moves_carry_their_clearance_into_summary_and_report(second_layer, tmp_path):
    cell, report = second_layer
    s = report.summary()
    assert all("clearance" in m and m["clearance"]["min_distance_m"] > 0 for m in s["moves"])
    out = tmp_path / "o"
    assert main(["palletize", "--boxes", "6", "--no-plots", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["moves"][0]["clearance"]["bodies"][0] in ("carried box", "gripper")
    assert "closest approach per move" in (out / "report.html").read_text()


def test_touching_boxes_are_a_collision_naming_box_move_time_and_bodies(tmp_path, capsys):
    text = DEFAULT_CELL.read_text().replace("gap = 0.01", "gap = 0.0")
    (tmp_path / "tight.toml").write_text(text)
    assert main(["palletize", str(tmp_path / "tight.toml"), "--boxes", "2", "--no-plots", "--no-report",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "box 2 (L1R1C2), move 1 (loaded): the carried box collides with the box 1 (L1R1C1) at t = " in err
    assert not (tmp_path / "o").exists()


def test_collision_checking_can_be_switched_off(tmp_path):
    text = DEFAULT_CELL.read_text().replace("gap = 0.01", "gap = 0.0") + "\n[collision]\nenabled = false\n"
    (tmp_path / "c.toml").write_text(text)
    cell = load_cell(tmp_path / "c.toml")
    report = plan_pallet(cell, boxes=[1])
    assert all(m.clearance is None for m in report.moves)


# ------------------------------------------------------------------------------ URDF collision geometry
def _ur5_cell(tmp_path, ur5):
    text = DEFAULT_CELL.read_text().replace('robot = "iiwa7"', f'urdf = "{ur5}"\nrated_payload = 8.0')
    (tmp_path / "ur5.toml").write_text(text.replace('flange = "flange"', 'flange = "tool0"'))
    return tmp_path / "ur5.toml"


def test_urdf_collision_meshes_are_placed_as_pinocchio_places_them(tmp_path):
    """The UR5's collision meshes (package:// names resolved without settings) at random configurations:
    each one's distance to a box equals that of Pinocchio's own geometry model (buildGeomFromUrdf)."""
    pin = pytest.importorskip("pinocchio")
    from pathlib import Path
    from types import SimpleNamespace
    from fixtures import erd_path
    ur5 = erd_path("robots/ur_description/urdf/ur5_robot.urdf")
    if ur5 is None:
        pytest.skip("example-robot-data not installed")
    cell = load_cell(_ur5_cell(tmp_path, ur5), check_reach=False)
    model = pin.buildModelFromUrdf(ur5)
    geom = pin.buildGeomFromUrdf(model, ur5, pin.GeometryType.COLLISION, package_dirs=[str(Path(ur5).parents[4])])
    data, gdata = model.createData(), pin.GeometryData(geom)
    q = np.random.default_rng(4).uniform(-2.5, 2.5, (5, cell.robot.n))
    ours, _, _ = cl.moving_bodies(cell, SimpleNamespace(kind="return"), q)
    ours = {name: (g, R, t) for name, g, R, t, _, _ in ours}
    box = coal.CollisionObject(coal.Box(0.3, 0.2, 0.1), coal.Transform3s(np.eye(3), np.array([0.4, -0.3, 0.2])))
    req, res = coal.DistanceRequest(), coal.DistanceResult()
    compared = 0
    for k in range(len(q)):
        qp = np.zeros(model.nq)
        for i, name in enumerate(cell.robot.joint_names):
            qp[model.joints[model.getJointId(name)].idx_q] = q[k, i]
        pin.updateGeometryPlacements(model, data, geom, gdata, qp)
        for j, go in enumerate(geom.geometryObjects):
            link = model.frames[go.parentFrame].name
            if link not in ours:
                continue                                         # the fixed base_link is not moving
            res.clear()
            ref = coal.distance(coal.CollisionObject(go.geometry, coal.Transform3s(gdata.oMg[j].rotation,
                                                                                    gdata.oMg[j].translation)),
                                box, req, res)
            g, R, t = ours[link]
            res.clear()
            d = coal.distance(coal.CollisionObject(g, coal.Transform3s(np.ascontiguousarray(R[k]), t[k])), box, req, res)
            assert d == pytest.approx(ref, abs=1e-9), link
            compared += 1
    assert compared >= 5 * 6


def test_a_urdf_robot_is_checked_with_its_own_geometry(tmp_path, capsys):
    """The UR5 in the iiwa's cell: its upper arm and forearm pass through the conveyor at the pick."""
    from fixtures import erd_path
    ur5 = erd_path("robots/ur_description/urdf/ur5_robot.urdf")
    if ur5 is None:
        pytest.skip("example-robot-data not installed")
    assert main(["palletize", str(_ur5_cell(tmp_path, ur5)), "--boxes", "1", "--no-plots", "--no-report",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert re.search(r"move 1 \(loaded\): the (upper_arm|forearm)_link collides with the conveyor at t = 0.000 s", err)


@pytest.mark.parametrize("tcp_offset", [0.09, 0.004, 0.0])
def test_the_gripper_stays_clear_of_a_box_whose_top_face_is_at_the_tcp(tmp_path, tcp_offset):
    """A box whose top face holds the TCP (the box just placed, at the start of a return move) is 5 mm
    below any gripper body, measured by coal against the box itself; with the TCP at the flange
    (tcp_offset 0: the tool frame is the suction cup, the default) the old cylinder reached 5 mm *above*
    the flange, ended at the TCP and touched the box, so every cell of such a robot failed its first
    return move ("the gripper collides with the box 1 … penetration 0.0 mm")."""
    from types import SimpleNamespace
    text = DEFAULT_CELL.read_text().replace("tcp_offset = [0.0, 0.0, 0.09]", f"tcp_offset = [0.0, 0.0, {tcp_offset}]")
    (tmp_path / "c.toml").write_text(text)
    cell = load_cell(tmp_path / "c.toml", check_reach=False)
    q = np.random.default_rng(3).uniform(cell.robot.q_min, cell.robot.q_max, (4, cell.robot.n)) * 0.8
    bodies, tcp, _ = cl.moving_bodies(cell, SimpleNamespace(kind="return"), q)
    size = (0.2, 0.15, 0.1)
    req, res = coal.DistanceRequest(), coal.DistanceResult()
    grippers = [b for b in bodies if b[0] == "gripper"]
    assert len(grippers) == 1 or tcp_offset < 0.005        # a gripper body wherever it reaches below the flange
    for _, geom, R, t, _, _ in grippers:
        for k in range(len(q)):
            T = tcp[k]                                   # the box hangs below the TCP along tool z
            box = coal.CollisionObject(coal.Box(*size), coal.Transform3s(T[:3, :3].copy(), T[:3, 3] + 0.05 * T[:3, 2]))
            res.clear()
            d = coal.distance(coal.CollisionObject(geom, coal.Transform3s(np.ascontiguousarray(R[k]), t[k])), box, req, res)
            assert d >= 0.005 - 1e-9
            if tcp_offset > 0.005:
                assert d == pytest.approx(0.005, abs=1e-9)


def _penetration(a, b) -> float:
    """Penetration depth of two boxes standing upright ((centre xyz, yaw, size) each), by the separating axes:
    z and the four horizontal face normals (> 0: they overlap)."""
    (ca, ya, sa), (cb, yb, sb) = a, b
    depth = [0.5 * (sa[2] + sb[2]) - abs(ca[2] - cb[2])]
    R = [np.array([[np.cos(y), -np.sin(y)], [np.sin(y), np.cos(y)]]) for y in (ya, yb)]
    for axis in [*R[0].T, *R[1].T]:
        reach = [np.abs(Rk.T @ axis) @ (0.5 * np.asarray(s[:2])) for Rk, s in zip(R, (sa, sb))]
        depth.append(sum(reach) - abs(axis @ (np.asarray(cb[:2]) - ca[:2])))
    return min(depth)


def test_a_pallet_over_the_conveyor_is_refused_when_the_cell_is_read(tmp_path):
    """A pallet (or a box of its stack) placed into the conveyor or the box waiting on it was read and planned
    until a move said "the carried box collides with the conveyor ... raise [motion] clearance or
    approach_height". Now one line naming pallet.position when the file is read, exactly where the standing boxes
    overlap by the separating axes (own geometry: pallet a 15 cm slab, conveyor a 5 cm slab 0.6 m long and 10 cm
    wider than the box, the waiting box on it); not with [collision] enabled = false."""
    import copy
    from test_hostile_inputs import BASE, dump_toml
    from toppra_app.errors import InputError
    rng = np.random.default_rng(3)
    refused = 0
    for trial in range(30):
        doc = copy.deepcopy(BASE)
        doc["pallet"].update(position=[float(rng.uniform(-0.3, 0.6)), float(rng.uniform(-1.0, 0.0)),
                                       float(rng.uniform(-0.2, 0.2))], yaw_deg=float(rng.uniform(-180, 180)))
        f = tmp_path / f"cell{trial}.toml"
        f.write_text(dump_toml(doc))
        try:
            load_cell(f, check_reach=False)
            message = None
        except InputError as exc:
            message = str(exc)
            doc["collision"] = {"enabled": False}
            f.write_text(dump_toml(doc))
        cell = load_cell(f, check_reach=False)
        pick, yaw = cell.pick[:3, 3], np.deg2rad(doc["pick"]["yaw_deg"])
        size = cell.layer_boxes[0].size
        station = [(pick - [0, 0, size[2] + 0.025], yaw, (0.6, size[1] + 0.1, 0.05)),
                   (pick - [0, 0, 0.5 * size[2]], yaw, size)]
        pallet = (cell.pallet_pose[:3, 3] - [0, 0, 0.075], np.deg2rad(doc["pallet"]["yaw_deg"]), (*cell.pallet_size, 0.15))
        stack = [pallet] + [(s.centre, s.box_yaw, s.box.size) for s in cell.slots]
        overlap = max(_penetration(a, b) for a in station for b in stack) > cl.CONTACT
        assert (message is not None) == overlap, (trial, message)
        if message:
            refused += 1
            assert message.startswith(f"{f}: pallet.position: the ") and " overlaps the " in message and "\n" not in message
    assert 8 <= refused <= 22, refused


def test_meshes_are_read_again_when_changed_and_the_caches_stay_bounded(tmp_path):
    """A collision mesh edited on disk kept its first version for the life of the process, and every URDF cell
    loaded added its shapes (~17 kB) to a cache never emptied (a batch of URDF cells). Now a changed file is read
    again (its size and modification time are in the key) and at most `MAX_KEPT` entries are kept."""
    import os
    from scenarios.palletizing import collisions as col

    def stl(size):                  # an ASCII STL tetrahedron of edge `size`
        v = np.array([[0, 0, 0], [size, 0, 0], [0, size, 0], [0, 0, size]], float)
        faces = "".join("facet normal 0 0 0\n outer loop\n" + "".join(f"  vertex {x} {y} {z}\n" for x, y, z in v[list(f)])
                        + " endloop\nendfacet\n" for f in ((0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)))
        return f"solid t\n{faces}endsolid t\n"
    path = tmp_path / "part.stl"
    path.write_text(stl(0.1))
    first = col._mesh(str(path), (1.0, 1.0, 1.0))
    path.write_text(stl(0.25))
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10**9))
    second = col._mesh(str(path), (1.0, 1.0, 1.0))
    extent = lambda m: np.ptp(np.asarray(m.vertices()), axis=0)                                  # noqa: E731
    assert np.allclose(extent(first), 0.1) and np.allclose(extent(second), 0.25)
    for k in range(3 * col.MAX_KEPT):
        col._kept(col._SHAPES, ("x", k), lambda: k)
    assert len(col._SHAPES) <= col.MAX_KEPT and len(col._MESHES) <= col.MAX_KEPT
