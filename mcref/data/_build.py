"""Build the packaged benchmark sets ``mcref/data/<name>.npz`` from the original CSV files.

This script is kept for provenance; it is not part of the installed package and was run
once to produce the ``.npz`` files next to it::

    python mcref/data/_build.py /path/to/pernot_sets [--out mcref/data]

``/path/to/pernot_sets`` must hold the CSV files of GitHub repository ``ppernot/2024_SimRef``
at commit ``f73a3b0cba9af9f7f14e85a3eb162376428a5757`` (folders ``Data/PAL2022``,
``Data/BUS2022`` and ``Data/RAS2023`` flattened into one directory, file names unchanged).
The derivations follow the R script ``R/getData.R`` of that repository:

* PAL2022 ``<set>_Test_cal.csv`` (header ``"E","X","uE"``): ``E = E``, ``u = uE``, ``x = X``.
* BUS2022 ``qm9_qm9_E_calibrated_isotonic_test.csv``: ``E = E_ - prediction``,
  ``u = sqrt(uncertainty_total)`` (the column is a variance), ``x = prediction``.
* RAS2023 ``logP_*_test.csv`` (columns ``,smiles,logP,uq,y_pred,error``):
  ``E = logP - y_pred`` (the file's own ``error`` column has the opposite sign), ``u = uq``,
  ``x = y_pred``.

Every set then keeps only the rows with ``u > 1e-6 * sd(E)`` (``sd`` with ``ddof=1``, as R's
``sd``); this removes rows from ``Perovskite_RF`` (2) and ``Perovskite_GPR_Bayesian`` (18)
only. The file row order is kept everywhere (the QM9 set has heavy ties in ``u`` and
binned statistics depend on the order of tied rows).

Numbers are parsed with Python's ``float`` (correctly rounded, identical to NumPy's
parser) and stored as float64, so the stored values are bit-identical to the decimal
values of the files; derived columns are computed in float64 with one operation each.
Each ``.npz`` holds the float64 arrays ``E``, ``u``, ``x`` and a 0-d string ``source``.
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = "ppernot/2024_SimRef"
COMMIT = "f73a3b0cba9af9f7f14e85a3eb162376428a5757"
UE_FILTER = 1e-6  # keep rows with u > UE_FILTER * sd(E, ddof=1) (getData.R)

Columns = dict[str, np.ndarray]


def read_columns(path: Path, wanted: tuple[str, ...]) -> Columns:
    """Read the columns ``wanted`` of a CSV file with a header as float64 arrays."""
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], [r for r in rows[1:] if r]
    out: Columns = {}
    for col in wanted:
        j = header.index(col)
        out[col] = np.array([float(r[j]) for r in body], dtype=np.float64)
    return out


def _pal(c: Columns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return c["E"], c["uE"], c["X"]


def _qm9(c: Columns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return c["E_"] - c["prediction"], np.sqrt(c["uncertainty_total"]), c["prediction"]


def _logp(c: Columns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return c["logP"] - c["y_pred"], c["uq"], c["y_pred"]


_PAL_COLS = ("E", "X", "uE")
_PAL_TXT = "E = E, u = uE, x = X (input feature)"
_QM9_COLS = ("E_", "prediction", "uncertainty_total")
_QM9_TXT = "E = E_ - prediction, u = sqrt(uncertainty_total) (a variance), x = prediction"
_LOGP_COLS = ("logP", "uq", "y_pred")
_LOGP_TXT = (
    "E = logP - y_pred (opposite sign of the file's `error` column), u = uq, x = y_pred"
)

_PAL = ("Data/PAL2022", "Palmer et al. 2022", _PAL_COLS, _pal, _PAL_TXT)
_QM9 = ("Data/BUS2022", "Busk et al. 2022", _QM9_COLS, _qm9, _QM9_TXT)
_LOGP = ("Data/RAS2023", "Rasmussen et al. 2023", _LOGP_COLS, _logp, _LOGP_TXT)

# name (papers' order, set #1..#9) -> (file, folder in the repository, data reference,
# columns read, derivation, derivation text)
SETS: dict[
    str,
    tuple[str, str, str, tuple[str, ...], Callable[[Columns], tuple[np.ndarray, ...]], str],
] = {
    "Diffusion_RF": ("Diffusion_RF_Test_cal.csv", *_PAL),
    "Perovskite_RF": ("Perovskite_RF_Test_cal.csv", *_PAL),
    "Diffusion_LR": ("Diffusion_LR_Test_cal.csv", *_PAL),
    "Perovskite_LR": ("Perovskite_LR_Test_cal.csv", *_PAL),
    "Diffusion_GPR_Bayesian": ("Diffusion_GPR_Bayesian_Test_cal.csv", *_PAL),
    "Perovskite_GPR_Bayesian": ("Perovskite_GPR_Bayesian_Test_cal.csv", *_PAL),
    "QM9_E": ("qm9_qm9_E_calibrated_isotonic_test.csv", *_QM9),
    "logP_10k_a_LS-GCN": ("logP_10k_a_LS-GCN_test.csv", *_LOGP),
    "logP_150k_LS-GCN": ("logP_150k_LS-GCN_test.csv", *_LOGP),
}


def build_one(name: str, src_dir: Path, out_dir: Path) -> tuple[int, int, Path]:
    """Derive one set and write ``out_dir/<name>.npz``; return (rows in file, M, path)."""
    fname, folder, ref, cols, derive, text = SETS[name]
    E, u, x = derive(read_columns(src_dir / fname, cols))
    keep = u > UE_FILTER * np.std(E, ddof=1)
    n_removed = int((~keep).sum())
    E, u, x = (np.ascontiguousarray(a[keep], dtype=np.float64) for a in (E, u, x))
    source = (
        f"{name}: GitHub {REPO} commit {COMMIT}, file {folder}/{fname} "
        f"(data of {ref}; license CeCILL v2.1). {text}. "
        f"Rows with u <= 1e-6*sd(E) removed: {n_removed}. File row order kept."
    )
    out = out_dir / f"{name}.npz"
    np.savez_compressed(out, E=E, u=u, x=x, source=np.array(source))
    return E.size + n_removed, E.size, out


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point: build every set and print a summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("src", type=Path, help="directory holding the original CSV files")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent,
        help="output directory (default: the directory of this script, mcref/data)",
    )
    args = parser.parse_args(argv)
    for name in SETS:
        n_file, m, out = build_one(name, args.src, args.out)
        print(f"{name:26s} rows={n_file:6d} M={m:6d} removed={n_file - m:3d} "
              f"{out.stat().st_size / 1024:7.1f} KiB")


if __name__ == "__main__":
    main()
