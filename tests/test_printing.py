"""How results are printed: the slips of issue 40, each with what a reader should read instead."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import numpy as np

from mcref.core._dependence import units_for
from mcref.stats import prepare


def _units(E, u, **labels):
    prep = prepare(E, u, 4, min_count=1)
    return prep, units_for(prep.order, z2=prep.z2, us=prep.u, **labels)


def test_groups_of_one_size_say_that_size():
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2.0, 600)
    E = u * rng.normal(size=600)
    _, un = _units(E, u, groups=np.repeat(np.arange(60), 10))
    line = un.describe()
    assert line.startswith("groups: 60 groups of 10 rows; ") and "10-10" not in line and "median" not in line
    sizes = np.array([9, 11] * 30)  # 60 groups of 9 and 11 rows: 600 rows
    _, un = _units(E, u, groups=np.repeat(np.arange(60), sizes))
    assert un.describe().startswith("groups: 60 groups of 9-11 rows (median 10); ")


def test_scale_test_names_the_block_bootstrap_on_an_order_run():
    from mcref.verdict._scale_test import scale_tests

    rng = np.random.default_rng(1)
    u = rng.uniform(0.5, 2.0, 400)
    E = u * rng.normal(size=400)
    prep, blocks = _units(E, u, order=np.arange(400), block_length=10)
    st = scale_tests(["ZMS"], E, u, n_boot=99, seed=0, prep=prep, units=blocks)
    assert st.label.startswith("block bootstrap-t and t(fit") and "cluster" not in st.label
    prep, groups = _units(E, u, groups=np.repeat(np.arange(40), 10))
    assert scale_tests(["ZMS"], E, u, n_boot=99, seed=0, prep=prep, units=groups).label.startswith(
        "cluster bootstrap-t and t(fit")
    assert scale_tests(["ZMS"], E, u, n_boot=99, seed=0).label.startswith("bootstrap-t and t(fit")


def test_equivalence_margins_are_printed_to_four_digits():
    from mcref.verdict._table import _equivalence_note

    delta = 0.05
    zmse = 2 * math.log1p(delta)  # 0.09758032...: the ZMSE margin of a 5 % error of u's scale
    rows = [SimpleNamespace(name="ZMS", margin=((1 - delta) ** 2, (1 + delta) ** 2), equivalence="within"),
            SimpleNamespace(name="ZMSE", margin=(-math.inf, zmse), equivalence="not shown")]
    tab = SimpleNamespace(rows=rows, alpha=0.05, tolerance={"ZMS": delta, "ZMSE": delta}, calibrated_within=False)
    note = _equivalence_note(tab)
    assert "ZMS in [0.9025, 1.103]; ZMSE <= 0.09758:" in note
    assert "0.0975803" not in note and "1.1025" not in note


def test_samples_csv_has_no_nan_interval_score():
    """Issue 40: from_samples' coverage rows (rank intervals: no end points to score) write an empty
    interval_score cell, as the JSON writes null, never "nan"."""
    import csv
    import io
    import json
    import warnings

    import mcref

    rng = np.random.default_rng(2)
    mu, sd = rng.normal(size=300), rng.uniform(0.5, 2.0, 300)
    y = mu + sd * rng.normal(size=300)
    draws = mu[:, None] + sd[:, None] * rng.normal(size=(300, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.FewReplicatesWarning)
        check = mcref.from_samples(y, draws, stats=["ZMS"], n_boot=200, n_mc=200, seed=0)
    text = check.to_csv()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(check.coverage) and not re.search(r"\bnan\b", text, re.I)
    assert all(r["interval_score"] == "" for r in rows)
    assert all(r["interval_score"] is None for r in json.loads(check.to_json())["coverage"])
