"""`toppra-app bench ik`: how often the pose IK of palletizing cells reaches its poses with one start
against several starts × the box's symmetric yaws, and what the recursive sweeps cost along the paths.

Cells for the iiwa 7 (built-in, the default cell), the Panda (example-robot-data URDF, fingers locked),
the UR5e (built-in) and the UR10 (example-robot-data URDF): the default cell's pick, pallet and boxes are
scaled about the shoulder by the robot's reach (measured: the farthest TCP from the shoulder over random
postures) relative to the iiwa's. Poses: the pick and the pallet pattern's place poses, plus random
tool-down poses around the robot (radius 0.3–0.95 × reach from the base axis, any azimuth and yaw,
height shoulder −0.6 … +0.3 × reach). A pose counts as reachable when any method here reaches it (one
start, the cell's several starts, or a last search from 16 more random starts); success rates are over
the reachable poses.
"""

from __future__ import annotations

import copy
import math
import time

import numpy as np

ROBOTS = ("iiwa7", "panda-urdf", "ur5e", "ur10-urdf")
EXHAUSTIVE_STARTS = 16


def _reach(robot, frame) -> tuple[np.ndarray, float]:
    """(shoulder position: joint 2's origin, farthest ``frame`` origin from it over 4000 random postures)."""
    from dynamics.forward_kinematics import forward_kinematics, frame_pose
    from dynamics.inverse_kinematics import random_seeds
    Q = random_seeds(robot, 4000, seed=5, margin=0.0)
    shoulder = forward_kinematics(robot, np.zeros(robot.n))[1, :3, 3]
    P = frame_pose(robot, Q, frame)[:, :3, 3]
    return shoulder, float(np.linalg.norm(P - shoulder, axis=1).max())


