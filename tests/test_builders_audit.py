"""An arm without a URDF, built from its data sheet: the DH/MDH builders against Pinocchio on a URDF written here
by hand (DH frames as fixed joints, so Pinocchio itself moves the inertial data), with the rotor inertia as
Pinocchio's `model.armature`; the same arm as DH and as MDH; tables written in degrees, transposed COMs,
tensors in kg·mm², and fields set with `replace`."""

import warnings

import numpy as np
import pytest

import dynamics as dyn
from dynamics import ModelError
from dynamics.builders import from_dh, from_mdh, rotx
from dynamics.io import robots
from fixtures import assert_rel, random_inertia, random_states

pin = pytest.importorskip("pinocchio")
PI = np.pi

# KUKA KR 6 R900 sixx (KR AGILUS) data-sheet geometry as a standard DH table, θ-offsets as usually tabulated;
# the inertial data and gear ratios are invented (the test compares two computations of the same numbers)
ALPHA = [-PI / 2, 0.0, -PI / 2, PI / 2, -PI / 2, 0.0]
A = [0.025, 0.455, 0.035, 0.0, 0.0, 0.0]
D = [0.400, 0.0, 0.0, 0.420, 0.0, 0.080]
OFF = [0.0, -PI / 2, 0.0, 0.0, 0.0, PI]


def _inertials(seed=7):
    rng = np.random.default_rng(seed)
    masses = rng.uniform(0.5, 12.0, 6)
    coms = rng.uniform(-0.15, 0.15, (6, 3))
    inertias = np.array([random_inertia(rng, m) for m in masses])
    gear, jm = rng.uniform(50, 160, 6), rng.uniform(5e-5, 4e-4, 6)
    return masses, coms, inertias, gear**2 * jm          # armature G²·J_m (kg·m²)


def _f(x):
    return repr(float(x))


def _inertial(name, m, c, I):
    return (f'<link name="{name}"><inertial><origin xyz="{_f(c[0])} {_f(c[1])} {_f(c[2])}"/><mass value="{_f(m)}"/>'
            f'<inertia ixx="{_f(I[0, 0])}" iyy="{_f(I[1, 1])}" izz="{_f(I[2, 2])}" ixy="{_f(I[0, 1])}" '
            f'ixz="{_f(I[0, 2])}" iyz="{_f(I[1, 2])}"/></inertial></link>')


def _joint(name, kind, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0)):
    limit = '<axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="1" effort="1"/>' if kind != "fixed" else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{" ".join(map(_f, xyz))}" rpy="{" ".join(map(_f, rpy))}"/>{limit}</joint>')


def _urdf(convention, types, masses, coms, inertias):
    """The table as URDF, by the conventions' definitions alone. DH: joint i turns about z_{i-1} (θ-offset as
    the joint origin's yaw), then a fixed joint TransZ(d) TransX(a) RotX(α) to DH frame i, which carries link
    i's inertial data. MDH: a fixed joint TransX(a_{i-1}) RotX(α_{i-1}), then joint i at TransZ(d_i) RotZ(θ-offset),
    Craig's frame i carrying the data. Returns the text and the name of the last frame."""
    kinds = ["prismatic" if t == "P" else "revolute" for t in types]
    out, prev = ['<robot name="kr6">', '<link name="base"/>'], "base"
    for i in range(6):
        if convention == "dh":
            out += [f'<link name="b{i}"/>', _joint(f"j{i}", kinds[i], prev, f"b{i}", rpy=(0, 0, OFF[i])),
                    _inertial(f"f{i}", masses[i], coms[i], inertias[i]),
                    _joint(f"e{i}", "fixed", f"b{i}", f"f{i}", xyz=(A[i], 0, D[i]), rpy=(ALPHA[i], 0, 0))]
        else:
            out += [f'<link name="p{i}"/>', _joint(f"e{i}", "fixed", prev, f"p{i}", xyz=(A[i], 0, 0), rpy=(ALPHA[i], 0, 0)),
                    _inertial(f"f{i}", masses[i], coms[i], inertias[i]),
                    _joint(f"j{i}", kinds[i], f"p{i}", f"f{i}", xyz=(0, 0, D[i]), rpy=(0, 0, OFF[i]))]
        prev = f"f{i}"
    return "\n".join(out + ["</robot>"]), prev


