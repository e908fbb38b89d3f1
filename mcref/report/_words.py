"""Words for readers: each row of a verdict table is named by the property it tested, in the
vocabulary of the consistency/adaptivity primer (docs/methods.md, "Words of the reports").

A row's test answers one question, and its word says which:

==============  =========================================================  ==============================
property        question (docs/methods.md)                                  words
==============  =========================================================  ==============================
calibration     is the set's overall scale of u right? (E[Z²] = 1)          calibrated / miscalibrated
consistency     is u's pattern along u right, up to the set's scale?        consistent / inconsistent
adaptivity      is u's pattern along an input feature x right, up to scale? adaptive / not adaptive
==============  =========================================================  ==============================

``unreliable`` (the shape screen) and ``not testable`` (with its reason) keep their names.
``valid`` / ``invalid`` stay for the joint verdict, which answers all three at once, and for the
published rule's column. The glossary gives each name of a test or a method that a report prints
one plain sentence and the methods section it comes from.
"""

from __future__ import annotations

__all__ = ["SCALE_FREE_TESTS", "PROPERTIES", "GLOSSARY", "row_property", "finding", "finding_class", "glossary_link",
           "headline_parts", "findings_by_property"]

#: property -> (word when the test passes, word when it rejects, the question in one sentence)
PROPERTIES: dict[str, tuple[str, str, str]] = {
    "calibration": ("calibrated", "miscalibrated",
                    "the set's overall scale of u is right: <Z^2> = 1, <E^2> = <u^2> (ZMS, RCE)"),
    "consistency": ("consistent", "inconsistent",
                    "u's pattern along u is right up to the set's overall scale: Z independent of u "
                    "(CC, ENCE, ZMSE over bins of u; a scale error alone is the calibration row's to find)"),
    "adaptivity": ("adaptive", "not adaptive",
                   "u's pattern along an input feature x is right up to the set's overall scale: Z "
                   "independent of x (ENCE|x, ZMSE|x over bins of x)"),
}

#: words that are no property's answer: they keep their names whatever the row tested
KEPT = ("not testable", "unreliable")

#: term -> (one plain sentence, the title of its docs/methods.md section)
GLOSSARY: dict[str, tuple[str, str]] = {
    "joint verdict": ("one test of every row at once, of stated size alpha: valid when none of the properties "
                      "is shown wrong", "Joint verdict"),
    "calibrated": (PROPERTIES["calibration"][2], "Words of the reports"),
    "consistent": (PROPERTIES["consistency"][2], "Words of the reports"),
    "adaptive": (PROPERTIES["adaptivity"][2], "Words of the reports"),
    "unreliable": ("the shape screen says the bootstrap interval of this statistic cannot be trusted on these "
                   "data (too skewed a variable)", "Shape screen"),
    "not testable": ("no test can decide this row on these data; the reason is printed beside it", "Verdicts"),
    "permutation test": ("the data's Z shuffled across rows, u and x kept: the statistic's values under "
                         "'Z independent of (u, x)', exact whatever the error law", "Verdicts"),
    "studentized bootstrap-t": ("resamples the rows and compares (<Z^2> - 1) with its own bootstrap standard "
                                "error, the scale test of ZMS and RCE", "Scale test"),
    "t(fit nu)": ("a second scale reference: errors drawn from a Student t whose degrees of freedom nu are "
                  "fitted to the data's Z (nu = 1e+03 means the Z look normal)", "Scale test"),
    "zeta_Sim": ("the published score: distance of the bootstrap interval from the simulated reference, in "
                 "units of the interval; |zeta| <= 1 means valid under the published rule", "ζ-scores"),
    "Sidak combination": ("two p-values combined into one of the same size: 1 - (1 - min p)^2",
                          "Joint verdict"),
    "BCa": ("the bias-corrected and accelerated bootstrap interval of the estimate", "Bootstrap"),
}


#: tests whose reference does not depend on the set's scale (a row they pass is consistent or
#: adaptive "up to scale"): the permutation test, the standardized empirical D, a bootstrap-t
SCALE_FREE_TESTS = frozenset({"permutation", "empirical", "bootstrap-t"})


