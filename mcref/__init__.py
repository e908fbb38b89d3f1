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

from . import datasets, studies, synthetic
from ._warnings import (BiasedIntervalWarning, DegenerateBootstrapWarning, FewReplicatesWarning, ShrunkBinsWarning,
                        SlowConvergenceWarning, TieOrderWarning)
from .binning import Binning, equal_count_bins
from .bootstrap import BootstrapResult, bootstrap, bootstrap_many
from .decimation import DecimationResult, decimation
from .distfit import DistFit, distfit
from .generative import Distribution, get_distribution
from .intervals import ConfidenceInterval
from .reference import PairedDifference, ReferenceResult, Simulation, simulate, simulated_reference
from .shape import ShapeScreen, shape_screen
from .stats import statistic, statistics, tie_spread
from .validate import ValidationTable, validate
from .zeta import zeta, zeta_sim2

__version__ = "0.1.0"

__all__ = [
    "BiasedIntervalWarning", "DegenerateBootstrapWarning", "FewReplicatesWarning", "ShrunkBinsWarning",
    "SlowConvergenceWarning", "TieOrderWarning", "studies", "synthetic",
    "Binning", "BootstrapResult", "ConfidenceInterval", "DecimationResult", "DistFit", "Distribution", "PairedDifference", "ReferenceResult",
    "ShapeScreen", "Simulation", "ValidationTable", "bootstrap", "bootstrap_many", "datasets", "decimation", "distfit",
    "equal_count_bins", "get_distribution", "shape_screen", "simulate", "simulated_reference", "statistic",
    "statistics", "tie_spread", "validate", "zeta", "zeta_sim2",
]