@pytest.mark.parametrize("convention", ["dh", "mdh"])
@pytest.mark.parametrize("types", ["RRRRRR", "RRPRRP"])
def test_table_with_rotor_inertia_equals_pinocchio_on_a_hand_written_urdf(convention, types):
    """FK of the last table frame, M, RNEA and gravity to 1e-12 (relative) against Pinocchio, with each rotor's
    G²·J_m as `armature` (Pinocchio's `model.armature`, on M's diagonal). from_mdh did not take `armature` (nor
    `realisable_inertias`, which from_dh takes): a TypeError for an MDH table with gear ratios."""
    masses, coms, inertias, arm = _inertials()
    build = from_dh if convention == "dh" else from_mdh
    robot = build("kr6", ALPHA, A, D, OFF, masses, coms, inertias, joint_types=types, armature=arm)
    assert np.array_equal(robot.armature, arm)
    text, last = _urdf(convention, types, masses, coms, inertias)
    model = pin.buildModelFromXML(text)
    model.armature = arm
    data = model.createData()
    for q, qd, qdd in zip(*random_states(robot, 6, 11)):
        pin.framesForwardKinematics(model, data, q)
        assert_rel(dyn.frame_pose(robot, q, "flange"), data.oMf[model.getFrameId(last)].homogeneous, 1e-12, "flange")
        M = pin.crba(model, data, q)
        assert_rel(dyn.mass_matrix(robot, q), np.triu(M) + np.triu(M, 1).T, 1e-12, "M")
        assert_rel(dyn.inverse_dynamics(robot, q, qd, qdd), pin.rnea(model, data, q, qd, qdd), 1e-12, "RNEA")
        assert_rel(dyn.gravity_torques(robot, q), pin.computeGeneralizedGravity(model, data, q), 1e-12, "g")
    rigid = build("kr6", ALPHA, A, D, OFF, masses, coms, inertias, joint_types=types, realisable_inertias=False)
    q = random_states(robot, 1, 3)[0][0]
    assert_rel(dyn.mass_matrix(robot, q), dyn.mass_matrix(rigid, q) + np.diag(arm), 1e-14, "M + armature")


def test_the_same_arm_as_dh_and_as_mdh():
    """Craig's frame i is DH frame i shifted back along the link: DH frame i = Craig frame i · TransX(a_i)
    RotX(α_i). The MDH table is the DH table's α, a moved one row down; the COMs map by that transform and
    the inertias by RotX(α_i); the DH flange is the MDH flange times TransX(a_6) RotX(α_6)."""
    masses, coms, inertias, arm = _inertials(3)
    dh = from_dh("kr6", ALPHA, A, D, OFF, masses, coms, inertias, armature=arm)
    shift = [np.eye(4) for _ in range(6)]
    for i in range(6):
        shift[i][:3, :3], shift[i][0, 3] = rotx(ALPHA[i]), A[i]
    coms_m = np.array([shift[i][:3, :3] @ coms[i] + shift[i][:3, 3] for i in range(6)])
    inertias_m = np.array([shift[i][:3, :3] @ inertias[i] @ shift[i][:3, :3].T for i in range(6)])
    mdh = from_mdh("kr6", [0.0] + ALPHA[:5], [0.0] + A[:5], D, OFF, masses, coms_m, inertias_m,
                   flange=shift[5], armature=arm)
    for q, qd, qdd in zip(*random_states(dh, 5, 4)):
        assert_rel(dyn.frame_pose(mdh, q, "flange"), dyn.frame_pose(dh, q, "flange"), 1e-13, "flange")
        assert_rel(dyn.mass_matrix(mdh, q), dyn.mass_matrix(dh, q), 1e-13, "M")
        assert_rel(dyn.inverse_dynamics(mdh, q, qd, qdd), dyn.inverse_dynamics(dh, q, qd, qdd), 1e-13, "RNEA")


@pytest.mark.parametrize("build", [from_dh, from_mdh])
@pytest.mark.parametrize("key, value, shown", [
    ("alpha", np.degrees(ALPHA), "alpha: -90 for joint 1"),
    ("theta_offset", np.degrees(OFF), "theta_offset: -90 for joint 2"),
])
def test_a_table_in_degrees_is_refused(build, key, value, shown):
    """α = −90 (degrees) was taken as −90 rad: a different arm, built without a word. Any angle has an equal
    one within ±2π, so an angle beyond is refused in one line naming the column, the joint and the unit."""
    masses, coms, inertias, _ = _inertials()
    table = dict(alpha=ALPHA, a=A, d=D, theta_offset=OFF)
    table[key] = value
    with pytest.raises(ModelError, match=rf"robot 'kr6': {shown} is beyond ±2π: DH angles are in radians") as info:
        build("kr6", table["alpha"], table["a"], table["d"], table["theta_offset"], masses, coms, inertias)
    assert "\n" not in str(info.value)
    from_dh("kr6", ALPHA, A, D, [2 * PI, -2 * PI, 0, 0, 0, 0], masses, coms, inertias)      # ±2π itself is an angle


@pytest.mark.parametrize("build", [from_dh, from_mdh])
def test_coms_given_as_columns_are_refused(build):
    """COMs as a (3, n) array (one column per link, as a spreadsheet copies them) were reshaped to (n, 3):
    every link's COM scrambled. Now refused naming the robot, the field and both shapes."""
    masses, coms, inertias, _ = _inertials()
    with pytest.raises(ModelError, match=r"robot 'kr6': coms: expected shape \(6, 3\), got shape \(3, 6\)"):
        build("kr6", ALPHA, A, D, OFF, masses, coms.T, inertias)
    flat = build("kr6", ALPHA, A, D, OFF, masses, coms.reshape(-1), inertias)      # 3n values in order: kept
    assert np.array_equal(flat.masses, masses)