def row_property(name: str, kind: str) -> str:
    """The property a row tested: ``"adaptivity"`` for a row over bins of a feature
    (``"ENCE|x"``), ``"consistency"`` for a statistic over bins of u or of ranks
    (``kind`` ``"binned"`` or ``"rank"``: CC, ENCE, ZMSE, UCE), else ``"calibration"``."""
    if "|" in name:
        return "adaptivity"
    return "consistency" if kind in ("binned", "rank") else "calibration"


def finding(prop: str, verdict: str) -> str:
    """The word of a row: ``verdict`` (``valid``/``invalid``) in the words of ``prop``;
    ``not testable`` and ``unreliable`` unchanged."""
    if verdict in KEPT or prop not in PROPERTIES:
        return verdict
    good, bad, _ = PROPERTIES[prop]
    return good if verdict == "valid" else bad if verdict == "invalid" else verdict


def finding_class(word: str) -> str:
    """``"pass"``, ``"fail"`` or the kept word (for colours): the same for every property."""
    if word in KEPT:
        return word
    for good, bad, _ in PROPERTIES.values():
        if word == good:
            return "pass"
        if word == bad:
            return "fail"
    return {"valid": "pass", "invalid": "fail"}.get(word, word)


def glossary_link(term: str) -> str:
    """Where ``term`` is explained: ``docs/methods.md, "<section>"``."""
    return f'docs/methods.md, "{GLOSSARY[term][1]}"'


def headline_parts(rows) -> list[str]:
    """What the rows found, property by property, for the line under the joint verdict.

    ``rows``: (name, property, word) per row. Each property present gives one part: its
    failing word with the rows that failed, else its passing word with the rows; rows not
    testable or unreliable are named apart. A consistency or adaptivity pass beside a
    calibration failure reads "consistent up to scale": those rows test the pattern of u,
    not its size."""
    return [part for parts in findings_by_property(rows).values() for part in parts]


def findings_by_property(rows) -> dict[str, list[str]]:
    """:func:`headline_parts` by property: {property: its parts}, the properties in the order
    of :data:`PROPERTIES`, only those that some row tested (the HTML reports' summary columns).

    ``rows``: (name, property, word) or (name, property, word, test), ``test`` the test that
    decided the row. "up to scale" is said only of rows decided by a scale-free test
    (:data:`SCALE_FREE_TESTS`: the permutation test, the standardized empirical D, a
    bootstrap-t); a row decided against a simulated calibrated reference (``rule="mc"``'s
    "every D", ``rule="paper"``'s ζ_Sim) tested the size of u per bin as well, so its
    "consistent" needs no qualifier."""
    out: dict[str, list[str]] = {}
    rows = [(*r, None) if len(r) == 3 else tuple(r) for r in rows]
    scale_off = any(p == "calibration" and w == PROPERTIES["calibration"][1] for _, p, w, _ in rows)
    for prop, (good, bad, _) in PROPERTIES.items():
        mine = [(n, w, t) for n, p, w, t in rows if p == prop]
        if not mine:
            continue
        parts = out[prop] = []
        failed = [n for n, w, _ in mine if w == bad]
        passed = [(n, t) for n, w, t in mine if w == good]
        if failed:
            parts.append(f"{bad} ({', '.join(failed)})")
        elif passed:
            free = [n for n, t in passed if t is None or t in SCALE_FREE_TESTS]
            fixed = [n for n, t in passed if not (t is None or t in SCALE_FREE_TESTS)]
            if free:
                up_to = " up to scale" if scale_off and prop != "calibration" else ""
                parts.append(f"{good}{up_to} ({', '.join(free)})")
            if fixed:
                parts.append(f"{good} ({', '.join(fixed)})")
        for kept in KEPT:
            named = [n for n, w, _ in mine if w == kept]
            if named:
                parts.append(f"{kept} ({', '.join(named)})")
    return out
