"""The batch IK functions (`dynamics.ik.batch`, `dynamics.ik.multistart`) refuse bad input as the single-pose
solvers do: one line naming the argument, an IKError (a ValueError), before any work — never a TypeError,
IndexError or MemoryError from inside, and never silently solved with nonsense options."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics.forward_kinematics import frame_pose
from dynamics.ik.batch import solve_ik_batch
from dynamics.inverse_kinematics import IKError, IKResult, solve_ik
from dynamics.robots import load_robot

ROBOT = load_robot("iiwa7")
QA = np.array([0.0, 0.6, 0.0, -1.3, 0.0, 1.2, 0.0])
QB = QA + np.array([0.3, -0.2, 0.1, 0.25, -0.1, 0.2, 0.3])
TA, TB = frame_pose(ROBOT, QA), frame_pose(ROBOT, QB)

BAD_IK_OPTIONS = [dict(tol_pos=-1.0), dict(tol_pos=float("nan")), dict(tol_rot="1e-6"), dict(max_sweeps=2.5),
                  dict(max_sweeps=-1), dict(max_sweeps=True), dict(newton_steps=2.5), dict(rot_weight=float("nan")),
                  dict(rot_weight=-1), dict(rot_weight=0.0), dict(damping=-1.0), dict(newton_switch="a"), dict(newton_slow=float("nan")),
                  dict(q_min=np.zeros(3)), dict(q_max="a"), dict(q_min=np.full(7, np.nan)), dict(penalty="yes"),
                  dict(step="bogus")]


def _id(options: dict) -> str:
    return next(iter(options)) + "=" + repr(next(iter(options.values())))[:12]


def _message(f, *args, **kw) -> str:
    with pytest.raises(IKError) as e:
        f(*args, **kw)
    assert "\n" not in str(e.value)
    return str(e.value)


@pytest.mark.parametrize("bad", BAD_IK_OPTIONS, ids=_id)
def test_solve_ik_batch_refuses_the_options_solve_ik_refuses_in_the_same_words(bad):
    """The side-by-side path took negative or NaN tolerances, 2.5 sweeps, a NaN rot_weight, a 3-value q_min or
    "yes" for penalty without a word (a NaN tolerance: every target 'failed' after 500 sweeps), or failed with
    TypeError / IndexError; only the one-by-one fallback (one target, position targets) checked them."""
    said = _message(solve_ik, ROBOT, TA, QB, **bad)
    assert said.startswith(next(iter(bad)))
    for n in (2, 0):
        assert _message(solve_ik_batch, ROBOT, [TA, TB][:n], [QB, QA][:n], **bad) == said


def test_solve_ik_batch_takes_what_solve_ik_takes_and_names_itself_for_a_misspelt_option():
    """A scalar q_min (solve_ik: every joint) raised IndexError in the side-by-side sweeps; a misspelt keyword
    was reported as solve_ik's, or not at all for an empty batch."""
    lo = -2.0
    many = solve_ik_batch(ROBOT, [TA, TB], [QB, QA], q_min=lo)
    for b, T, q0 in zip(many, (TA, TB), (QB, QA)):
        a = solve_ik(ROBOT, T, q0, q_min=lo)
        assert np.array_equal(a.q, b.q) and (a.success, a.pos_err, a.rot_err) == (b.success, b.pos_err, b.rot_err)
        assert b.success and b.q.min() >= lo
    for n in (2, 0):
        with pytest.raises(TypeError, match=r"solve_ik_batch\(\) got an unexpected keyword argument 'tol_pso'"):
            solve_ik_batch(ROBOT, [TA, TB][:n], [QB, QA][:n], tol_pso=1e-6)


