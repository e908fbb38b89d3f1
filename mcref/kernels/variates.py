"""Normal and gamma variates inside numba kernels, from the per-chunk xoshiro256** streams.

Every ``next_*`` / ``fill_*`` function takes the 4 × uint64 state array ``s`` of
:mod:`mcref.kernels.rng` (one per chunk, from :func:`~mcref.kernels.rng.chunk_states`;
see ``docs/methods.md``, section "Random numbers") and advances it in place, so a chunk's
variates depend only on its own state. The words drawn are those of
:func:`~mcref.kernels.rng.next_u64`.

* :func:`next_normal` — N(0, 1) by a 256-layer ziggurat of equal-area layers with exact
  wedge rejection and Marsaglia's exact tail method (Marsaglia & Tsang 2000).
* :func:`next_gamma` — Gamma(a, 1) by Marsaglia & Tsang's squeeze/rejection method for
  a ≥ 1, and the boost Gamma(a) = Gamma(a + 1)·U^(1/a) for 0 < a < 1.
* :func:`next_exponential` — Exp(1) by inversion, −ln U.
* :func:`fill_normal`, :func:`fill_gamma` — fill a C-contiguous 1-D or 2-D float64
  array in row-major order; identical to repeated ``next_*`` calls on the same state.
* :func:`t_fast`, :func:`fill_t` — Student t(ν) by the same ziggurat built for ν
  (:func:`t_ziggurat`): one draw on the state tuple (the per-draw function of kernels, as
  :func:`normal_fast` for the normal), and the fill loop made of it.

Bit usage of the one 64-bit word ``w`` behind each ziggurat attempt: bits 0–7 pick the
layer i, bit 8 the sign, bits 11–63 (the top 53 bits) the uniform integer j ∈ [0, 2^53)
that places |x| = j·2^-53·X[i] along the layer; bits 9–10 are unused. Layer, sign and
position come from disjoint bits, so they are independent (the layer/position correlation
of the 32-bit original does not arise). 98.8 % of attempts end with one integer
comparison j < K[i]; the others draw one more uniform (wedge test, 255 layers) or run the
tail algorithm (base layer); a rejected attempt starts over with a fresh word.

Implementation: the generators run on the state as a tuple of four uint64 scalars, kept
in registers by the loops. numba adds a pair of atomic reference-count updates around
every out-of-line call made by a function that holds the state *array*, so the ``next_*``
functions are inlined whole (numba IR, ``inline="always"``) into the calling kernel,
leaving no call; a kernel looping over ``next_normal(s)`` runs at the speed of
:func:`fill_normal`. The fill loops inline the fast paths only and call the out-of-line
slow paths with the state tuple (smaller loops, shorter compilation). Inlined code is
compiled with the caller's numba options: under the project's ``NJIT`` options it gives
the same bits as ``fill_*``.

References: G. Marsaglia & W. W. Tsang, "The ziggurat method for generating random
variables", J. Stat. Softw. 5(8) (2000), doi:10.18637/jss.v005.i08 (ziggurat and the
tail method of Marsaglia 1964); G. Marsaglia & W. W. Tsang, "A simple method for
generating gamma variables", ACM TOMS 26(3) (2000), doi:10.1145/358407.358414.

>>> import numpy as np
>>> from mcref.kernels.rng import chunk_states
>>> s = chunk_states(np.random.SeedSequence(0), 1)[0]
>>> z = np.empty((100, 1000))
>>> fill_normal(s, z)
>>> bool(abs(z.mean()) < 0.02 and abs(z.std() - 1.0) < 0.02)
True
>>> g = np.empty(100_000)
>>> fill_gamma(s, 4.0, g)
>>> bool(abs(g.mean() - 4.0) < 0.05 and abs(g.var() - 4.0) < 0.2)
True
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import njit, uint64

from ._config import NJIT
from .rng import load_state, step, store_state

N_LAYERS = 256
_TWO53 = 9007199254740992.0  # 2**53
_INV_TWO53 = 1.0 / _TWO53


# ---- ziggurat tables (NumPy / math, float64, once at import) -------------------------
def _tail_area(r: float) -> float:
    """∫_r^∞ exp(−x²/2) dx."""
    return math.sqrt(0.5 * math.pi) * math.erfc(r / math.sqrt(2.0))


def _layers(r: float, n: int, f, fm1, inv_m1, tail) -> tuple[list[float], float, float]:
    """Edges X[0..n−1] of an n-layer ziggurat of the decreasing density f on [0, ∞) (f(0) = 1)
    for tail start ``r``, the common area v, and the closure residual f(X[n−1]) + v/X[n−1] − 1
    (zero when the top layer has area v exactly). ``fm1`` = f − 1 and ``inv_m1`` (y − 1 ↦
    f⁻¹(y)) keep full precision near the top, where f → 1; ``tail(r)`` = ∫_r^∞ f."""
    v = r * f(r) + tail(r)
    x = [v / f(r), r]
    for _ in range(1, n - 1):
        ym1 = fm1(x[-1]) + v / x[-1]
        if ym1 >= 0.0:  # r too small: the layers reach the top too early
            return x, v, math.inf
        x.append(inv_m1(ym1))
    return x, v, fm1(x[-1]) + v / x[-1]


def _layers_for(r: float, n: int) -> tuple[list[float], float, float]:
    """:func:`_layers` of f = exp(−x²/2): f(X[i+1]) − 1 = expm1(−X[i]²/2) + v/X[i] and
    X[i+1] = √(−2 log1p(·))."""
    return _layers(r, n, lambda x: math.exp(-0.5 * x * x), lambda x: math.expm1(-0.5 * x * x),
                   lambda ym1: math.sqrt(-2.0 * math.log1p(ym1)), _tail_area)


def _closing_r(layers, lo: float) -> float:
    """The tail start r at which ``layers(r)`` closes its top layer (bisection; the residual is
    positive below that r and negative above)."""
    hi = 2.0 * lo
    while layers(hi)[2] > 0.0:
        lo, hi = hi, 2.0 * hi
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            return hi
        if layers(mid)[2] > 0.0:
            lo = mid
        else:
            hi = mid


def ziggurat_tables(n: int = N_LAYERS) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Edges ``X`` and ordinates ``F`` (n + 1 values each) of an n-layer ziggurat for
    f(x) = exp(−x²/2), with the tail start ``r`` and the common layer area ``v``.

    Layer i ∈ [0, n) is the box [0, X[i]] × [F[i], F[i+1]] of area v: X[0] = v/f(r) is
    the base layer's virtual width (its part beyond r is the tail ∫_r^∞ f), X[1] = r,
    f(X[i+1]) = f(X[i]) + v/X[i], X[n] = 0; F[0] = 0, F[i] = f(X[i]), F[n] = 1. ``r``
    is found by bisection so that the top layer closes at f = 1 (Marsaglia & Tsang,
    J. Stat. Softw. 5(8) 2000, doi:10.18637/jss.v005.i08).
    """
    r = _closing_r(lambda x: _layers_for(x, n), 2.0)
    xs, v, _ = _layers_for(r, n)
    X = np.array(xs + [0.0])
    F = np.exp(-0.5 * X * X)
    F[0] = 0.0
    F[n] = 1.0
    return X, F, r, v


