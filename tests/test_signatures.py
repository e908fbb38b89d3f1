"""One compiled specialization per kernel where the arguments allow one (docs/methods.md, "Numba
options and caching"): a cold cache compiles each signature once, so a second signature of a large
kernel is seconds of a new user's first run spent on nothing.

Numba types a call as soon as its arguments have a type. A flag set to ``False`` and updated in a
loop reaches the callee first as ``Literal[bool](False)``, then as ``bool``: two specializations.
Before the fix, ``mcref.kernels.units._eval_units`` compiled four.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

import mcref.resampling._jackknife as J
from mcref import stats as S
from mcref.kernels import jackknife_cc as KC
from mcref.kernels.stats import CC, ENCE, ZMS, has_code, needs


def _probe():
    @njit(cache=False)
    def probe(flag):
        return flag

    return probe


def test_the_flags_of_needs_and_has_code_reach_callees_as_plain_bools():
    """``needs`` (inlined) and ``has_code`` give ``bool``, never a literal, to the calls they feed;
    a flag written ``x = False; for c in codes: x |= c == CC`` compiles the probe twice (checked
    below, so the probe can see the difference)."""
    probe = _probe()

    @njit(cache=False)
    def caller(codes):
        _need, need_bins = needs(codes)
        a = probe(need_bins)
        b = probe(has_code(codes, CC))
        return a, b

    assert caller(np.array([ZMS, ENCE], dtype=np.int64)) == (True, False)
    assert caller(np.array([CC], dtype=np.int64)) == (False, True)
    assert probe.signatures == [(types.boolean,)]

    probe2 = _probe()

    @njit(cache=False)
    def loop_flag(codes):
        flag = False
        for c in codes:
            flag |= c == CC
        return probe2(flag)

    loop_flag(np.array([CC], dtype=np.int64))
    assert len(probe2.signatures) == 2  # the pattern the fix avoids does compile twice


def test_cc_jackknife_compiles_one_layout_for_any_size():
    """The joint counts' fill offsets are C-contiguous whether one block of u or several (a
    reversed view is C only with one row): ``cc_layout`` keeps one signature."""
    rng = np.random.default_rng(4)
    for m in (3, 500, 5000):
        u = rng.lognormal(0, 0.5, m)
        prep = S.prepare(u * rng.standard_normal(m), u, None)
        for n_blocks in (1, 7):
            J.cc_jackknife(prep.ugs, prep.eord, prep.egs, np.empty(m), n_blocks=n_blocks, n_threads=1)
    assert len(KC.cc_layout.signatures) == 1, KC.cc_layout.signatures


def test_a_small_sets_references_do_not_compile_the_bucketed_ranks():
    """The rank scratch of a set below ``BUCKET_MIN_M`` points has no ``rec`` (None), and
    ``_repeat_stats`` tests ``rec is None``, which numba decides at compile time: compiled for a
    small set's scratch, it types ``spearman_radix`` alone; for a large set's, the bucketed path
    too (the control: the test can see the difference). In a fresh process, so that nothing else
    has compiled the bucketed kernel; the callees load from the on-disk cache."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import numpy as np
        from numba import njit, typeof
        from mcref.kernels import fastrank as F
        from mcref.kernels import reference as R
        fresh = njit(cache=False, nogil=True)(R._repeat_stats.py_func)
        def sig(m):
            sc = F.make_rank_scratch(m, spearman_only=True)
            i1, f1 = np.zeros(1, np.int64), np.zeros(1)
            args = (i1, i1, 1.0, f1, f1, i1, f1, 1.0, 1.0, f1, 1.0, np.zeros((1, 1), np.int64), np.zeros((1, 1, 2)),
                    i1, f1, sc, sc[5], np.zeros((1, 1)), 0)
            return tuple(typeof(a) for a in args)
        fresh.compile(sig(100))
        print(len(F.spearman_bucketed.signatures), len(F.spearman_radix.signatures))
        fresh.compile(sig(F.BUCKET_MIN_M))
        print(len(F.spearman_bucketed.signatures))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    small, large = r.stdout.strip().splitlines()
    assert small == "0 1"
    assert large == "1"


def test_the_rank_scratch_has_rec_only_where_the_bucketed_path_can_run():
    from mcref.kernels.fastrank import BUCKET_MIN_M, make_rank_scratch, rank_scratch_bytes

    for m in (0, 1, 5000, BUCKET_MIN_M - 1):
        sc = make_rank_scratch(m, spearman_only=True)
        assert sc[5] is None
        assert rank_scratch_bytes(m, spearman_only=True) == sum(a.nbytes for a in sc[:5])
        assert make_rank_scratch(m)[5].shape == (2 * max(m, 1),)  # average_ranks' scratch keeps it
    sc = make_rank_scratch(BUCKET_MIN_M, spearman_only=True)
    assert sc[5].shape == (2 * BUCKET_MIN_M,)
    assert rank_scratch_bytes(BUCKET_MIN_M, spearman_only=True) == sum(a.nbytes for a in sc)
