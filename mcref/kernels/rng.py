"""Per-chunk random streams for numba kernels (docs/methods.md, "Random numbers").

Each chunk of replicates owns a xoshiro256** state (4 × uint64) drawn from a
``numpy.random.SeedSequence`` child, so a chunk's draws do not depend on which
thread runs it. Global NumPy or numba RNG state is never touched.

References: D. Blackman & S. Vigna, "Scrambled linear pseudorandom number
generators", ACM TOMS 47 (2021), doi:10.1145/3460772; D. Lemire, "Fast random
integer generation in an interval", ACM TOMACS 29 (2019), doi:10.1145/3230636.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64

from ._config import NJIT


def seed_state(seed_seq: np.random.SeedSequence) -> np.ndarray:
    """The xoshiro256** state (4 uint64) of one ``SeedSequence``."""
    s = seed_seq.generate_state(4, np.uint64)
    if not s.any():  # the all-zero state is the one forbidden state
        s[0] = np.uint64(0x9E3779B97F4A7C15)
    return s


def chunk_states(seed_seq: np.random.SeedSequence, n_chunks: int) -> np.ndarray:
    """Spawn one xoshiro256** state per chunk: array ``(n_chunks, 4)`` of uint64."""
    states = np.empty((n_chunks, 4), dtype=np.uint64)
    for c, child in enumerate(seed_seq.spawn(n_chunks)):
        states[c] = seed_state(child)
    return states


def fresh(seed_seq: np.random.SeedSequence) -> np.random.SeedSequence:
    """A copy of ``seed_seq`` that has spawned no child yet: its :func:`chunk_states` are those
    ``seed_seq`` gave (or would give) on its first spawn, however often it has spawned since.
    The rounds of a sequential test (:mod:`mcref.verdict._sequential`) each take the chunks of one such
    copy, so a run stopped after k chunks holds the first k chunks of the full run."""
    return np.random.SeedSequence(seed_seq.entropy, spawn_key=seed_seq.spawn_key, pool_size=seed_seq.pool_size)


def keyed_seed(seed_seq: np.random.SeedSequence, chunk: int, key: int) -> np.random.SeedSequence:
    """The stream named ``key`` of chunk ``chunk``: ``SeedSequence(entropy, spawn_key + (chunk, 2³², key))``.

    A side stream of a chunk (a D's mixing variates, the bootstrap's tie splits) is keyed by
    the chunk and its own name instead of spawned in turn, so it neither shifts nor depends
    on the chunk's main stream (:func:`chunk_states`) or on which other side streams exist:
    a statistic's resamples are the same whatever company it is computed in."""
    return np.random.SeedSequence(seed_seq.entropy, spawn_key=seed_seq.spawn_key + (chunk, 1 << 32, key))


def keyed_states(seed_seq: np.random.SeedSequence, n_chunks: int, key: int) -> np.ndarray:
    """:func:`keyed_seed`'s state of every chunk: array ``(n_chunks, 4)`` of uint64."""
    states = np.empty((n_chunks, 4), dtype=np.uint64)
    for c in range(n_chunks):
        states[c] = seed_state(keyed_seed(seed_seq, c, key))
    return states


#: the jump polynomial of xoshiro256** (Blackman & Vigna): :func:`jump` advances a state by 2¹²⁸ steps
JUMP = np.array([0x180EC6D33CFD0ABA, 0xD5A61266F0C9392C, 0xA9582618E03FC9AA, 0x39ABDC4529B1661C], dtype=np.uint64)


def repeat_states(blocks: np.ndarray, block: int, r0: int, r1: int) -> np.ndarray:
    """One xoshiro256** state per repeat r0 ≤ r < r1: array ``(r1 − r0, 4)`` of uint64.

    Repeat r's stream is block ``r // block``'s state (``blocks[r // block]``, from
    :func:`chunk_states` or :func:`keyed_states`) jumped ``r % block`` times by :func:`jump`
    (2¹²⁸ steps each: the streams of one block never overlap). Every repeat then owns its
    stream, so the repeats of one block are independent tasks for the threads, while the
    ``SeedSequence`` work stays one per block (docs/methods.md, "Random numbers")."""
    out = np.empty((max(0, r1 - r0), 4), dtype=np.uint64)
    if r1 > r0:
        split_blocks(blocks, block, r0, r1, out, jump_table())
    return out