_X, _F, ZIG_R, ZIG_V = ziggurat_tables()
#: signed step per unit of j, indexed by the word's low 9 bits: ±X[k & 255]·2^-53
_W = np.concatenate([_X[:N_LAYERS], -_X[:N_LAYERS]]) * _INV_TWO53
#: fast acceptance: j < K[i]  ⇔  j·2^-53·X[i] < X[i+1] (the box fully under the curve)
_K = np.floor(_X[1:] / _X[:N_LAYERS] * _TWO53).astype(np.uint64)
_FL = _F[:N_LAYERS].copy()  # wedge bottom F[i]
_FD = _F[1:] - _F[:N_LAYERS]  # wedge height F[i+1] − F[i]
_INV_R = 1.0 / ZIG_R


@functools.lru_cache(maxsize=16)
def t_ziggurat(nu: float) -> tuple:
    """The 256-layer ziggurat of Student's t(ν), ν > 0, for :func:`t_fast` and :func:`fill_t`:
    ``(W, K, FL, FD, r, nu)`` as the normal's tables (:func:`ziggurat_tables`: signed step per
    unit of j, fast-acceptance bound, wedge bottom and height), for the unnormalized density
    f(x) = (1 + x²/ν)^(−(ν+1)/2), with the tail area ∫_r^∞ f = sf_t(r; ν)/c_ν,
    c_ν = Γ((ν+1)/2)/(√(νπ) Γ(ν/2)) (:func:`scipy.special.stdtr`), and near the top
    f − 1 = expm1(−(ν+1)/2 · log1p(x²/ν)), f⁻¹(y) = √(ν·expm1(−2/(ν+1) · log1p(y − 1))).
    Built once per ν (cached); ν = inf gives the normal's tables."""
    from scipy.special import gammaln, stdtr

    nu = float(nu)
    if nu == math.inf:  # the normal limit: its own tables (kernels draw the normal then)
        return _W, _K, _FL, _FD, ZIG_R, nu
    if not nu > 0.0 or not math.isfinite(nu):
        raise ValueError(f"`nu` must be a positive number of degrees of freedom, got {nu!r}")
    h = -0.5 * (nu + 1.0)
    c_nu = math.exp(gammaln(0.5 * (nu + 1.0)) - gammaln(0.5 * nu)) / math.sqrt(nu * math.pi)

    def layers(r: float):
        return _layers(r, N_LAYERS, lambda x: math.exp(h * math.log1p(x * x / nu)),
                       lambda x: math.expm1(h * math.log1p(x * x / nu)),
                       lambda ym1: math.sqrt(nu * math.expm1(math.log1p(ym1) / h)),
                       lambda r: float(stdtr(nu, -r)) / c_nu)

    r = _closing_r(layers, 2.0)
    xs, _v, _ = layers(r)
    X = np.array(xs + [0.0])
    F = np.exp(h * np.log1p(X * X / nu))
    F[0], F[N_LAYERS] = 0.0, 1.0
    W = np.concatenate([X[:N_LAYERS], -X[:N_LAYERS]]) * _INV_TWO53
    K = np.floor(X[1:] / X[:N_LAYERS] * _TWO53).astype(np.uint64)
    return W, K, F[:N_LAYERS].copy(), F[1:] - F[:N_LAYERS], r, nu


