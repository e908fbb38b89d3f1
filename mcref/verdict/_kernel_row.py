"""The kernel calibration row of :func:`mcref.validate`: ``stats=[..., "SKCE"]`` (docs/methods.md,
"Kernel calibration error (SKCE)", "In validate").

(E, u) is read as the Gaussian prediction N(0, u²) of each error: the row tests the whole
predictive law (calibration in the strong sense), not only its second moment, by
:func:`mcref.skce_test` — the consistency test (errors redrawn as u·ε, ε ~ N(0, 1), exact Monte
Carlo p with the sequential stop) up to 20 000 rows, the asymptotic block test with B = ⌊√M⌋
beyond (the ``"auto"`` method). The row has its own child of validate's ``SeedSequence``, spawned
after every other child, so that asking for it changes no other row's bits. It is reported
beside the joint verdict, not in it (its size inside the combination is not measured), and it
is ``not testable`` with dependent rows (``groups=``/``order=``): the consistency test redraws
rows independently, so its size under dependent rows is unknown.
"""

from __future__ import annotations

import math
from typing import Sequence

from .._skce import skce_test
from ._table import KERNEL_ROWS, ValidationRow

__all__ = ["split_kernel_rows", "kernel_row", "KERNEL_NOTE", "DEPENDENT_REASON"]

#: the note under a table with the SKCE row
KERNEL_NOTE = ("SKCE: the kernel calibration error of the predictions N(0, u^2) (the whole law of E given u, not "
               "only its scale), tested by {how}; reported beside the joint verdict, not part of it (docs/methods.md, "
               "'Kernel calibration error (SKCE)')")
#: why the SKCE row is not testable with dependent rows
DEPENDENT_REASON = ("the SKCE test redraws every row independently, so under dependent rows (groups=, order=) its "
                    "size is not known; call mcref.skce_test on one row per group, or leave SKCE out")


def split_kernel_rows(stats: Sequence[str]) -> tuple[list[str], list[str]]:
    """``stats`` without the kernel rows (case-insensitive ``"SKCE"``), and the kernel rows asked for."""
    rest, kernel = [], []
    for s in stats:
        key = s.upper() if isinstance(s, str) else s
        if key in KERNEL_ROWS:
            if key not in kernel:
                kernel.append(key)
        else:
            rest.append(s)
    return rest, kernel


def _row(name: str, **kw) -> ValidationRow:
    nan = math.nan
    base = dict(name=name, estimate=nan, bias=nan, low=nan, high=nan, interval_method="none", reference=0.0,
                zeta_bs=None, sim={}, zeta_sim={}, zeta_sim2={}, sensitivity=[], d_sensitive=False, shape_flag=False,
                alternative="greater", verdict_paper="-")
    return ValidationRow(**{**base, **kw})


def kernel_row(E, u, seed_seq, *, alpha: float, dependent: bool) -> tuple[ValidationRow, str]:
    """The SKCE row of (E, u) read as N(0, u²) and its note: the consistency test (or the block test
    beyond 20 000 rows) on ``seed_seq``; ``not testable`` with dependent rows."""
    if dependent:
        return (_row("SKCE", verdict="not testable", test="none", reason=DEPENDENT_REASON),
                f"SKCE: not testable: {DEPENDENT_REASON}")
    res = skce_test(E, 0.0 * E, u, method="auto", seed=seed_seq, alpha=alpha)
    verdict = "invalid" if res.pvalue <= alpha else "valid"
    if res.method == "consistency":
        how = (f"its consistency test (errors redrawn as u*eps, eps ~ N(0, 1); {res.n_test} repeats, sequential "
               "stop at the 10th exceedance)")
        n_test = res.n_test
    else:
        how = f"its asymptotic block test (B = {res.block_size}, {res.n_test} blocks; M above 20000)"
        n_test = None  # an asymptotic p: no Monte Carlo floor
    return (_row("SKCE", estimate=res.estimate, verdict=verdict, test=res.method, p_test=res.pvalue, n_test=n_test),
            KERNEL_NOTE.format(how=how))
