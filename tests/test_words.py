"""Words for readers (docs/methods.md, "Words of the reports"): each row says the property it
tested (calibrated, consistent up to scale, adaptive), the joint verdict comes first, and the
text, JSON and CSV views carry the same words."""

from __future__ import annotations

import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import mcref
from mcref.report._words import GLOSSARY, PROPERTIES, finding, finding_class, headline_parts, row_property

pytestmark = pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")


def test_row_property_by_statistic_kind_and_feature():
    assert row_property("ZMS", "mean") == "calibration"
    assert row_property("CC", "rank") == "consistency"
    assert row_property("ENCE", "binned") == "consistency"
    assert row_property("ENCE|x", "binned") == "adaptivity"
    assert row_property("ZMSE|grp", "binned") == "adaptivity"


@pytest.mark.parametrize("prop", list(PROPERTIES))
def test_finding_words_and_kept_words(prop):
    good, bad, _ = PROPERTIES[prop]
    assert finding(prop, "valid") == good and finding(prop, "invalid") == bad
    assert finding(prop, "not testable") == "not testable" and finding(prop, "unreliable") == "unreliable"
    assert finding_class(good) == "pass" and finding_class(bad) == "fail"
    assert good != bad and "valid" not in (good, bad)


def test_headline_says_up_to_scale_only_beside_a_scale_failure():
    rows = [("ZMS", "calibration", "miscalibrated"), ("ENCE", "consistency", "consistent"),
            ("ENCE|x", "adaptivity", "adaptive")]
    assert headline_parts(rows) == ["miscalibrated (ZMS)", "consistent up to scale (ENCE)",
                                    "adaptive up to scale (ENCE|x)"]
    rows[0] = ("ZMS", "calibration", "calibrated")
    assert headline_parts(rows) == ["calibrated (ZMS)", "consistent (ENCE)", "adaptive (ENCE|x)"]
    rows[1] = ("ENCE", "consistency", "inconsistent")
    rows.append(("CC", "consistency", "not testable"))
    assert headline_parts(rows) == ["calibrated (ZMS)", "inconsistent (ENCE)", "not testable (CC)", "adaptive (ENCE|x)"]


def test_up_to_scale_only_for_rows_decided_by_a_scale_free_test():
    """A row decided against a simulated calibrated reference ("every D", zeta_Sim) tested the
    size of u per bin too: its pass is never qualified "up to scale"."""
    rows = [("ZMS", "calibration", "miscalibrated", "zeta_BS"), ("ENCE", "consistency", "consistent", "every D"),
            ("ZMSE", "consistency", "consistent", "permutation"), ("CC", "consistency", "consistent", "zeta_Sim")]
    assert headline_parts(rows) == ["miscalibrated (ZMS)", "consistent up to scale (ZMSE)", "consistent (ENCE, CC)"]
    rows[2] = ("ZMSE", "consistency", "consistent", "empirical")
    assert "consistent up to scale (ZMSE)" in headline_parts(rows)


def test_half_u_under_the_paper_rule_is_not_called_consistent_up_to_scale():
    """rule="paper" decides ENCE and ZMSE by zeta_Sim against calibrated references: u half of
    what it should be is found by them too, and no row reads "up to scale"."""
    E, u, _ = _half_u_set(m=1000)
    tab = mcref.validate(E, u, rule="paper", stats=["ZMS", "ENCE", "ZMSE"], dists=("normal",), n_boot=200,
                         n_mc=200, seed=3)
    assert tab["ENCE"].test == "zeta_Sim" and tab["ZMSE"].test == "zeta_Sim"
    assert "up to scale" not in tab.headline()
    assert tab["ZMSE"].finding == "inconsistent"  # ZMSE ≈ 4 against a reference near 1

def test_every_glossary_term_has_a_sentence_and_an_existing_methods_section():
    from pathlib import Path

    methods = (Path(__file__).resolve().parents[1] / "docs" / "methods.md").read_text(encoding="utf-8")
    heads = {line.lstrip("#").strip() for line in methods.splitlines() if line.startswith("#")}
    for term, (sentence, section) in GLOSSARY.items():
        assert len(sentence.split()) >= 6, term
        assert section in heads, (term, section)


def _half_u_set(seed=5, m=1500):
    """u half of what it should be: the errors' sd is 2u at every u (a pure scale error)."""
    rng = np.random.default_rng(seed)
    u = rng.lognormal(-1.0, 0.5, m)
    return 2.0 * u * rng.normal(size=m), u, rng.normal(size=m)


def test_half_u_reads_miscalibrated_and_consistent_up_to_scale():
    """The issue's misreading: u half of what it should be printed "ENCE valid" beside "ZMS
    invalid". Now the rows say what they tested, and the headline comes first."""
    E, u, x = _half_u_set()
    tab = mcref.validate(E, u, x={"x": x}, n_boot=300, n_mc=300, seed=2)
    assert tab["ZMS"].finding == "miscalibrated" and tab["ZMS"].tested == "calibration"
    assert tab["ENCE"].tested == "consistency" and tab["ENCE|x"].tested == "adaptivity"
    lines = str(tab).splitlines()
    assert lines[1].startswith("joint verdict: invalid")  # the answer first, after the title
    head = tab.headline()
    assert "miscalibrated (ZMS" in head
    # Z is independent of u and x here (the pattern is right, the size is not): the pattern rows
    # read "up to scale", never "valid"
    assert "consistent up to scale" in head and "adaptive up to scale" in head
    table_rows = [l.split() for l in lines if l.split() and l.split()[0] in ("ZMS", "ENCE", "ENCE|x")]
    for cells in table_rows:
        assert cells[-2] in {w for p in PROPERTIES.values() for w in p[:2]} | {"not", "unreliable", "testable"}
        assert cells[-2] not in ("valid", "invalid")  # the row column carries words, not verdicts


def test_json_and_csv_carry_the_words():
    E, u, x = _half_u_set(seed=6, m=600)
    tab = mcref.validate(E, u, x={"x": x}, stats=["ZMS", "ENCE"], n_boot=200, n_mc=200, seed=3)
    doc = json.loads(tab.to_json())
    for r in doc["rows"]:
        row = tab[r["stat"]]
        assert r["tested"] == row.tested and r["finding"] == finding(row.tested, r["verdict"])
    frame = pd.read_csv(io.StringIO(tab.to_csv()))
    assert list(frame["finding"]) == [tab[s].finding for s in frame["stat"]]
    assert set(frame["tested"]) == {"calibration", "consistency", "adaptivity"}


def test_benchmark_prints_each_datasets_joint_verdict_first():
    E, u, _ = _half_u_set(seed=7, m=600)
    rng = np.random.default_rng(8)
    u2 = rng.lognormal(-1, 0.4, 600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mcref.benchmark([("half_u", E, u), ("ok", u2 * rng.normal(size=600), u2)], stats=["ZMS", "ENCE"],
                              n_boot=200, n_mc=200, seed=4, n_jobs=1, progress=False)
    lines = str(res).splitlines()
    assert lines[1].startswith("half_u: joint verdict: invalid") and "miscalibrated (ZMS)" in lines[1]
    assert lines[2].startswith("ok: joint verdict: ")
    t = res.table
    assert set(t["joint_verdict"]) <= {"valid", "invalid"}
    assert (t.loc[t["dataset"] == "half_u", "joint_verdict"] == "invalid").all()
    assert list(t["finding"]) == [finding(p, v) for p, v in zip(t["tested"], t["verdict"])]