# ---- xoshiro256** on a register state: one implementation, in .rng --------------------
_step = step
_load = load_state
_store = store_state


@njit(**NJIT)
def _unit(w):
    """Uniform in [0, 1) from the top 53 bits of ``w``."""
    return np.float64(np.int64(w >> uint64(11))) * _INV_TWO53


@njit(**NJIT)
def _unit_open(w):
    """Uniform in (0, 1] from the top 53 bits of ``w``: (j + 1)·2^-53."""
    return np.float64(np.int64(w >> uint64(11)) + 1) * _INV_TWO53


# ---- normal ----------------------------------------------------------------------------
# Two compilations of one algorithm: the *_body functions hold all of it and are inlined
# (numba IR) into next_* and hence into the caller's kernel; the fill loops inline only
# the fast paths and call the out-of-line *_slow wrappers (smaller, faster-compiling
# loops). Both consume the stream identically.
@njit(**NJIT, inline="always")
def _normal_body(st, w):
    """N(0, 1) from the attempt word ``w`` and the state tuple: (z, new state).

    z = ±j·2^-53·X[i] (i = bits 0–7, sign = bit 8, j = top 53 bits) is accepted when
    j < K[i]; else the base layer (i = 0) takes the exact tail — x = E₁/r until 2E₂ > x²,
    z = ±(r + x), E₁, E₂ ~ Exp(1) — and the other layers the wedge test
    F[i] + U·(F[i+1] − F[i]) < exp(−z²/2); a rejection starts over with a fresh word
    (Marsaglia & Tsang, J. Stat. Softw. 5(8) 2000, doi:10.18637/jss.v005.i08).
    """
    while True:
        k = np.int64(w & uint64(0x1FF))
        j = w >> uint64(11)
        x = np.float64(np.int64(j)) * _W[k]
        i = k & 0xFF
        if j < _K[i]:
            return x, st
        if i == 0:
            while True:
                w1, st = _step(st)
                w2, st = _step(st)
                t = -math.log(_unit_open(w1)) * _INV_R
                if -2.0 * math.log(_unit_open(w2)) > t * t:
                    break
            t += ZIG_R
            return (t if k < 256 else -t), st
        w1, st = _step(st)
        if _FL[i] + _unit(w1) * _FD[i] < math.exp(-0.5 * x * x):
            return x, st
        w, st = _step(st)


