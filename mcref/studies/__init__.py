"""Simulation studies: grids of independent Monte Carlo cells, run in parallel and resumably.

The runner (:func:`run_study`) owns the worker pool (joblib processes, threads, or a Dask
cluster), the SQLite results store, progress and interrupts; a study module holds only
its grid, its cell ``cell(key, params, seed_seq, n_threads) -> rows`` and its summary.
Built-in studies (docs/methods.md, "Studies"):

* :func:`scaling` — ENCE/ZMSE reference values vs M and N, fit a + b·√(N/M);
* :func:`extrapolation` — ZMSE extrapolated to zero bin size (consistency test);
* :func:`sensitivity` — reference values under t(ν) vs normal D for a dataset's u;
* :func:`reliability` — validation probability of the ζ-tests on calibrated data;
* :func:`verdicts` — size and power of every score and verdict of :func:`mcref.validate`.
"""

from ._result import StudyResult
from ._runner import RunInfo, RunOptions, StudySpec, cell_seed, run_study
from .extrapolation import ExtrapolationResult, extrapolation
from .reliability import ReliabilityResult, reliability
from .scaling import ScalingResult, scaling
from .sensitivity import SensitivityResult, sensitivity
from .verdicts import VerdictsResult, verdicts

__all__ = ["ExtrapolationResult", "ReliabilityResult", "RunInfo", "RunOptions", "ScalingResult", "SensitivityResult",
           "StudyResult", "StudySpec", "cell_seed", "extrapolation", "reliability", "run_study", "scaling",
           "sensitivity", "verdicts", "VerdictsResult"]