@njit(**NJIT)
def _rotl(x, k):
    """Rotate the 64-bit word ``x`` left by ``k`` bits."""
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(**NJIT)
def step(st):
    """xoshiro256** on a state *tuple* ``(s0, s1, s2, s3)``: (next 64-bit word, new state).

    Kernels keep the state in a tuple (registers) inside their loops and write it back
    with :func:`store_state` at the end: an array state passed to a call in a hot loop
    costs numba atomic reference counts on every call.
    """
    s0, s1, s2, s3 = st
    result = _rotl(s1 * uint64(5), 7) * uint64(9)
    t = s1 << uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, (s0, s1, s2, s3)


@njit(**NJIT)
def load_state(s):
    """State array → state tuple."""
    return (s[0], s[1], s[2], s[3])


@njit(**NJIT)
def store_state(s, st):
    """State tuple → state array (in place)."""
    s[0], s[1], s[2], s[3] = st


@njit(**NJIT)
def next_u64(s):
    """xoshiro256**: next 64-bit output; advances the state array ``s`` in place."""
    result, st = step(load_state(s))
    store_state(s, st)
    return result


@njit(**NJIT)
def jump(s):
    """Advance the state array ``s`` by 2¹²⁸ steps in place (the published xoshiro256** jump)."""
    j0 = j1 = j2 = j3 = uint64(0)
    st = load_state(s)
    for i in range(4):
        for b in range(64):
            if (JUMP[i] >> uint64(b)) & uint64(1):
                j0 ^= st[0]
                j1 ^= st[1]
                j2 ^= st[2]
                j3 ^= st[3]
            _, st = step(st)
    store_state(s, (j0, j1, j2, j3))


_jump_table: np.ndarray | None = None