def test_rotor_inertia_set_by_replace_is_checked_and_copied():
    """`robot.replace(armature=list)` kept the caller's list: changing it afterwards changed the immutable
    model's M; inf went in (an infinite M) and text ended in numpy's UFuncTypeError. Now checked as `create`
    does (a scalar for every joint, finite, one line naming the field) and stored read-only."""
    robot = dyn.load_robot("ur5e")
    given = [0.5] * 6
    geared = robot.replace(armature=given)
    given[0] = 100.0
    q = np.zeros(6)
    assert_rel(dyn.mass_matrix(geared, q), dyn.mass_matrix(robot, q) + 0.5 * np.eye(6), 1e-14, "M")
    assert not geared.armature.flags.writeable
    assert np.array_equal(robot.replace(armature=0.5).armature, np.full(6, 0.5))
    for bad, shown in ((np.inf, "values must be finite"), ([1.0] * 5, "expected 6 values"),
                       (["1"] * 6, "expected a number or 6 numbers"), ([-1.0] * 6, "values >= 0")):
        with pytest.raises(ModelError, match=rf"armature: .*{shown}"):
            robot.replace(armature=bad)


def test_replace_copies_and_checks_every_field_it_is_given():
    """After a data-sheet build, names and numbers are set with `replace`. A list of joint names or types was
    kept as the caller's list (changing it afterwards turned a revolute joint of the "immutable" model into a
    prismatic one: another M), axes or parents given as lists ended in AttributeError ('list' object has no
    attribute 'shape'), a rated payload "7" in a TypeError, and realisable_inertias="no" was taken (as True).
    Now each is copied as `create` does, or refused in one line naming the field."""
    robot = from_dh("kr6", ALPHA, A, D, OFF, *_inertials()[:3])
    names, kinds = [f"A{i + 1}" for i in range(6)], ["revolute"] * 6
    renamed = robot.replace(joint_names=names, joint_types=kinds, axes=[[0, 0, 2.0 / 2]] * 6, parents=range(-1, 5))
    names[0], kinds[0] = "X", "prismatic"
    assert renamed.joint_names[0] == "A1" and renamed.joint_types[0] == "revolute"
    q = random_states(robot, 1, 5)[0][0]
    assert_rel(dyn.mass_matrix(renamed, q), dyn.mass_matrix(robot, q), 1e-15, "M")
    assert renamed.joint_index("A3") == 2 and not renamed.axes.flags.writeable
    assert robot.replace(rated_payload=np.int64(6)).rated_payload == 6.0
    for change, shown in ((dict(rated_payload="7"), r"rated_payload: expected a mass in kg >= 0 \(or None\), got '7'"),
                          (dict(rated_payload=np.inf), r"rated_payload: expected a mass in kg"),
                          (dict(realisable_inertias="no"), r"realisable_inertias: expected True or False, got 'no'"),
                          (dict(joint_names="A1"), r"joint_names: expected a list of names, got 'A1'"),
                          (dict(axes=[[0, 0, 1]] * 5), r"axes: expected shape \(6, 3\)"),
                          (dict(parents=[-1, 0, 1]), r"parents: expected 6 parent indices")):
        with pytest.raises(ModelError, match=shown) as info:
            robot.replace(**change)
        assert "\n" not in str(info.value)
    with pytest.raises(ModelError, match=r"realisable_inertias: expected True or False"):
        from_mdh("kr6", ALPHA, A, D, OFF, *_inertials()[:3], realisable_inertias="no")


@pytest.mark.parametrize("build", [from_dh, from_mdh])
def test_a_tensor_in_kg_mm2_is_warned_of(build):
    """CAD tools give inertia in kg·mm²; typed in as kg·m² the arm was 10⁶ times too heavy to turn, without a
    word. A link whose mass lies on average more than 10 m from its COM, √(tr I / 2m) (the tensor's own measure:
    tr I_C = 2 ∫|r|² dm), is now warned of once, naming the links; the same table in kg·m² loads silently."""
    masses, coms, inertias, _ = _inertials()
    with pytest.warns(UserWarning, match=r"robot 'kr6': inertias: links 1, 2, 3, 4, 5, 6 have their mass spread up "
                                         r"to .* m around the COM .*kg·mm²") as seen:
        build("kr6", ALPHA, A, D, OFF, masses, coms, inertias * 1e6)
    assert len(seen) == 1 and seen[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build("kr6", ALPHA, A, D, OFF, masses, coms, inertias)
        for name in ("ur5e", "puma560", "panda"):          # built afresh (load_robot caches each built-in)
            robots._load.__wrapped__(name)
