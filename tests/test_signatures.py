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

import mcref._jackknife as J
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