def jump_table() -> np.ndarray:
    """The table of :func:`jump_by_table` ((64, 16, 4) uint64, 32 KiB), built once per process:
    entry ``[p, v]`` is :func:`jump` of the state whose nibble p (bits 4p … 4p + 3 of the 256, word
    p // 16, low nibble first) is v and whose other bits are 0. The 256 unit states are jumped
    together in NumPy (256 vectorized generator steps, a few ms; a compiled builder cost 0.8 s of a
    cold first ``validate``); built twice at worst by two threads at once, the same table."""
    global _jump_table
    if _jump_table is None:
        one = np.uint64(1)
        s = np.zeros((4, 256), dtype=np.uint64)  # column i: unit state i
        i = np.arange(256)
        s[i // 64, i] = one << (i % 64).astype(np.uint64)
        acc = np.zeros_like(s)
        for word in JUMP:
            for b in range(64):
                if (int(word) >> b) & 1:
                    acc ^= s
                s0, s1, s2, s3 = s  # one xoshiro256 state update (step), on all 256 at once
                t = s1 << np.uint64(17)
                s2 ^= s0
                s3 ^= s1
                s1 ^= s2
                s0 ^= s3
                s2 ^= t
                s[3] = (s3 << np.uint64(45)) | (s3 >> np.uint64(19))
        col = acc.T  # (256, 4): the jump of unit state i
        table = np.zeros((64, 16, 4), dtype=np.uint64)
        for v in range(1, 16):
            low = (v & -v).bit_length() - 1
            table[:, v] = table[:, v & (v - 1)] ^ col[4 * np.arange(64) + low]
        _jump_table = table
    return _jump_table


@njit(**NJIT)
def jump_by_table(s, table):
    """:func:`jump` of the state array ``s`` in place, the same bits, by its matrix over GF(2): the
    xoshiro256 transition is linear (xor, shift, rotate; the ``**`` scrambler only shapes the
    output), so the jumped state is the XOR, over the 64 nibbles of ``s``, of the jumps of each
    nibble alone, read from :func:`jump_table` (the "four Russians" method): 64 lookups in 32 KiB
    (L1) instead of 256 steps."""
    a0 = a1 = a2 = a3 = uint64(0)
    for p in range(64):
        v = np.int64((s[p >> 4] >> uint64(4 * (p & 15))) & uint64(15))
        a0 ^= table[p, v, 0]
        a1 ^= table[p, v, 1]
        a2 ^= table[p, v, 2]
        a3 ^= table[p, v, 3]
    s[0] = a0
    s[1] = a1
    s[2] = a2
    s[3] = a3


@njit(**NJIT)
def split_blocks(blocks, block, r0, r1, out, table):
    """``out[r − r0]`` = ``blocks[r // block]`` jumped ``r % block`` times, r0 ≤ r < r1 (the jumps by
    ``table``, :func:`jump_by_table`)."""
    s = np.empty(4, dtype=np.uint64)
    c_prev = -1
    for r in range(r0, r1):
        c = r // block
        if c != c_prev:
            for j in range(4):  # element by element: an array-to-row copy compiles numba's shape-error path
                s[j] = blocks[c, j]
            for _ in range(r % block):
                jump_by_table(s, table)
            c_prev = c
        for j in range(4):
            out[r - r0, j] = s[j]
        jump_by_table(s, table)


@njit(**NJIT)
def bounded_draws(s, n, m, out, as_counts):
    """``m`` i.i.d. uniform integers in ``[0, n)``, ``n < 2**32``.

    Two 32-bit halves per 64-bit draw (low half first), each mapped by Lemire's
    multiply-shift with rejection, so the draws are exactly uniform. ``as_counts=False``
    writes draw k to ``out[k]``; ``as_counts=True`` adds 1 to ``out[draw]`` (a bootstrap
    resample as multiplicities; ``out`` must be zeroed by the caller). Both modes consume
    the stream identically. The state lives in registers during the loop.
    """
    store_state(s, lemire_fill(load_state(s), n, m, out, as_counts))


@njit(**NJIT)
def lemire_fill(st, n, m, out, as_counts):
    """The loop of :func:`bounded_draws` on a state *tuple* (registers): returns the new state.

    Kernels that keep their state in a tuple (the bootstrap's last, shorter leaf,
    :func:`leaf_counts`) call it directly; one Lemire loop serves both.
    """
    n64 = uint64(n)
    mask = uint64(0xFFFFFFFF)
    threshold = (uint64(1) << uint64(32)) % n64  # = 2**32 mod n
    i = 0
    while i < m:
        r, st = step(st)
        for half in range(2):
            x = (r >> uint64(32 * half)) & mask
            prod = x * n64
            if (prod & mask) >= threshold and i < m:
                j = np.int64(prod >> uint64(32))
                if as_counts:
                    out[j] += 1
                else:
                    out[i] = j
                i += 1
    return st


@njit(**NJIT)
def bounded_one(s, n):
    """One uniform integer in ``[0, n)``, ``n < 2**32``: Lemire's nearly divisionless
    method (the modulo is computed only on the rare draws that may be rejected)."""
    n64 = uint64(n)
    mask = uint64(0xFFFFFFFF)
    prod = (next_u64(s) >> uint64(32)) * n64
    low = prod & mask
    if low < n64:
        threshold = (uint64(1) << uint64(32)) % n64
        while low < threshold:
            prod = (next_u64(s) >> uint64(32)) * n64
            low = prod & mask
    return np.int64(prod >> uint64(32))


@njit(**NJIT)
def half_draw(st, r, halves, b):
    """One uniform integer in ``[0, b)`` (1 ≤ b ≤ 2**32) from the next 32-bit half of the stream
    (low half of a word first; ``r`` the word being used, ``halves`` how many of its halves are
    left): Lemire's multiply-shift, ``-1`` when rejected (the caller draws again from a fresh half:
    exactly uniform). Returns ``(j, st, r, halves)``; the shuffles' one draw."""
    if halves == 0:
        r, st = step(st)
        halves = 2
    x = r & uint64(0xFFFFFFFF)
    r >>= uint64(32)
    halves -= 1
    bb = uint64(b)
    prod = x * bb
    low = prod & uint64(0xFFFFFFFF)
    if low < bb and low < ((uint64(1) << uint64(32)) % bb):
        return np.int64(-1), st, r, halves
    return np.int64(prod >> uint64(32)), st, r, halves


@njit(**NJIT)
def draw_below(st, r, halves, b):
    """One uniform integer in ``[0, b)`` (1 ≤ b ≤ 2**32), exactly: :func:`half_draw` again on a
    fresh half until it accepts. Returns ``(j, st, r, halves)``; the swap nulls' one draw."""
    j = np.int64(-1)
    while j < 0:
        j, st, r, halves = half_draw(st, r, halves, b)
    return j, st, r, halves


@njit(**NJIT)
def permute_into(s, src, out):
    """``out`` = a uniformly random permutation of ``src`` (``len(src) < 2**32``): the
    "inside-out" Fisher–Yates shuffle (Durstenfeld 1964; Knuth, TAOCP 2, Algorithm 3.4.2P),
    for i = 0 … n−1: j uniform in [0, i], out[i] = out[j], out[j] = src[i]. One pass, no
    copy of ``src`` first. Each j is Lemire's multiply-shift with rejection on a 32-bit half
    of the stream (low half first, as :func:`bounded_draws`), so every permutation has
    probability exactly 1/n!. The state lives in registers during the loop.
    """
    st = load_state(s)
    n = src.shape[0]
    r = uint64(0)
    halves = np.int64(0)  # not a literal: one signature of half_draw
    i = 0
    while i < n:
        j, st, r, halves = half_draw(st, r, halves, i + 1)
        if j < 0:
            continue  # rejected: a fresh half for the same i
        out[i] = out[j]
        out[j] = src[i]
        i += 1
    store_state(s, st)


#: from this many values on (16 MB of float64, beyond the caches), :func:`permute_any` draws by
#: buckets (:func:`permute_blocked`: 11 ns per value at 10⁷ against 21 ns for :func:`permute_into`,
#: which is faster while the array is in cache; 2-core VM)
BLOCKED_MIN = 1 << 21
#: :func:`permute_blocked`'s buckets: 2**BUCKET_BITS (256: a bucket of 10⁷ values fits in L2)
BUCKET_BITS = 8


@njit(**NJIT)
def _shuffle_in_place(st, a, lo, hi):
    """Fisher–Yates (Durstenfeld) on ``a[lo:hi]`` in place, for i = hi−1 … lo+1 swap a[i]
    with a[lo + j], j uniform in [0, i − lo] (Lemire on 32-bit halves, low half first, with
    rejection: exact). Returns the state tuple."""
    r = uint64(0)
    halves = np.int64(0)  # not a literal: one signature of half_draw
    i = hi - 1
    while i > lo:
        j, st, r, halves = half_draw(st, r, halves, i - lo + 1)
        if j < 0:
            continue  # rejected: a fresh half for the same i
        j += lo
        t = a[i]
        a[i] = a[j]
        a[j] = t
        i -= 1
    return st


@njit(**NJIT)
def permute_blocked(s, src, out, lab, cnt, bits):
    """``out`` = a uniformly random permutation of ``src`` by buckets (Rao 1961; Sandelius
    1962): each value goes to one of K = 2**bits buckets independently and uniformly
    (``bits``-bit fields of 64-bit words, ``bits`` dividing 64), the buckets are laid out in
    order (``out`` written through K sequential streams) and each is shuffled in place
    (:func:`_shuffle_in_place`), in cache. Every permutation has probability exactly 1/n!:
    given the buckets' sizes, the assignment of values to buckets is a uniform random
    arrangement and each bucket's order an independent uniform permutation. Two sequential
    passes and K in-cache shuffles instead of n random accesses over all of ``out``.
    ``lab`` (uint8, n) and ``cnt`` (int64, 2K) are scratch; advances the state array ``s``."""
    n = src.shape[0]
    k = np.int64(1) << bits
    fields = 64 // bits
    fmask = uint64(k - 1)
    st = load_state(s)
    cnt[:] = 0
    i = 0
    while i < n:
        r, st = step(st)
        for t in range(min(fields, n - i)):
            b = np.int64((r >> uint64(bits * t)) & fmask)
            lab[i] = b
            cnt[b + 1] += 1
            i += 1
    for b in range(k - 1):
        cnt[b + 1] += cnt[b]  # bucket b starts at cnt[b]
    pos = cnt[k:]
    for b in range(k):  # element by element: an array-to-slice copy compiles numba's shape-error path
        pos[b] = cnt[b]
    for i in range(n):
        b = lab[i]
        out[pos[b]] = src[i]
        pos[b] += 1
    for b in range(k):
        st = _shuffle_in_place(st, out, cnt[b], pos[b])
    store_state(s, st)


@njit(**NJIT, inline="always")
def permute_any(s, src, out, lab, cnt):
    """A uniformly random permutation of ``src`` into ``out``: :func:`permute_into` below
    :data:`BLOCKED_MIN` values (the array is in cache), :func:`permute_blocked` with
    2**:data:`BUCKET_BITS` buckets from there on (``lab``: uint8 of ``src``'s size, ``cnt``:
    int64 of 2**(BUCKET_BITS + 1); :func:`permute_scratch`)."""
    if src.shape[0] < BLOCKED_MIN:
        permute_into(s, src, out)
    else:
        permute_blocked(s, src, out, lab, cnt, BUCKET_BITS)


@njit(**NJIT)
def permute_scratch(n):
    """The scratch ``(lab, cnt)`` of :func:`permute_any` for ``n`` values (empty below
    :data:`BLOCKED_MIN`)."""
    big = n >= BLOCKED_MIN
    return (np.empty(n if big else 0, dtype=np.uint8),
            np.empty((np.int64(2) << BUCKET_BITS) if big else 0, dtype=np.int64))


@njit(**NJIT)
def fill_indices(s, n, out):
    """Fill ``out`` with i.i.d. uniform integers in ``[0, n)`` (see :func:`bounded_draws`)."""
    bounded_draws(s, n, out.shape[0], out, False)


@njit(**NJIT)
def next_double(s):
    """Uniform double in [0, 1) with 53 random bits."""
    return np.float64(next_u64(s) >> uint64(11)) * (1.0 / 9007199254740992.0)


# --------------------------------------------------------------------------- multinomial counts

#: full leaves of the multinomial splitting tree hold 2**LEAF_BITS points, 4096: their int32 counts
#: (16 KiB) stay in L1, and :func:`leaf_counts` draws their cells as the five 12-bit fields of a 64-bit
#: word. Against leaves of 256 only (eight 8-bit fields a word), 16 times fewer splits for one more
#: word per 40 draws: a loop of the counts and Σw·z² alone 0.65 → 0.41 ns per element·replicate at
#: M = 13 885 and 0.64 → 0.41 at M = 10⁶ (one thread, 2026-11-28; 10 and 11 bits measured between);
#: ZMS's whole bootstrap 0.764 → 0.499 at M = 10⁴ and 0.765 → 0.464 at 10⁶ (``bench_scale_m.py``)
LEAF_BITS = 12
#: fields of LEAF_BITS bits drawn from one 64-bit word for a full leaf
LEAF_FIELDS = 64 // LEAF_BITS
#: the rest of fewer than 4096 points splits off its largest power of two, 2**b points for
#: MIN_FIELD_BITS ≤ b < LEAF_BITS, as a leaf drawn from b-bit fields (⌊64/b⌋ a word), and splits
#: its own rest likewise; a rest below 2**MIN_FIELD_BITS = 64 points is a last leaf drawn by
#: Lemire's method. QM9_E's rest of 1597 points: leaves of 1024 and 512 points and one of 61, two
#: splits, where leaves of 256 had six (1176 → 759 ns a replicate, counts alone, one thread,
#: 2026-11-28; docs/methods.md, "Bootstrap")
MIN_FIELD_BITS = 6
#: rows of the explicit stack of :func:`multinomial_leaf` (tree depth + 2 is enough)
STACK_ROWS = 64
#: dtype of multiplicities (bootstrap counts, weights; at most M < 2³¹): int32, whose conversion
#: to float64 vectorizes on AVX2 where int64's does not (a resample's weighted sums, 1.15× faster
#: on ZMS's bootstrap, benchmarks/bench_bootstrap.py); the values, and so the sums, are the same
COUNT = np.int32


@njit(**NJIT)
def popcount(x):
    """Number of set bits of the 64-bit word ``x`` (LLVM turns this into ``popcnt``)."""
    x = x - ((x >> uint64(1)) & uint64(0x5555555555555555))
    x = (x & uint64(0x3333333333333333)) + ((x >> uint64(2)) & uint64(0x3333333333333333))
    x = (x + (x >> uint64(4))) & uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * uint64(0x0101010101010101)) >> uint64(56))


