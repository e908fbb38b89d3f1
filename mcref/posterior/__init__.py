"""Posteriors of vector parameters: simulation-based calibration per parameter and jointly,
TARP, sharpness, and one verdict of exact size by the swap null (docs/methods.md, "Posteriors
of vector parameters").

* :func:`from_posterior` — the check of N truths among their S posterior draws
  (:class:`PosteriorCheck`); :func:`tarp_coverage` TARP's f and ECP alone (:class:`TarpResult`);
* :func:`sbc` — the simulate → infer → check loop as a study (seeded cells, in parallel,
  resumable from a store); :func:`sbc_draws` its arrays; :func:`gaussian_linear_sbc` a toy;
* :func:`read_posterior` — the truth (N, d) and draws (N, S, d) from long tables (CSV,
  Parquet), arrays or ArviZ InferenceData.
"""

from ._check import PosteriorCheck, TarpResult, from_posterior, tarp_coverage
from ._inputs import read_posterior
from ._sbc import GaussianLinearSBC, SBCDraws, gaussian_linear_sbc, sbc, sbc_draws

__all__ = ["GaussianLinearSBC", "PosteriorCheck", "SBCDraws", "TarpResult", "from_posterior", "gaussian_linear_sbc",
           "read_posterior", "sbc", "sbc_draws", "tarp_coverage"]
