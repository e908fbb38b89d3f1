"""Write the inputs of ``errviewlib_parity.R`` to a folder (its only argument).

``qm9.csv``: E, u, x of the packaged set QM9_E (mcref/data/QM9_E.npz), and ``synth.csv``: a
synthetic set of 1200 points drawn from ``SYNTH_SEED`` by :func:`synth` (``tests/test_parity.py``
draws the same set). Numbers are written with 17 significant digits, so R reads the same
float64 values.

    python tests/data/errviewlib_parity_inputs.py /tmp/evl
"""

import sys
from pathlib import Path

import numpy as np

SYNTH_SEED = 20261123


def synth():
    """E, u, x of the synthetic set: x ~ U(0, 1), u = 0.2 + x·χ²(4)/4, E = u·(0.8 + 0.5 x)·N(0, 1)."""
    rng = np.random.default_rng(SYNTH_SEED)
    m = 1200
    x = rng.uniform(0.0, 1.0, m)
    u = 0.2 + x * rng.chisquare(4, m) / 4
    E = u * (0.8 + 0.5 * x) * rng.normal(size=m)
    return E, u, x


def main(folder: str) -> None:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    d = np.load(Path(__file__).resolve().parents[2] / "mcref" / "data" / "QM9_E.npz")
    for name, cols in (("qm9", (d["E"], d["u"], d["x"])), ("synth", synth())):
        np.savetxt(out / f"{name}.csv", np.column_stack(cols), fmt="%.17g", delimiter=",", header="E,u,x",
                   comments="")


if __name__ == "__main__":
    main(sys.argv[1])