@njit(**NJIT)
def ones_in_bits(st, k):
    """Number of ones among ``k`` fresh random bits, i.e. Binomial(k, ½): (count, state tuple)."""
    c = 0
    while k >= 64:
        r, st = step(st)
        c += popcount(r)
        k -= 64
    if k > 0:
        r, st = step(st)
        c += popcount(r >> uint64(64 - k))
    return c, st


@njit(**NJIT)
def binomial_rational(st, n, a, d):
    """Binomial(n, a/d) exactly (0 <= a <= d < 2**62), from random bits: (count, state tuple).

    Trial j succeeds iff its uniform U_j < p = a/d. All trials compare U_j with p bit by
    bit at once: at binary digit t of p (long division of a by d), the undecided trials
    whose digit of U_j is 0 where p has 1 succeed, those with 1 where p has 0 fail, the
    others stay undecided; how many have a 1 is Binomial(undecided, ½), the popcount of
    that many random bits. About 2n bits in all (n when p = ½); once the remaining
    digits of p are all 0 the undecided trials fail (U_j = p has probability 0).
    """
    succ = 0
    r = a
    und = n
    while und > 0 and r != 0:
        r <<= 1
        ones, st = ones_in_bits(st, und)
        if r >= d:  # digit 1: U's digit 0 < 1 succeeds, 1 stays undecided
            r -= d
            succ += und - ones
            und = ones
        else:  # digit 0: U's digit 1 > 0 fails, 0 stays undecided
            und -= ones
    return succ, st