@pytest.mark.parametrize("targets, starts, said", [
    (None, [QB, QA], r"targets: expected positions \(N, 3\) or poses \(N, 4, 4\), got None"),
    ([TA, TB], None, r"starts: expected 2 starts of 7 joint values, shape \(2, 7\), got None"),
    ([TA, TB], [QB, QA, QA], r"starts: expected one start per target, shape \(2, 7\), got shape \(3, 7\)"),
    ([TA, TB, TA], [QB, QA], r"starts: expected one start per target, shape \(3, 7\), got shape \(2, 7\)"),
    ([TA[:3, 3], TB[:3, 3]], [QB], r"starts: expected one start per target, shape \(2, 7\), got shape \(1, 7\)"),
    (TA, [QB] * 4, r"targets: expected shape \(N, 3\) or \(N, 4, 4\), got \(4, 4\) \(one target\? pass \[target\]\)"),
    ([TA, TB], QB, r"starts: expected one start per target, shape \(2, 7\), got shape \(7,\)"),
    ([TA, TB], [QB, QA[:6]], r"starts: expected 2 starts of 7 joint values"),
    ([TA, TB], [QB, ["0.1"] * 7], r"starts: expected 2 starts of 7 joint values, shape \(2, 7\), got \[array"),
    ([TA, TB], [QB, QA * np.nan], r"starts\[1\]: expected 7 finite joint values, got \[nan"),
    ([TA, TB * np.nan], [QB, QA], r"targets\[1\]: values must be finite numbers"),
    ([TA, TB + 0j], [QB, QA], r"targets\[1\]: expected a position \(3,\) or a pose \(4, 4\), got \[\["),
    ([TA, 2 * TB], [QB, QA], r"targets\[1\]: the 3×3 block of the target pose is not a rotation matrix"),
    ({"a": TA}, [QB], r"targets: expected positions \(N, 3\) or poses \(N, 4, 4\), got \{'a'"),
], ids=["targets None", "starts None", "more starts", "fewer starts", "positions, one start", "one pose array",
        "one start", "short start", "text start", "NaN start", "NaN target", "complex target", "not a rotation",
        "dict"])
