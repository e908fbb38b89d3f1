"""Re-checks of the scale test's cells outside 5 % ± 2 % in ``study_scale.py`` (issue 27), on
more sets and fresh seeds (docs/methods.md, "Scale test", "Where the size is not held").

* ZMS row (``_scale_test.scale_test`` with the tail screen ``scale_unreliable``, B = 500) on
  unit-variance t(ν) z-scores: t(6) at M = 10 000 and t(3) at M = 500, 600 sets each; for the
  t(3) cell, what the rejected sets look like (their ZMS, fitted ν̂, tail ratio);
* RCE (``rce_test``, B = 999) with skewed errors (centred gamma(2)), u² ~ IG(4, 4), M = 500 and
  2000, 400 sets each: the equal-tailed bootstrap-t p (mcref's) beside the symmetric one,
  P(|T*| ≥ |T|).

Run: ``python benchmarks/study_scale_recheck.py`` (about 5 minutes on 2 cores).
"""

from __future__ import annotations

import numpy as np

from mcref.verdict._scale_test import rce_test, scale_test, scale_unreliable, tail_ratio
from mcref.shape import skewness_gm


def zms_cell(M: int, nu: float, n_sets: int) -> None:
    rej, unrel, seen = 0, 0, []
    for s in np.random.SeedSequence(11).spawn(n_sets):
        z = np.random.default_rng(s).standard_t(nu, M) * np.sqrt((nu - 2) / nu)
        bad = scale_unreliable(z, skewness_gm(z * z))
        try:
            r = scale_test(z, ["ZMS"], n_boot=500, seed=1)
        except ValueError:  # fitted nu <= 2
            unrel += 1
            continue
        unrel += bad
        if not bad and r.p["ZMS"] <= 0.05:
            rej += 1
            seen.append((np.mean(z * z), r.nu, tail_ratio(z)))
    print(f"ZMS, t({nu:g}), M = {M}, {n_sets} sets: invalid {rej / n_sets:.3f}, unreliable {unrel / n_sets:.3f}")
    if seen:
        a = np.array(seen)
        print(f"   rejected sets: ZMS {a[:, 0].min():.2f}-{a[:, 0].max():.2f}, fitted nu {a[:, 1].min():.1f}-"
              f"{a[:, 1].max():.1f}, tail ratio {a[:, 2].min():.2f}-{a[:, 2].max():.2f}")


def rce_cell(M: int, n_sets: int) -> None:
    eq = sym = 0
    for s in np.random.SeedSequence(7).spawn(n_sets):
        rng = np.random.default_rng(s)
        u = np.sqrt(1 / rng.gamma(4, 0.25, M))
        eps = (rng.gamma(2.0, 1.0, M) - 2.0) / np.sqrt(2.0)
        r = rce_test(u * eps, u, n_boot=999, seed=1)
        ts = r.tstar[0]
        eq += r.p["RCE"] <= 0.05
        sym += (1 + np.sum(np.abs(ts) >= abs(r.t["RCE"]))) / (ts.size + 1) <= 0.05
    print(f"RCE, skewed, M = {M}, {n_sets} sets: equal-tailed {eq / n_sets:.3f}, symmetric {sym / n_sets:.3f}")


if __name__ == "__main__":
    zms_cell(10_000, 6.0, 600)
    zms_cell(500, 3.0, 600)
    rce_cell(2000, 400)
    rce_cell(500, 400)
