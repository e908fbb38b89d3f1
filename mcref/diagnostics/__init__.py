"""Conditional-calibration diagnostics: consistency (along u) and adaptivity (along an input
feature x) (docs/methods.md, "Diagnostics").

The toolbox of P. Pernot's primer ("Validation of uncertainty quantification metrics: a
primer based on the consistency and adaptivity concepts", arXiv:2303.07170; code
ppernot/2023_Primer and ErrViewLib):

======================================  =========================================================  =======================
function                                per bin (bins of x if given, else of u)                    interval
======================================  =========================================================  =======================
:func:`lzisd`                           1/sd(Z), target 1                                          delta method / BCa
:func:`lzms`                            ⟨Z²⟩, target 1                                             Student / BCa / bspiv
:func:`lzv`                             var(Z), target 1                                           delta method / BCa / χ²
:func:`lzm`                             ⟨Z⟩, target 0                                              Student
:func:`lrce`                            RCE, target 0                                              BCa
:func:`lcp`                             coverage P(abs(E) ≤ U_p), target p                         Wilson (and 4 others)
:func:`lrr`                             interval width / empirical p range of E, target 1          BCa
:func:`reliability_diagram`             RMSE_b vs RMV_b, target the identity                       bootstrap
:func:`calibration_curve`               P(E ≤ u·q_D(p)) vs p (whole set), miscal. area             Wilson-cc
:func:`conditional_calibration_curves`  the same per bin of u or x                                 Wilson-cc (M/B points)
:func:`confidence_curve`                RMSE, MAE, RMSD or Q95 after removing the largest u; DFPR  simulated
:func:`adversarial_group_calibration`   worst abs(ln⟨Z²⟩) of random groups vs group size           control set
:func:`group_zms_validity`              valid ⟨Z²⟩ intervals of random groups vs group size        Wilson-cc
:func:`running_quantiles`               sliding-window HD quantiles of y along x                   —
======================================  =========================================================  =======================

Every binned diagnostic returns a :class:`BinnedDiagnostic` with per-bin arrays
``centers``, ``value``, ``low``, ``high``, ``counts`` and ``to_frame()``. ``binning`` is
``"equal"`` (equal counts, the default) or ``"adaptive"`` (:func:`mcref.binning.adaptive_bins`);
the default number of bins is max(min(⌊M/150⌋, 15), 2), as ErrViewLib's.
:meth:`BinnedDiagnostic.scores` gives the summary scores ZVE, ZVE_Up, ZVM and f_v,
:meth:`BinnedDiagnostic.valid_test` the binomial test of f_v; :func:`calib_scores` the ZMSE,
ENCE and UCE of bins of u and of x; :func:`lorenz_curve` and :func:`gini` the concentration of
the uncertainties. docs/errviewlib.md maps ErrViewLib's functions to these.

The package has one room per family, and this module re-exports their public names (import
them from ``mcref.diagnostics``): ``_binned`` (bins of u or x and the per-bin result),
``_local`` (the local statistics along u or x), ``_coverage`` (binomial intervals, quantile
factors, the calibration curve, the PIT), ``_curves`` (the confidence curve, running quantiles,
Lorenz curve and Gini coefficient), ``_scores`` (the whole-set ZMSE, ENCE, UCE) and ``_groups``
(group calibration).
"""

from __future__ import annotations

from ._coverage import (wilson_interval, quantile_factor, BINOMIAL_INTERVALS, binomial_interval, CalibrationCurve,
                        calibration_curve, PIT, pit)
from ._binned import default_n_bins, BinnedDiagnostic, ValidBinsTest, LocalScores
from ._local import (lzisd, lzms, lzms_band, lzv, lzm, lrce, lcp, lrr, reliability_diagram, ConditionalCalibration,
                     conditional_calibration_curves)
from ._curves import (ConfidenceCurve, confidence_curve, CCConsistency, cc_consistency, RunningQuantiles,
                      running_quantiles, lorenz_curve, gini)
from ._scores import CalibScores, calib_scores
from ._groups import group_sizes, GroupCalibration, adversarial_group_calibration, group_zms_validity

__all__ = ["BinnedDiagnostic", "CalibrationCurve", "ConfidenceCurve", "RunningQuantiles", "lzisd", "lzms", "lzms_band",
           "lcp", "reliability_diagram", "calibration_curve", "confidence_curve", "running_quantiles",
           "default_n_bins", "wilson_interval", "quantile_factor",
           # ErrViewLib parity (docs/errviewlib.md)
           "lzv", "lzm", "lrce", "calib_scores", "binomial_interval", "BINOMIAL_INTERVALS", "LocalScores",
           "ValidBinsTest", "CalibScores", "lorenz_curve", "gini", "pit", "PIT", "cc_consistency",
           "CCConsistency", "ConditionalCalibration", "conditional_calibration_curves", "lrr",
           "GroupCalibration", "adversarial_group_calibration", "group_zms_validity", "group_sizes"]