@njit(**NJIT)
def _normal_slow(st, w):
    """Out-of-line :func:`_normal_body`, for a word that failed the fast test (~1.2 %)."""
    return _normal_body(st, w)


@njit(**NJIT, inline="always")
def normal_fast(st):
    """One N(0, 1) from the state tuple: (z, new state); the fast path inline, else
    :func:`_normal_slow`."""
    w, st = _step(st)
    j = w >> uint64(11)
    if j < _K[w & uint64(0xFF)]:
        return np.float64(np.int64(j)) * _W[w & uint64(0x1FF)], st
    return _normal_slow(st, w)


@njit(**NJIT, inline="always")
def next_normal(s):
    """Standard normal N(0, 1): 256-layer ziggurat, exact wedges and tail (Marsaglia &
    Tsang, J. Stat. Softw. 5(8) 2000, doi:10.18637/jss.v005.i08).

    One word per attempt: bits 0–7 layer i, bit 8 sign, top 53 bits j; z = ±j·2^-53·X[i]
    is accepted at once when j < K[i] (98.8 %).
    """
    w, st = _step(_load(s))
    z, st = _normal_body(st, w)
    _store(s, st)
    return z


@njit(**NJIT)
def fill_normal(s, out):
    """Fill C-contiguous float64 ``out`` (1-D or 2-D) with i.i.d. N(0, 1) in row-major
    order: the values of repeated :func:`next_normal` calls, same final state."""
    flat = out.reshape(out.size)
    st = _load(s)
    for n in range(flat.shape[0]):
        z, st = normal_fast(st)
        flat[n] = z
    _store(s, st)


@njit(**NJIT, inline="always")
def next_exponential(s):
    """Exp(1) by inversion, −ln U with U = (j + 1)·2^-53 ∈ (0, 1], j the top 53 bits."""
    w, st = _step(_load(s))
    _store(s, st)
    return -math.log(_unit_open(w))


# ---- gamma -----------------------------------------------------------------------------
@njit(**NJIT)
def _gamma_dc(a):
    """d = a − 1/3 and c = 1/√(9d) of Marsaglia & Tsang's method (a ≥ 1)."""
    d = a - 1.0 / 3.0
    return d, 1.0 / math.sqrt(9.0 * d)


@njit(**NJIT, inline="always")
def _gamma_accept(d, c, z, u):
    """Marsaglia & Tsang's test of the attempt (z, u): (accepted, d·v), v = (1 + cz)³,
    accepted when u < 1 − 0.0331·z⁴ (squeeze) or v > 0 and ln u < z²/2 + d(1 − v + ln v).
    The squeeze needs no v > 0 test: v ≤ 0 means z ≤ −3√d ≤ −√6, so 0.0331·z⁴ > 1."""
    v = 1.0 + c * z
    z2 = z * z
    if u < 1.0 - 0.0331 * (z2 * z2):
        return True, d * (v * v * v)
    if v <= 0.0:
        return False, 0.0
    v = v * v * v
    return math.log(u) < 0.5 * z2 + d * (1.0 - v + math.log(v)), d * v