#: splits of at least this many draws take Binomial(k, a/d) from :func:`binomial_btpe` (a few
#: uniforms each, whatever k) instead of :func:`binomial_rational` (about k to 2k random bits):
#: the tree's upper levels, where one split holds many draws (measured on the splits alone, one
#: thread, 2026-11-28, ns per element: 0.191 → 0.139 at M = 13 885, 0.237 → 0.101 at M = 10⁶;
#: 1024 and 3072 measured within 10 % of 2048, 256 slower than popcounts)
BTPE_MIN = 2048


@njit(**NJIT)
def unit_double(st):
    """Uniform double in [0, 1) with 53 random bits, on a state tuple: (u, state)."""
    r, st = step(st)
    return np.float64(r >> uint64(11)) * (1.0 / 9007199254740992.0), st


@njit(**NJIT)
def _stirling_tail(x):
    """1/(12x) − 1/(360x³) + 1/(1260x⁵) − 1/(1680x⁷) + 1/(1188x⁹): ln x! − Stirling's ln x!
    (the correction of BTPE's final test)."""
    x2 = x * x
    return (13860.0 - (462.0 - (132.0 - (99.0 - 140.0 / x2) / x2) / x2) / x2) / x / 166320.0


@njit(**NJIT)
def binomial_btpe(st, n, p):
    """Binomial(n, p) by Kachitvichyanukul & Schmeiser's BTPE, for n·min(p, 1 − p) > 30:
    (count, state tuple).

    The acceptance–rejection sampler of V. Kachitvichyanukul and B. W. Schmeiser, "Binomial random
    variate generation", Comm. ACM 31 (1988) 216–222, doi:10.1145/42372.42381 (step numbers
    in the comments), as NumPy's ``random_binomial_btpe`` after its fix of the final Stirling test
    (NumPy PR 31238: the constant 13860, and the corrections of x1 and w subtracted). Two uniforms
    per trial, about 1.1–1.3 trials on average, whatever n: the cost does not grow with the draws
    split. An exact sampler (its envelope dominates the pmf; the squeezes only decide sooner).
    """
    r = min(p, 1.0 - p)
    q = 1.0 - r
    nrq = n * r * q
    fm = n * r + r
    m = np.int64(math.floor(fm))
    p1 = math.floor(2.195 * math.sqrt(nrq) - 4.6 * q) + 0.5
    xm = m + 0.5
    xl = xm - p1
    xr = xm + p1
    c = 0.134 + 20.5 / (15.3 + m)
    a = (fm - xl) / (fm - xl * r)
    laml = a * (1.0 + a / 2.0)
    a = (xr - fm) / (xr * q)
    lamr = a * (1.0 + a / 2.0)
    p2 = p1 * (1.0 + 2.0 * c)
    p3 = p2 + c / laml
    p4 = p3 + c / lamr
    y = np.int64(0)
    while True:
        u, st = unit_double(st)  # step 1
        u *= p4
        v, st = unit_double(st)
        if u <= p1:  # the triangle: accepted at once
            y = np.int64(math.floor(xm - p1 * v + u))
            break
        if u <= p2:  # step 2: the parallelograms
            x = xl + (u - p1) / c
            v = v * c + 1.0 - abs(m - x + 0.5) / p1
            if v > 1.0:
                continue
            y = np.int64(math.floor(x))
        elif u <= p3:  # step 3: the left exponential tail
            y = np.int64(math.floor(xl + math.log(v) / laml))
            if y < 0 or v == 0.0:
                continue
            v = v * (u - p2) * laml
        else:  # step 4: the right exponential tail
            y = np.int64(math.floor(xr - math.log(v) / lamr))
            if y > n or v == 0.0:
                continue
            v = v * (u - p3) * lamr
        k = abs(y - m)
        if k <= 20 or k >= nrq / 2.0 - 1.0:  # step 5.1: f(y)/f(m) by its recursion
            s = r / q
            aa = s * (n + 1)
            f = 1.0
            if m < y:
                for i in range(m + 1, y + 1):
                    f *= aa / i - s
            elif m > y:
                for i in range(y + 1, m + 1):
                    f /= aa / i - s
            if v > f:
                continue
            break
        rho = (k / nrq) * ((k * (k / 3.0 + 0.625) + 0.16666666666666666) / nrq + 0.5)  # step 5.2: squeeze
        t = -k * k / (2.0 * nrq)
        big_a = math.log(v)
        if big_a < t - rho:
            break
        if big_a > t + rho:
            continue
        x1 = y + 1.0  # step 5.3: the final test, ln f(y)/f(m) by Stirling's formula
        f1 = m + 1.0
        z = n + 1.0 - m
        w = n - y + 1.0
        if big_a > (xm * math.log(f1 / x1) + (n - m + 0.5) * math.log(z / w) + (y - m) * math.log(w * r / (x1 * q))
                    + _stirling_tail(f1) + _stirling_tail(z) - _stirling_tail(x1) - _stirling_tail(w)):
            continue
        break
    return (n - y if p > 0.5 else y), st


