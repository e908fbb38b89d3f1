"""mcref.posterior.sbc: the simulate → infer → check study on the study runner. Each simulation a
seeded cell (its stream by hand), the same bits for 1 and 2 workers, on threads and after an
interrupt and resume; the check equal to from_posterior on the collected arrays; the toy's
posterior against its closed form; the errors."""

from __future__ import annotations

import numpy as np
import pytest

from mcref.posterior import gaussian_linear_sbc, sbc, sbc_draws
from mcref.studies import cell_seed

TOY = gaussian_linear_sbc(d=3, noise=0.7)
FNS = (TOY.sample_prior, TOY.simulate, TOY.sample_posterior)
RUN = dict(n_sims=8, n_draws=15, seed=7, progress=False)

_CALLS = [0, None]  # calls of _simulate so far, and the call that raises KeyboardInterrupt (None: never)


def _simulate(theta, rng):
    """TOY.simulate, counting its calls; raises KeyboardInterrupt (a Ctrl-C) at call _CALLS[1]."""
    _CALLS[0] += 1
    if _CALLS[1] is not None and _CALLS[0] == _CALLS[1]:
        raise KeyboardInterrupt
    return TOY.simulate(theta, rng)


@pytest.fixture(scope="module")
def fresh():
    return sbc_draws(*FNS, backend="sequential", **RUN)


def test_each_simulation_is_its_seeded_cell(fresh):
    """Simulation i draws θ*, x and the draws, in that order, from cell_seed(seed, "sbc", {"sim": i})."""
    assert fresh.truth.shape == (8, 3) and fresh.draws.shape == (8, 15, 3) and fresh.seed == 7
    for i in range(8):
        rng = np.random.default_rng(cell_seed(7, "sbc", {"sim": i}))
        theta = TOY.sample_prior(rng)
        draws = TOY.sample_posterior(TOY.simulate(theta, rng), 15, rng)
        np.testing.assert_array_equal(fresh.truth[i], theta)
        np.testing.assert_array_equal(fresh.draws[i], draws)
    rng = np.random.default_rng(cell_seed(7, "sbc", {"prior": 1000}))
    np.testing.assert_array_equal(fresh.prior_draws, np.stack([TOY.sample_prior(rng) for _ in range(1000)]))


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_two_workers_same_bits(fresh, backend):
    two = sbc_draws(*FNS, backend=backend, n_jobs=2, **RUN)
    np.testing.assert_array_equal(two.truth, fresh.truth)
    np.testing.assert_array_equal(two.draws, fresh.draws)
    np.testing.assert_array_equal(two.prior_draws, fresh.prior_draws)


def test_closures_travel_to_worker_processes():
    """loky sends closures by value: functions defined in a function work on processes too."""
    scale = 2.0

    def prior(rng):
        return scale * rng.standard_normal(2)

    out1 = sbc_draws(prior, lambda t, rng: t, lambda x, n, rng: x + rng.standard_normal((n, 2)), n_sims=4,
                     n_draws=3, seed=1, n_jobs=1, progress=False, n_prior=0)
    out2 = sbc_draws(prior, lambda t, rng: t, lambda x, n, rng: x + rng.standard_normal((n, 2)), n_sims=4,
                     n_draws=3, seed=1, n_jobs=2, backend="loky", progress=False, n_prior=0)
    assert out1.prior_draws is None
    np.testing.assert_array_equal(out1.draws, out2.draws)


def test_interrupt_then_resume_gives_the_fresh_bits(tmp_path, fresh):
    store = tmp_path / "sbc.sqlite"
    fns = (TOY.sample_prior, _simulate, TOY.sample_posterior)
    _CALLS[:] = [0, 4]  # Ctrl-C during the 4th simulation: 3 are committed
    with pytest.raises(KeyboardInterrupt):
        sbc_draws(*fns, backend="sequential", store=store, **RUN)
    _CALLS[:] = [0, None]
    resumed = sbc_draws(*fns, backend="sequential", store=store, **RUN)
    assert (resumed.n_loaded, resumed.n_computed, _CALLS[0]) == (3, 5, 5)
    np.testing.assert_array_equal(resumed.truth, fresh.truth)
    np.testing.assert_array_equal(resumed.draws, fresh.draws)
    # a larger n_sims extends the study, the seed read back from the store
    more = sbc_draws(*fns, backend="sequential", store=store, **{**RUN, "n_sims": 10, "seed": None})
    assert (more.n_loaded, more.n_computed, more.seed) == (8, 2, 7)
    np.testing.assert_array_equal(more.draws[:8], fresh.draws)
    from mcref.store import StoreMismatchError

    with pytest.raises(StoreMismatchError):  # other draws per simulation: another study
        sbc_draws(*fns, backend="sequential", store=store, **{**RUN, "n_draws": 16})
    other = gaussian_linear_sbc(d=3, noise=0.7, scale=0.8)  # another toy's methods: another study
    with pytest.raises(StoreMismatchError):
        sbc_draws(TOY.sample_prior, _simulate, other.sample_posterior, backend="sequential", store=store, **RUN)
    with pytest.raises(StoreMismatchError):  # other settings named in params
        sbc_draws(*fns, backend="sequential", store=store, params={"n_obs": 3}, **RUN)