@njit(**NJIT, inline="always")
def _gamma_body(st, d, c):
    """Gamma(d + 1/3, 1), d ≥ 2/3, from the state tuple: (g, new state). Each attempt
    draws Z ~ N(0, 1) (:func:`_normal_body`), then U ~ U[0, 1) from one word."""
    while True:
        w, st = _step(st)
        z, st = _normal_body(st, w)
        w, st = _step(st)
        ok, g = _gamma_accept(d, c, z, _unit(w))
        if ok:
            return g, st


@njit(**NJIT)
def _gamma_slow(st, d, c):
    """Out-of-line :func:`_gamma_body`, after a rejected first attempt (~1 %)."""
    return _gamma_body(st, d, c)


@njit(**NJIT, inline="always")
def _gamma_fast(st, d, c):
    """As :func:`_gamma_body`, with the first attempt inline (normal fast path, squeeze and
    exact test) and the rest out of line (:func:`_normal_slow`, :func:`_gamma_slow`)."""
    z, st = normal_fast(st)
    w, st = _step(st)
    ok, g = _gamma_accept(d, c, z, _unit(w))
    if ok:
        return g, st
    return _gamma_slow(st, d, c)


@njit(**NJIT)
def _gamma_consts(a):
    """(d, c, 1/a) for shape a > 0, with d, c those of a + 1 when a < 1 (the boost)."""
    d, c = _gamma_dc(a if a >= 1.0 else a + 1.0)
    return d, c, 1.0 / a


@njit(**NJIT)
def _boost(g, w, inv_a):
    """Gamma(a + 1) → Gamma(a), a < 1: g·U^(1/a), U = (j + 1)·2^-53 ∈ (0, 1] from ``w``."""
    return g * math.exp(math.log(_unit_open(w)) * inv_a)


@njit(**NJIT, inline="always")
def next_gamma(s, a):
    """Gamma(a, 1), a > 0. a ≥ 1: d·(1 + cZ)³, d = a − 1/3, c = 1/√(9d), accepted by the
    squeeze U < 1 − 0.0331·Z⁴ or ln U < Z²/2 + d(1 − v + ln v); 0 < a < 1: Gamma(a + 1)·U^(1/a)
    (Marsaglia & Tsang, ACM TOMS 26(3) 2000, doi:10.1145/358407.358414). NaN unless a > 0
    (no draw)."""
    if not a > 0.0:
        return np.nan
    d, c, inv_a = _gamma_consts(a)
    g, st = _gamma_body(_load(s), d, c)
    if a < 1.0:
        w, st = _step(st)
        g = _boost(g, w, inv_a)
    _store(s, st)
    return g


@njit(**NJIT)
def fill_gamma(s, a, out):
    """Fill C-contiguous float64 ``out`` (1-D or 2-D) with i.i.d. Gamma(a, 1) in row-major
    order: the values of repeated :func:`next_gamma` calls, same final state. NaN unless
    a > 0 (no draw)."""
    flat = out.reshape(out.size)
    if not a > 0.0:
        flat[:] = np.nan
        return
    d, c, inv_a = _gamma_consts(a)
    st = _load(s)
    if a < 1.0:
        for n in range(flat.shape[0]):
            g, st = _gamma_fast(st, d, c)
            w, st = _step(st)
            flat[n] = _boost(g, w, inv_a)
    else:  # a loop without the boost's branch: 6.9 against 9.5 ns per draw (χ²₆ of the t(6) D)
        for n in range(flat.shape[0]):
            g, st = _gamma_fast(st, d, c)
            flat[n] = g
    _store(s, st)