@njit(**NJIT)
def split_binomial(st, k, a, d):
    """Binomial(k, a/d), 0 ≤ a ≤ d, for a split of :func:`multinomial_split`: (count, state tuple).
    :func:`binomial_btpe` from :data:`BTPE_MIN` draws on (when k·min(a, d − a)/d > 30), else
    :func:`binomial_rational` (exact from random bits)."""
    if k >= BTPE_MIN and k * min(a, d - a) > 30 * d:
        return binomial_btpe(st, k, a / d)
    return binomial_rational(st, k, a, d)


@njit(**NJIT)
def multinomial_start(stack, m, n):
    """Start the counts of ``n`` uniform draws over ``m`` cells: push the root; returns the stack size."""
    stack[0, 0] = 0
    stack[0, 1] = m
    stack[0, 2] = n
    return np.int64(1)  # not the literal 1: callers would compile a specialization for it


@njit(**NJIT)
def multinomial_split(st, stack, sp):
    """Split the pending cells of :func:`multinomial_leaf` down to its next leaf: returns
    ``(lo, hi, k, sp, st)``, the leaf's cells ``[lo, hi)`` and the ``k`` draws that fall in
    them, to be placed by :func:`leaf_counts`. Cells ``[lo, hi)`` of d points are a leaf when d
    is a power of two from 2**MIN_FIELD_BITS = 64 to 2**LEAF_BITS = 4096, or d < 64; otherwise
    their left part is, where d > 4096, half of their full leaves of 4096 points, rounded up, and
    else the largest power of two below d (the rest of fewer than 4096 points splits into
    powers of two, largest first, down to a last leaf of fewer than 64)."""
    leaf = np.int64(1) << LEAF_BITS
    least = np.int64(1) << MIN_FIELD_BITS
    while True:
        sp -= 1
        lo = stack[sp, 0]
        hi = stack[sp, 1]
        k = stack[sp, 2]
        d = hi - lo
        if d < least or (d <= leaf and (d & (d - 1)) == 0):
            return lo, hi, k, sp, st
        if d > leaf:
            a = (((d >> LEAF_BITS) + 1) >> 1) << LEAF_BITS  # half of the full leaves, rounded up
        else:  # the largest power of two below d (64 ≤ d < 4096: smear its top bit down)
            x = d | (d >> 1)
            x |= x >> 2
            x |= x >> 4
            x |= x >> 8
            a = (x + 1) >> 1
        kl, st = split_binomial(st, k, a, d)
        stack[sp, 0] = lo + a  # right part below the left one: the left is popped first
        stack[sp, 1] = hi
        stack[sp, 2] = k - kl
        stack[sp + 1, 0] = lo
        stack[sp + 1, 1] = lo + a
        stack[sp + 1, 2] = kl
        sp += 2


