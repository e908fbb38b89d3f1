"""mcref — a numba-accelerated Monte Carlo engine for validating the calibration of
uncertainty quantification in machine-learning regression.

Quick tour
----------
>>> import mcref
>>> ds = mcref.datasets.load("Diffusion_RF")
>>> round(mcref.statistic("ZMS", ds.E, ds.u), 3) > 0
True
"""

from __future__ import annotations

from . import datasets, diagnostics, scores, studies, synthetic
from .workflows._benchmark import BenchmarkResult, benchmark
from ._skce import SKCETest, default_skce_n_boot, default_skce_n_mc, skce, skce_length_scales, skce_test, ucme
from .workflows._recalibrate import ClippedVarianceWarning, RecalibrationCV, Recalibrator, recalibrate, recalibrate_cv
from .core._warnings import (BiasedIntervalWarning, DegenerateBootstrapWarning, FewReplicatesWarning, MCRefWarning,
                        MCRefDeprecationWarning,
                        ShrunkBinsWarning, SlowConvergenceWarning, SmallSampleWarning, TieOrderWarning)
from .binning import Binning, equal_count_bins
from .resampling._bootstrap import BootstrapResult, bootstrap, bootstrap_many
from .calibration import QCEResult, Uniformity, qce, rank_calibration, uniformity
from .workflows._decimation import DecimationResult, decimation
from .core._dependence import DependenceDiagnostics, dependence, optimal_block_length
from ._distfit import NU_BOUNDS, DistFit, TFit, distfit, fit_scaled, fit_t, ks_distance
from .diagnostics import (CalibrationCurve, CalibScores, CCConsistency, ConfidenceCurve, calib_scores,
                          calibration_curve, cc_consistency, confidence_curve)
from .generative import Distribution, get_distribution
from .intervals import ConfidenceInterval
from .reference import PairedDifference, ReferenceResult, Simulation, simulate, simulated_reference
from .shape import ShapeScreen, shape_screen
from .stats import register_statistic, statistic, statistics, tie_spread, unregister_statistic
from .verdict._validate import JointVerdict, ValidationTable, default_n_boot, default_n_mc, validate
from ._version import VERSION
from .resampling._zeta import zeta, zeta_sim2
from .warmup import precompile
from . import predictive
from .predictive import PredictiveCheck, from_estimator, from_intervals, from_quantiles, from_samples
from . import posterior, samples
from .posterior import PosteriorCheck, from_posterior, sbc, tarp_coverage
from .samples import (PRDC, Diversity, TwoSampleTable, c2st, diversity, energy_distance, frechet_distance, mmd, prdc,
                      two_sample, vendi_score)

__version__ = VERSION


def plot_report(E, u=None, x=None, **kwargs):
    """All the conditional-calibration diagnostics in one figure: see
    :func:`mcref.plots.plot_report` (needs matplotlib: ``pip install "mcref[plot]"``).
    ``E`` may be a :class:`~mcref.datasets.Dataset` (then no ``u``)."""
    from .report.plots import plot_report as _plot_report

    return _plot_report(E, u, x, **kwargs)

__all__ = [
    "BiasedIntervalWarning", "DegenerateBootstrapWarning", "FewReplicatesWarning", "MCRefWarning",
    "MCRefDeprecationWarning", "ShrunkBinsWarning",
    "SlowConvergenceWarning", "SmallSampleWarning", "TieOrderWarning", "scores", "studies", "synthetic",
    "Binning", "BootstrapResult", "ConfidenceInterval", "DecimationResult", "DistFit", "Distribution", "PairedDifference", "ReferenceResult",
    "ShapeScreen", "Simulation", "ValidationTable", "JointVerdict", "bootstrap", "bootstrap_many", "datasets", "decimation", "distfit",
    "fit_t", "fit_scaled", "ks_distance", "TFit", "NU_BOUNDS",
    "equal_count_bins", "get_distribution", "shape_screen", "simulate", "simulated_reference", "statistic",
    "statistics", "register_statistic", "unregister_statistic",
    "tie_spread", "validate", "precompile", "default_n_mc", "default_n_boot", "plot_report", "diagnostics", "qce", "rank_calibration",
    "uniformity", "QCEResult", "Uniformity", "zeta", "zeta_sim2", "benchmark", "BenchmarkResult",
    "recalibrate", "recalibrate_cv", "Recalibrator", "RecalibrationCV", "ClippedVarianceWarning",
    # whole-set calibration scores of mcref.diagnostics (the binned, local diagnostics stay there)
    "calib_scores", "CalibScores", "calibration_curve", "CalibrationCurve", "confidence_curve", "ConfidenceCurve",
    "cc_consistency", "CCConsistency",
    # dependent test sets (validate(groups=..., order=...))
    "dependence", "DependenceDiagnostics", "optimal_block_length",
    # predictive forms to a verdict (mcref.predictive)
    "predictive", "PredictiveCheck", "from_samples", "from_quantiles", "from_intervals", "from_estimator",
    # kernel calibration error of predictive distributions (mcref._skce)
    "skce", "skce_test", "ucme", "skce_length_scales", "default_skce_n_mc", "default_skce_n_boot", "SKCETest",
    # posteriors of vector parameters (mcref.posterior)
    "posterior", "from_posterior", "PosteriorCheck", "sbc", "tarp_coverage",
    # sample sets against sample sets, and diversity (mcref.samples)
    "samples", "two_sample", "TwoSampleTable", "mmd", "energy_distance", "frechet_distance", "prdc", "PRDC", "c2st",
    "vendi_score", "diversity", "Diversity",
]