def test_solve_ik_batch_refuses_targets_and_starts_that_do_not_pair_up(targets, starts, said):
    """Before: None raised TypeError; more starts than targets (or fewer) IndexError on the side-by-side path
    and, for position targets, the extra starts were dropped silently (zip); a single pose array was read as
    four targets of shape (4,); a bad start or target was called "q0" or "target", not which one."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")             # (a NaN pose warned in numpy's det before it was refused)
        with pytest.raises(IKError, match="^" + said):
            solve_ik_batch(ROBOT, targets, starts)


def test_solve_ik_batch_takes_an_array_of_targets_and_of_starts_and_an_empty_batch():
    many = solve_ik_batch(ROBOT, np.array([TA, TB], np.float32), np.asfortranarray([QB, QA]))
    assert [r.success for r in many] == [True, True] and all(r.q.dtype == np.float64 for r in many)
    pos = solve_ik_batch(ROBOT, np.array([TA[:3, 3], TB[:3, 3]]), [QB, QA])
    assert np.linalg.norm(frame_pose(ROBOT, pos[1].q)[:3, 3] - TB[:3, 3]) <= 1e-6
    assert solve_ik_batch(ROBOT, [], []) == [] == solve_ik_batch(ROBOT, np.zeros((0, 4, 4)), np.zeros((0, 7)))


# ------------------------------------------------------------------------------ track_paths
LINE = np.repeat(TA[None], 6, axis=0)
LINE[:, 0, 3] += np.linspace(0.0, 0.05, 6)

BAD_TRACK_OPTIONS = [dict(tol_pos=-1.0), dict(tol_pos=float("nan")), dict(tol_rot=float("nan")),
                     dict(max_sweeps=2.5), dict(max_sweeps=-1), dict(newton_steps=2.5), dict(newton_steps=-3),
                     dict(rot_weight="0.2"), dict(rot_weight=0.0), dict(q_min=np.zeros(3)), dict(q_max="a"),
                     dict(penalty="yes"), dict(predict="yes"), dict(stop_at_failure=1), dict(step="bogus"),
                     dict(method="pinv"), dict(gain=-1.0), dict(predict=True, dt=1e-3, qd_max="robot")]


@pytest.mark.parametrize("bad", BAD_TRACK_OPTIONS, ids=_id)
def test_track_paths_refuses_the_options_track_path_refuses_in_the_same_words(bad):
    """The side-by-side path took negative or NaN tolerances, 2.5 or -3 Newton steps, "yes" for penalty or
    predict and 1 for stop_at_failure silently (a NaN tolerance: every sample 'failed'), and a text rot_weight
    raised TypeError from np.isfinite; an empty list of paths checked nothing."""
    from dynamics.ik.batch import track_paths
    from dynamics.inverse_kinematics import track_path
    said = _message(track_path, ROBOT, LINE, QA, **bad)
    for n in (2, 0):
        assert _message(track_paths, ROBOT, [LINE, LINE[:4]][:n], QA, **bad) == said


@pytest.mark.parametrize("paths, said", [
    (None, r"paths: expected a list of paths \(N, 3\) or \(N, 4, 4\), got None"),
    (LINE, r"paths: expected a list of paths, got one path of shape \(6, 4, 4\) \(one path\? pass \[path\]\)"),
    ([LINE, LINE + 0j], r"paths\[1\]: expected positions \(N, 3\) or poses \(N, 4, 4\), got \[\["),
    ([LINE, LINE.astype(str)], r"paths\[1\]: expected positions \(N, 3\) or poses \(N, 4, 4\), got \[\["),
    ([LINE, LINE > 0], r"paths\[1\]: expected positions \(N, 3\) or poses \(N, 4, 4\), got \[\["),
    ([LINE, {}], r"paths\[1\]: expected positions \(N, 3\) or poses \(N, 4, 4\), got \{\}"),
    ([LINE, None], r"paths\[1\]: expected positions \(N, 3\) or poses \(N, 4, 4\), got None"),
    ([LINE, LINE[0]], r"paths\[1\]: expected shape \(N, 3\) or \(N, 4, 4\), got \(4, 4\)"),
    ([LINE, np.where(np.arange(6)[:, None, None] == 4, np.nan, LINE)], r"paths\[1\]\[4\]: values must be finite"),
    ([LINE, 2 * LINE], r"paths\[1\]\[0\]: the 3×3 block of the target pose is not a rotation matrix"),
], ids=["None", "one path", "complex", "text", "bool", "dict", "None path", "one pose", "NaN sample", "not rotation"])
def test_track_paths_refuses_paths_that_are_not_lists_of_target_arrays_naming_which(paths, said):
    """Before: a complex path lost its imaginary part (with a ComplexWarning) and a text path was parsed as
    numbers on the side-by-side path (track_path refuses both); a dict raised TypeError, None TypeError, one
    path array (N, 4, 4) was read as N paths of one (4, 4) 'targets'; a bad sample was called 'target'."""
    from dynamics.ik.batch import track_paths
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(IKError, match="^" + said):
            track_paths(ROBOT, paths, QA)


def test_track_paths_takes_an_array_of_paths_and_positions_as_track_path_does():
    """A scalar q_min (track_path: every joint) raised IndexError in the side-by-side sweeps."""
    from dynamics.ik.batch import track_paths
    from dynamics.inverse_kinematics import track_path
    many = track_paths(ROBOT, np.array([LINE, LINE[::-1]], np.float32), QA, q_min=-2.9)
    one = [track_path(ROBOT, p, QA, q_min=-2.9) for p in np.array([LINE, LINE[::-1]], np.float32)]
    assert all(np.array_equal(a.q, b.q) and np.array_equal(a.success, b.success) for a, b in zip(one, many))
    assert all(t.all_success for t in many) and track_paths(ROBOT, [], QA) == []
    pos = track_paths(ROBOT, (LINE[:, :3, 3], LINE), QA)
    assert pos[0].all_success and np.abs(frame_pose(ROBOT, pos[0].q[-1])[:3, 3] - LINE[-1, :3, 3]).max() <= 1e-5


# ------------------------------------------------------------------------------ random_seeds
@pytest.mark.parametrize("kw, said", [
    (dict(count=10**12), r"count: expected at most 1000000 starts, got 1000000000000"),
    (dict(count="3"), r"count: expected a whole number >= 0, got '3'"),
    (dict(count=3, seed="a"), r"seed: expected a whole number >= 0, got 'a'"),
    (dict(count=3, seed=-1), r"seed: expected a whole number >= 0, got -1"),
    (dict(count=3, seed=2.5), r"seed: expected a whole number >= 0, got 2.5"),
    (dict(count=3, seed=None), r"seed: expected a whole number >= 0, got None"),
    (dict(count=3, margin=0.6), r"margin: expected a fraction of each joint range in \[0, 0.5\], got 0.6"),
    (dict(count=3, margin=-1), r"margin: expected a number >= 0, got -1"),
    (dict(count=3, margin=float("nan")), r"margin: expected a number >= 0, got nan"),
    (dict(count=3, margin="a"), r"margin: expected a number >= 0, got 'a'"),
], ids=["huge count", "text count", "text seed", "negative seed", "2.5 seed", "None seed", "margin 0.6",
        "negative margin", "NaN margin", "text margin"])
def test_random_seeds_refuses_bad_counts_seeds_and_margins(kw, said):
    """Before: 10¹² starts raised MemoryError (51 TiB; 10⁹ would have been allocated and filled), a text or
    2.5 seed TypeError, -1 numpy's unnamed 'expected non-negative integer', None gave different starts at
    every call (the docstring promises deterministic ones), margin 0.6 numpy's 'high - low < 0', NaN an
    OverflowError, text a UFuncTypeError, and margin -1 gave starts outside the joint limits."""
    from dynamics.inverse_kinematics import random_seeds
    with pytest.raises(IKError, match="^" + said + "$"):
        random_seeds(ROBOT, **kw)


def test_random_seeds_are_deterministic_inside_the_limits():
    from dynamics.inverse_kinematics import random_seeds
    S = random_seeds(ROBOT, 200, seed=np.int64(5), margin=0.5)
    assert S.shape == (200, 7) and np.allclose(S, 0.5 * (ROBOT.q_min + ROBOT.q_max))
    S = random_seeds(ROBOT, 200, seed=5, margin=0.0)
    assert np.array_equal(S, random_seeds(ROBOT, 200, seed=5, margin=0.0))
    assert not np.array_equal(S, random_seeds(ROBOT, 200, seed=6, margin=0.0))
    assert np.all(S >= ROBOT.q_min) and np.all(S <= ROBOT.q_max) and random_seeds(ROBOT, 0).shape == (0, 7)


# ------------------------------------------------------------------------------ solve_ik_multistart
@pytest.mark.parametrize("targets, stages, kw, said", [
    (None, [[QB]], {}, r"targets: expected positions \(N, 3\) or poses \(N, 4, 4\), got None"),
    (TA, [[QB]], {}, r"targets: expected shape \(N, 3\) or \(N, 4, 4\), got \(4, 4\) \(one target\? pass \[target\]\)"),
    ([TA], None, {}, r"stages: expected a list of arrays of starts \(k, 7\), got None"),
    ([TA], np.array([QB, QA]), {},
     r"stages: expected a list of arrays of starts \(k, 7\), got one array of shape \(2, 7\) \(one stage\? pass"),
    ([TA], [[QB], [["0.1"] * 7]], {}, r"stages\[1\]: expected starts of 7 joint values, shape \(k, 7\), got \[\['0.1'"),
    ([TA], [[QB + 0j]], {}, r"stages\[0\]: expected starts of 7 joint values, shape \(k, 7\), got \[array"),
    ([TA], [[QB > 0]], {}, r"stages\[0\]: expected starts of 7 joint values"),
    ([TA], [{}], {}, r"stages\[0\]: expected starts of 7 joint values, shape \(k, 7\), got \{\}"),
    ([TA], [[[10**400] * 7]], {}, r"stages\[0\]: expected starts of 7 joint values"),
    ([TA], [[QB, QA * np.nan]], {}, r"stages\[0\]\[1\]: expected 7 finite joint values, got \[nan"),
    ([TA], [[QB]], dict(reference=["0.1"] * 7), r"reference: expected 7 joint values, got \['0.1'"),
    ([TA], [[QB]], dict(rot_weight="a"), r"rot_weight: expected a number >= 0, got 'a'"),
    ([TA, TB], [[QB]], dict(first_stage=[IKResult(QB, True, 0.0, 0.0, 0)]),
     r"first_stage: expected the 2 IKResults of the first stage \(each start towards each target\), got 1$"),
    ([TA], [[QB]], dict(first_stage=[1]), r"first_stage: expected the 1 IKResults .*, got an item of type int$"),
    ([TA], [[QB]], dict(first_stage=[IKResult(QA, True, 0.0, 0.0, 0)], tol_pos=-1.0),
     r"tol_pos: expected a number >= 0, got -1.0"),
], ids=["targets None", "one pose", "stages None", "one stage array", "text start", "complex start", "bool start",
        "dict stage", "int beyond a double", "NaN start", "text reference", "text rot_weight", "short first_stage",
        "junk first_stage", "bad option, solved first stage"])
def test_solve_ik_multistart_refuses_bad_targets_stages_and_options_naming_them(targets, stages, kw, said):
    """Before: None raised TypeError; a text start was parsed as numbers, a complex one lost its imaginary part,
    booleans were read as 0/1; a dict stage raised TypeError, an int beyond a double OverflowError, a NaN start
    was reported as 'reference: ... got ()'; rot_weight='a' raised numpy's unnamed ValueError; a short
    first_stage IndexError, a junk one AttributeError; with the first stage already solved (and reached) the
    options were never checked; one (k, n) array of starts was taken as k stages of one start (the first start
    that reached a target won, not the one nearest to the reference)."""
    from dynamics.inverse_kinematics import solve_ik_multistart
    with pytest.raises(IKError, match="^" + said):
        solve_ik_multistart(ROBOT, targets, stages, **kw)


def test_solve_ik_multistart_names_itself_for_a_misspelt_option_and_skips_an_empty_stage():
    """A misspelt option was silently ignored when first_stage answered the first stage; with an empty first
    stage, first_stage (its 0 results) was applied to the next one: IndexError."""
    from dynamics.ik.batch import solve_ik_batch
    from dynamics.inverse_kinematics import solve_ik_multistart
    known = solve_ik_batch(ROBOT, [TA, TB], [QB, QB])
    with pytest.raises(TypeError, match=r"^solve_ik_multistart\(\) got an unexpected keyword argument 'tol_pso'"):
        solve_ik_multistart(ROBOT, [TA, TB], [[QB]], first_stage=known, tol_pso=1e-6)
    ms = solve_ik_multistart(ROBOT, [TA, TB], [np.zeros((0, 7)), [QB]], reference=QA, first_stage=[])
    assert ms.success and ms.attempts == 2 and ms.target == 0 and ms.seed == 0
    assert np.linalg.norm(frame_pose(ROBOT, ms.best.q)[:3, 3] - TA[:3, 3]) <= 1e-6


@pytest.mark.parametrize("option", ["rot_weight", "damping"])
def test_a_weight_whose_square_overflows_is_refused_by_every_solver_in_one_line(option):
    """rot_weight=1e200 or damping=1e200 passed the checks (finite, >= 0) and the solve then raised
    OverflowError (34, 'Numerical result out of range') from float ** 2: solve_ik, solve_ik_batch, track_path
    and track_paths alike. (Tolerances are never squared: they may be inf.)"""
    from dynamics.ik.batch import track_paths
    from dynamics.inverse_kinematics import solve_ik_dls, track_path
    said = f"{option}: expected a number >= 0 and <= 1e+150, got 1e+200"
    calls = [lambda **k: solve_ik(ROBOT, TA, QB, **k), lambda **k: solve_ik_batch(ROBOT, [TA, TB], [QB, QA], **k)]
    if option == "rot_weight":
        calls += [lambda **k: track_path(ROBOT, LINE, QA, **k), lambda **k: track_paths(ROBOT, [LINE, LINE], QA, **k)]
    else:
        calls += [lambda **k: solve_ik_dls(ROBOT, TA, QB, **k)]
    for call in calls:
        assert _message(call, **{option: 1e200}) == said
    assert solve_ik_batch(ROBOT, [TA, TB], [QB, QA], tol_pos=np.inf, tol_rot=1e200)[0].sweeps == 0