@njit(**NJIT)
def word_fields(st, k, seg, bits, fields):
    """Add ``k`` draws to ``seg`` (2**bits cells): the ``bits``-bit fields of successive 64-bit
    words, ``fields`` a word, low field first (the last word's first ``k`` mod ``fields``).
    Returns the state tuple. :func:`leaf_counts` passes constants; LLVM inlines the call and unrolls
    a word's fields, a loop of constant length (the same speed as the two loops written out, one
    thread, M = 10⁵: 0.40–0.41 against 0.41 ns per element·replicate of ZMS's bootstrap)."""
    f = uint64((1 << bits) - 1)
    while k >= fields:
        r, st = step(st)
        for t in range(fields):
            seg[np.int64((r >> uint64(bits * t)) & f)] += 1
        k -= fields
    if k > 0:
        r, st = step(st)
        for t in range(k):
            seg[np.int64((r >> uint64(bits * t)) & f)] += 1
    return st


@njit(**NJIT)
def leaf_counts(st, k, seg):
    """``seg`` (a leaf's ``hi − lo`` cells) = the counts of ``k`` i.i.d. uniform draws over its
    cells. A leaf of 2**b cells, b = 6 … 12, takes its draws as the b-bit fields of 64-bit words,
    ⌊64/b⌋ a word (five 12-bit fields for a full leaf of 4096, :data:`LEAF_FIELDS`; 5, 6, 7, 8, 9
    and 10 for b = 11 … 6), low field first, the last word's first k mod ⌊64/b⌋; the last leaf of
    fewer than 64 cells by Lemire's bounded draws (:func:`lemire_fill`). Returns the state tuple.

    A word's fields are a loop of constant length (unrolled), not one of ``min(k, fields)``: a
    loop of variable length was not unrolled and cost a third more (1.95 against 1.52 ns per draw
    with the bootstrap's sums, 8-bit fields, M = 13 885).
    """
    d = seg.shape[0]
    seg[:] = 0
    # one call per width, written out: each passes literal constants, which LLVM needs to unroll
    # a word's fields (a width looked up at run time left the loop rolled)
    if d == np.int64(1) << LEAF_BITS:
        st = word_fields(st, k, seg, LEAF_BITS, LEAF_FIELDS)
    elif d == 2048:
        st = word_fields(st, k, seg, 11, 5)
    elif d == 1024:
        st = word_fields(st, k, seg, 10, 6)
    elif d == 512:
        st = word_fields(st, k, seg, 9, 7)
    elif d == 256:
        st = word_fields(st, k, seg, 8, 8)
    elif d == 128:
        st = word_fields(st, k, seg, 7, 9)
    elif d == 64:
        st = word_fields(st, k, seg, 6, 10)
    else:
        st = lemire_fill(st, d, k, seg, True)
    return st