def test_sbc_is_from_posterior_on_the_collected_arrays(fresh):
    from mcref.posterior import from_posterior

    check = sbc(*FNS, backend="sequential", n_swaps=49, **RUN)
    want = from_posterior(fresh.truth, fresh.draws, prior_draws=fresh.prior_draws, n_swaps=49, seed=7)
    np.testing.assert_array_equal(check.ranks, want.ranks)
    np.testing.assert_array_equal(check.tarp.f, want.tarp.f)
    assert check.pvalue == want.pvalue and check.verdict == want.verdict
    assert check.to_json() == want.to_json()


def test_toy_posterior_is_the_closed_form():
    """Given x, the exact posterior is N(x/(1+σ²), σ²/(1+σ²)); scale multiplies its sd, shift moves the
    first mean by shift·sd, corr sets the correlation: checked within 4.5 standard errors."""
    rng = np.random.default_rng(0)
    x = np.array([1.0, -2.0])
    n = 20_000
    v = 0.49 / 1.49
    for toy, mean, sd, rho in ((gaussian_linear_sbc(2, noise=0.7), x / 1.49, np.sqrt(v), 0.0),
                               (gaussian_linear_sbc(2, noise=0.7, scale=1.25, shift=0.3, corr=0.6),
                                x / 1.49 + [0.3 * np.sqrt(v), 0], 1.25 * np.sqrt(v), 0.6)):
        z = toy.sample_posterior(x, n, rng)
        np.testing.assert_allclose(z.mean(0), mean, atol=4.5 * sd / np.sqrt(n))
        np.testing.assert_allclose(z.std(0), sd, atol=4.5 * sd / np.sqrt(2 * n))
        assert abs(np.corrcoef(z.T)[0, 1] - rho) < 4.5 * (1 - rho ** 2) / np.sqrt(n)
    prior = gaussian_linear_sbc(2, prior_as_posterior=True).sample_posterior(x, n, rng)
    np.testing.assert_allclose(prior.mean(0), 0, atol=4.5 / np.sqrt(n))


def test_errors():
    with pytest.raises(ValueError, match="`simulate` must be a function, got int"):
        sbc_draws(TOY.sample_prior, 3, TOY.sample_posterior, n_sims=4, n_draws=5)
    with pytest.raises(ValueError, match="`n_sims` must be"):
        sbc_draws(*FNS, n_sims=1, n_draws=5)
    with pytest.raises(ValueError, match="`n_draws` must be"):
        sbc_draws(*FNS, n_sims=4, n_draws=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_boot'; besides the study's options it takes "
                                        "the check's keywords names, logpdf"):
        sbc(*FNS, n_sims=4, n_draws=5, n_boot=3)
    with pytest.raises(ValueError, match=r"must return an array of shape \(n_draws, d\) = \(5, 3\), got \(5, 2\)"):
        sbc_draws(TOY.sample_prior, TOY.simulate, lambda x, n, rng: np.zeros((n, 2)), n_sims=4, n_draws=5,
                  backend="sequential", progress=False)
    with pytest.raises(ValueError, match="returned NaN or infinite draws"):
        sbc_draws(TOY.sample_prior, TOY.simulate, lambda x, n, rng: np.full((n, 3), np.nan), n_sims=4, n_draws=5,
                  backend="sequential", progress=False)
    with pytest.raises(ValueError, match=r"the same number of parameters in every simulation: simulation 0 has d = [12], "
                                         r"simulation \d+ has d = [12]"):
        sbc_draws(lambda rng: np.zeros(1 + int(rng.random() < 0.5)), lambda t, rng: t,
                  lambda x, n, rng: rng.random((n, np.size(x))), n_sims=30, n_draws=5, backend="sequential",
                  progress=False)
    with pytest.raises(ValueError, match=r"`corr` needs d >= 2 and a value in \(-1, 1\), got corr=0.5 with d=1"):
        gaussian_linear_sbc(1, corr=0.5)