def _cell_document(name: str) -> tuple[dict, str]:
    """The default cell's document for robot ``name`` (before scaling) and the robot's flange."""
    from benchmarks.cases import erd_path
    from scenarios.palletizing import DEFAULT_CELL
    from toppra_app.textfile import read_toml
    doc = copy.deepcopy(read_toml(DEFAULT_CELL, 1 << 20, "a cell file"))
    c = doc["cell"]
    c["name"] = f"{name} palletizing (bench ik)"
    del c["robot"]
    if name == "panda-urdf":
        c.update(urdf=erd_path("robots/panda_description/urdf/panda.urdf"), flange="panda_link8",
                 locked_joints={"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}, tool_frame="panda_hand")
    elif name == "ur10-urdf":
        c.update(urdf=erd_path("robots/ur_description/urdf/ur10_robot.urdf"), flange="tool0")
    else:
        c.update(robot=name, flange="flange")
    for b in doc["boxes"].values():                  # light enough for every robot's rating
        b["mass"] = 1.0
        b.pop("com_offset", None)
    return doc, c["flange"]


def make_cell(name: str):
    """The default cell for robot ``name``, scaled about the shoulder by its reach (see the module text)."""
    from pathlib import Path

    from scenarios.palletizing import cell_from_document
    doc, flange = _cell_document(name)
    probe = cell_from_document(doc, f"<bench ik {name}>", Path("."), name, check_reach=False)
    iiwa = cell_from_document(_cell_document("iiwa7")[0], "<bench ik iiwa7>", Path("."), "iiwa7", check_reach=False)
    sh, reach = _reach(probe.robot, "tcp")
    sh0, reach0 = _reach(iiwa.robot, "tcp")
    s = reach / reach0
    for key in ("pick", "pallet"):
        doc[key]["position"] = (sh + s * (np.asarray(doc[key]["position"]) - sh0)).tolist()
    doc["pallet"]["size"] = (s * np.asarray(doc["pallet"]["size"])).tolist()
    for b in doc["boxes"].values():
        b["size"] = (s * np.asarray(b["size"])).tolist()
    if probe.robot.n == 6:                           # UR family: elbow up, wrist down, joint 1 towards the pick
        p = doc["pick"]["position"]
        doc["cell"]["preferred_posture_deg"] = [math.degrees(math.atan2(p[1], p[0])), -90.0, 90.0, -90.0, -90.0, 0.0]
    cell = cell_from_document(doc, f"<bench ik {name}>", Path("."), name, check_reach=False)
    return cell, sh, reach, s


def _random_poses(cell, shoulder, reach, count, rng):
    from scenarios.palletizing.cell import tool_down_pose
    out = []
    for _ in range(count):
        r = rng.uniform(0.3, 0.95) * reach
        az, yaw = rng.uniform(-np.pi, np.pi, size=2)
        z = shoulder[2] + rng.uniform(-0.6, 0.3) * reach
        out.append(tool_down_pose([r * math.cos(az), r * math.sin(az), z], yaw))
    return out


def _pose_rows(cell, poses, currents, box, follow=False, known=None):
    """Per pose: one start (the current posture, the pose's own yaw) and the cell's several starts × yaws
    (`scenarios.palletizing.moves._solve_pose`). ``follow``: the current posture of a pose is the posture
    chosen for the one before (a robot going from pose to pose; ``currents[0]`` first). ``known``: the
    reachability of every pose from an earlier pass (no new search)."""
    from dynamics.inverse_kinematics import random_seeds, solve_ik, solve_ik_multistart
    from scenarios.palletizing.cell import TCP_FRAME, tool_down_pose
    from scenarios.palletizing.moves import _solve_pose, symmetric_yaws
    rows = []
    q_now = currents[0]
    for i, T in enumerate(poses):
        q0 = q_now if follow else currents[i]
        yaw = math.atan2(T[1, 0], T[0, 0])
        targets = [tool_down_pose(T[:3, 3], yaw + d) for d in symmetric_yaws(box)]
        t0 = time.perf_counter()
        one = solve_ik(cell.robot, T, q0, TCP_FRAME, rot_weight=cell.rot_weight)
        t1 = time.perf_counter()
        ms = _solve_pose(cell, targets, q0)
        t2 = time.perf_counter()
        reachable = one.success or ms.success
        if known is not None:
            reachable = reachable or known[i]
        elif not reachable:
            ex = solve_ik_multistart(cell.robot, targets, [random_seeds(cell.robot, EXHAUSTIVE_STARTS, seed=99)],
                                     TCP_FRAME, reference=q0, rot_weight=cell.rot_weight)
            reachable = ex.success
        if ms.success:
            q_now = ms.best.q
        rows.append(dict(single=one.success, multi=ms.success, reachable=reachable, solves=ms.attempts,
                         t_single=t1 - t0, t_multi=t2 - t1, sweeps_single=one.sweeps,
                         closest_mm=1e3 * ms.closest.pos_err))
    return rows


def run_ik_benchmark(out=print, quick: bool = False, robots=None) -> dict:
    from benchmarks.cases import available_robots
    from scenarios.palletizing import IKFailure, move_geometry, pick_posture
    n_random = 10 if quick else 30
    have = set(available_robots())
    names = [r for r in (robots or ROBOTS) if r in have]
    results = {}
    for name in names:
        cell, shoulder, reach, scale = make_cell(name)
        rng = np.random.default_rng(2026)
        # the pattern as the cell solved it before several starts: the pick from the preferred posture,
        # every place from that pick posture (its single-start solution when it has one)
        from dynamics.inverse_kinematics import solve_ik
        pick_rows = _pose_rows(cell, [cell.pick], [cell.q_preferred], cell.layer_boxes[0])
        one = solve_ik(cell.robot, cell.pick, cell.q_preferred, "tcp", rot_weight=cell.rot_weight)
        try:
            q_pick = one.q if one.success else pick_posture(cell)
        except IKFailure:
            q_pick = cell.q_preferred
        places = [s.place for s in cell.slots]
        pat_rows = pick_rows + _pose_rows(cell, places, [q_pick] * len(places), cell.layer_boxes[0])
        rnd = _random_poses(cell, shoulder, reach, n_random, rng)
        rnd_rows = _pose_rows(cell, rnd, [cell.q_preferred] * len(rnd), cell.layer_boxes[0])
        seq_rows = _pose_rows(cell, rnd, [cell.q_preferred], cell.layer_boxes[0], follow=True,
                              known=[r["reachable"] for r in rnd_rows])
        # the loaded moves' paths: recursive sweeps, polished samples
        track = dict(moves=0, failed=0, samples=0, sweeps=0, polished=0, seconds=0.0)
        for s in list(cell.slots):
            try:
                geo = move_geometry(cell, s)                 # the cell's pick and place postures first
            except IKFailure:
                track["failed"] += 1
                continue
            track["moves"] += 1
            track["samples"] += len(geo.q)
            track["sweeps"] += geo.ik_sweeps
            track["polished"] += geo.ik_polished
            track["seconds"] += geo.ik_time
        results[name] = dict(reach=reach, scale=scale, pattern=pat_rows, random=rnd_rows, sequence=seq_rows,
                             track=track)
    _print(out, results, n_random)
    return results


def _rate(rows, key):
    """(successes among the reachable rows, number of reachable rows)."""
    ok = [r for r in rows if r["reachable"]]
    return sum(r[key] for r in ok), len(ok)


KINDS = {"pattern": "pattern", "random": "random, from home", "sequence": "random, from the previous"}


def _print(out, results, n_random):
    out(f"## IK success rate (`toppra-app bench ik`: the pick and the pallet pattern of the default cell "
        f"scaled by the robot's reach; {n_random} random tool-down poses per robot, solved from the home "
        f"posture and in sequence from the previous pose's posture)\n")
    out("| robot | poses | reachable | one start | several starts × yaws | solves/pose | one start ms | "
        "several ms (reachable) | several ms (unreachable) | sweeps/solve (one start) |")
    out("|---|---|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        for kind, label in KINDS.items():
            rows = r[kind]
            s1, n = _rate(rows, "single")
            sm, _ = _rate(rows, "multi")
            ok = [x for x in rows if x["reachable"]]
            bad = [x for x in rows if not x["reachable"]]
            solves = np.mean([x["solves"] for x in ok]) if ok else float("nan")
            t1 = 1e3 * np.mean([x["t_single"] for x in ok]) if ok else float("nan")
            tm = 1e3 * np.mean([x["t_multi"] for x in ok]) if ok else float("nan")
            tb = f"{1e3 * np.mean([x['t_multi'] for x in bad]):.0f}" if bad else "–"
            sw = np.mean([x["sweeps_single"] for x in ok]) if ok else float("nan")
            out(f"| {name} ({label}) | {len(rows)} | {n} | {s1}/{n} ({100 * s1 / max(n, 1):.0f} %) | "
                f"{sm}/{n} ({100 * sm / max(n, 1):.0f} %) | {solves:.1f} | {t1:.1f} | {tm:.1f} | {tb} | {sw:.0f} |")
    out("\n| robot | reach m (shoulder → TCP) | scale | loaded moves tracked | path samples | recursive sweeps | "
        "sweeps/sample | polished samples | IK s |")
    out("|---|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        t = r["track"]
        per = t["sweeps"] / max(t["samples"], 1)
        out(f"| {name} | {r['reach']:.3f} | {r['scale']:.2f} | {t['moves']}/{t['moves'] + t['failed']} | "
            f"{t['samples']} | {t['sweeps']} | {per:.2f} | "
            f"{t['polished']} ({100 * t['polished'] / max(t['samples'], 1):.0f} %) | {t['seconds']:.2f} |")