@njit(**NJIT)
def multinomial_leaf(st, stack, sp, w):
    """Next leaf, in cell order, of the equal-probability multinomial (docs/methods.md, "Bootstrap").

    The ``k`` draws that fall in cells ``[lo, hi)`` split between its left part (``a``
    cells, :func:`multinomial_split`) and the rest as Binomial(k, a/(hi − lo))
    (:func:`split_binomial`); given the split, each part's draws are again i.i.d.
    uniform over it, so splitting down to leaves and drawing each leaf's ``k`` cells
    there gives exactly the counts of ``n`` i.i.d. uniform draws over all cells: a
    bootstrap resample as multiplicities (:func:`multinomial_split`, :func:`leaf_counts`).
    The leaves come out left to right and ``w[lo:hi]`` is written only then, so memory is
    touched in order, in cache-sized pieces, whatever M.

    ``stack`` (STACK_ROWS, 3) holds pending ``(lo, hi, k)``; ``st`` is a state tuple.
    Returns ``(lo, hi, sp, st)``: ``w[lo:hi]`` now holds the leaf's counts; stop when
    ``sp == 0``.
    """
    lo, hi, k, sp, st = multinomial_split(st, stack, sp)
    st = leaf_counts(st, k, w[lo:hi])
    return lo, hi, sp, st


@njit(**NJIT)
def multinomial_counts(s, m, n, w, stack):
    """``w[i]`` = how many of ``n`` i.i.d. uniform draws over ``[0, m)`` hit ``i``, written in
    order leaf by leaf (:func:`multinomial_leaf`); advances the state array ``s``."""
    st = load_state(s)
    sp = multinomial_start(stack, m, n)
    while sp > 0:
        _lo, _hi, sp, st = multinomial_leaf(st, stack, sp, w)
    store_state(s, st)
