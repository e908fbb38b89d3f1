"""Warning classes of mcref (docs/methods.md, "Code conventions")."""

from __future__ import annotations


class MCRefWarning(Warning):
    """Base class of every warning mcref emits: ``warnings.simplefilter("ignore", MCRefWarning)``
    silences them all, ``"error"`` turns them into exceptions (the test suite does)."""


class DegenerateBootstrapWarning(MCRefWarning, RuntimeWarning):
    """BCa could not be computed (all replicates equal, infinite ``z0`` or undefined
    acceleration); the percentile interval is returned instead."""

    def __init__(self, msg: str | None = None):
        super().__init__(
            msg
            or "the BCa interval is undefined for this bootstrap distribution; "
            "falling back to the percentile interval"
        )


class ShrunkBinsWarning(MCRefWarning, UserWarning):
    """The requested number of bins was reduced to respect ``min_count`` (``shrink=True``)."""


class BiasedIntervalWarning(MCRefWarning, RuntimeWarning):
    """The BCa interval does not contain the estimate θ̂ itself.

    It happens when the statistic is strongly biased at this sample size: BCa shifts the
    interval to correct for the bias (z0 far from 0). Typical for ENCE, ZMSE and UCE of
    well-calibrated data, whose resampled values are all inflated by the sampling noise of
    the bins. The interval is then an interval for the *bias-corrected* statistic: compare
    it with a bias-corrected reference, not with the mean of simulated values of the
    biased statistic (docs/methods.md, "Verdicts")."""

    def __init__(self, msg: str | None = None):
        super().__init__(msg or "the BCa interval excludes the estimate (strong finite-sample bias)")


class FewReplicatesWarning(MCRefWarning, UserWarning):
    """Fewer bootstrap or Monte Carlo replicates than a stable result needs (the table's
    verdicts are then indicative): BCa limits need ~1000 replicates or more, a Monte Carlo
    p-value near α = 0.05 needs ~1000 repeats to be resolved."""


class TieOrderWarning(MCRefWarning, UserWarning):
    """A binned statistic (ENCE, ZMSE, UCE) depends on the input order of tied u values:
    runs of equal u straddle a bin cut, and the stable sort puts them in bins by row order.
    :func:`mcref.tie_spread` gives the statistic's range over random orders of the ties."""


class SlowConvergenceWarning(MCRefWarning, UserWarning):
    """A generative distribution so heavy-tailed that Monte Carlo means converge extremely
    slowly (unit-variance t(ν) with ν close to 2: ε² has tail index ν/2 ≈ 1)."""


class SmallSampleWarning(MCRefWarning, UserWarning):
    """So few points that bootstrap intervals and Monte Carlo p-values say little: the
    verdicts of :func:`mcref.validate` are then indicative only (below
    ``mcref.validate.MIN_RELIABLE_M`` points)."""


class MCRefDeprecationWarning(MCRefWarning, DeprecationWarning):
    """An old spelling of a keyword (docs/api.rst, "Conventions"): it still works for one
    release, under its new name."""