# ---- Student t ---------------------------------------------------------------------------
@njit(**NJIT, inline="always")
def _t_body(st, w, W, K, FL, FD, r, nu):
    """Student t(ν) from the attempt word ``w``, the state tuple and the tables of
    :func:`t_ziggurat` (passed one by one: a tuple argument costs reference counting per
    call): (x, new state). The normal's ziggurat (:func:`_normal_body`) on the
    density f(x) = (1 + x²/ν)^(−(ν+1)/2): a wedge accepts when F[i] + U·(F[i+1] − F[i]) < f(x);
    the base layer takes the exact tail beyond r by rejection from h(x) ∝ x(1 + x²/ν)^(−(ν+2)/2),
    drawn by inversion, X = √(ν((1 + r²/ν)·U^(−2/ν) − 1)), and accepted with probability
    √(1/X² + 1/ν)/√(1/r² + 1/ν) (f/h = √(1/x² + 1/ν), decreasing: the analogue of Marsaglia's
    normal tail method)."""
    while True:
        k = np.int64(w & uint64(0x1FF))
        j = w >> uint64(11)
        x = np.float64(np.int64(j)) * W[k]
        i = k & 0xFF
        if j < K[i]:
            return x, st
        if i == 0:
            a = 1.0 + r * r / nu
            top = math.sqrt(1.0 / (r * r) + 1.0 / nu)
            while True:
                w1, st = _step(st)
                w2, st = _step(st)
                t = math.sqrt(nu * (a * math.exp(-2.0 / nu * math.log(_unit_open(w1))) - 1.0))
                if _unit(w2) * top < math.sqrt(1.0 / (t * t) + 1.0 / nu):
                    break
            return (t if k < 256 else -t), st
        w1, st = _step(st)
        if FL[i] + _unit(w1) * FD[i] < math.exp(-0.5 * (nu + 1.0) * math.log1p(x * x / nu)):
            return x, st
        w, st = _step(st)


@njit(**NJIT)
def _t_slow(st, w, W, K, FL, FD, r, nu):
    """Out-of-line :func:`_t_body`, for a word that failed the fast test (~2 %)."""
    return _t_body(st, w, W, K, FL, FD, r, nu)


@njit(**NJIT, _nrt=False)
def t_fast(st, W, K, FL, FD, r, nu):
    """One Student t(ν) from the state tuple and the tables of :func:`t_ziggurat`: (x, new
    state). The per-draw function of every kernel that draws t variates (:func:`fill_t`, the
    cluster references of :mod:`mcref.kernels.units`): ``st = load_state(s)``, ``x, st =
    t_fast(st, *t_ziggurat(nu))`` per draw, ``store_state(s, st)``. The fast path (one 64-bit
    word per accepted attempt, as :func:`normal_fast`) is here, the rest is the out-of-line
    :func:`_t_slow` (~2 %).

    Compiled without reference counting (``_nrt=False``: it allocates nothing, the tables are
    borrowed) and not inlined in numba IR: an IR-inlined function of the table arrays gets an
    atomic incref/decref of each of them on every draw (measured 28 ns a draw instead of 3),
    while this call, inlined by LLVM, costs none."""
    w, st = _step(st)
    j = w >> uint64(11)
    if j < K[w & uint64(0xFF)]:
        return np.float64(np.int64(j)) * W[w & uint64(0x1FF)], st
    return _t_slow(st, w, W, K, FL, FD, r, nu)


@njit(**NJIT)
def fill_t(s, W, K, FL, FD, r, nu, out):
    """Fill C-contiguous float64 ``out`` (1-D) with i.i.d. Student t(ν): ``fill_t(s,
    *t_ziggurat(nu), out)``; advances the state array ``s``. The values of repeated
    :func:`t_fast` calls on the state tuple, same final state."""
    st = _load(s)
    for n in range(out.shape[0]):
        x, st = t_fast(st, W, K, FL, FD, r, nu)
        out[n] = x
    _store(s, st)
