"""Which statistic the permutation test of the binned rows should use (issue 24): ENCE, ZMSE,
UCE over bins of u and of x, on the primer's cases A–E (M = 5000, 20 bins, 199 shuffles of Z
across rows), tested three ways:

* ``raw``: the statistic against u, as published;
* ``ctr``: against u·√ZMS, the set's own scale (ZMS is the same for every shuffle, so the
  test stays exact) — validate's choice;
* ``own``: each bin against the set's own average of the same quantity (MSE/MV for ENCE and
  UCE, ZMS for ZMSE), recomputed per shuffle;

each one-sided (``greater``: large is bad) and two-sided. Prints the fraction of sets with
p ≤ 0.05 per case. Plain NumPy (independent of the kernels). Run:
``python benchmarks/study_centring.py [n_sets]`` (default 20).
"""
import numpy as np, mcref.synthetic as S, sys
def stats(z, u, lab, nb, c):
    # z: (P, M) ; u (M,), lab (M,) bin labels ; c scale factor on u
    uu = u * (1.0 if c == "own" else c)
    zz = z / (1.0 if c == "own" else c)
    E2 = (z * u) ** 2
    n = np.bincount(lab, minlength=nb).astype(float)
    su2 = np.bincount(lab, uu * uu, minlength=nb)
    out = {}
    se2 = np.stack([np.bincount(lab, w, minlength=nb) for w in E2])
    sz2 = np.stack([np.bincount(lab, w, minlength=nb) for w in zz ** 2])
    mv, mse = su2 / n, se2 / n
    if c == "own":
        s2 = se2.sum(1, keepdims=True) / su2.sum()
        mv = mv * s2
        sz2 = sz2 / (sz2.sum(1, keepdims=True) / n.sum())
    out["ENCE"] = np.mean(np.abs(np.sqrt(mv) - np.sqrt(mse)) / np.sqrt(mv), axis=1)
    out["ZMSE"] = np.mean(np.abs(np.log(sz2 / n)), axis=1)
    out["UCE"] = np.sum(n / n.sum() * np.abs(mv - mse), axis=1)
    return out
def labels(v, nb):
    o = np.argsort(v, kind="stable"); lab = np.empty(v.size, int)
    lab[o] = np.arange(v.size) * nb // v.size
    return lab
P, nb = 199, 20
res = {}
for case in "ABCDE":
    for seed in range(int(sys.argv[1]) if len(sys.argv) > 1 else 20):
        ds = S.case(case, M=5000, seed=seed)
        z = ds.E / ds.u
        rng = np.random.default_rng(seed + 100)
        zp = np.stack([z] + [rng.permutation(z) for _ in range(P)])
        zms = np.mean(z * z)
        for cond, v in (("u", ds.u), ("x", ds.x)):
            lab = labels(v, nb)
            for variant, c in (("raw", 1.0), ("ctr", np.sqrt(zms)), ("own", "own")):
                st = stats(zp, ds.u, lab, nb, c)
                for k, s in st.items():
                    pg = (np.sum(s[1:] >= s[0]) + 1) / (P + 1)
                    pl = (np.sum(s[1:] <= s[0]) + 1) / (P + 1)
                    for alt, p in (("greater", pg), ("two", min(1, 2 * min(pg, pl)))):
                        res.setdefault((case, cond, k, variant, alt), []).append(p <= 0.05)
for cond in "ux":
    print("cond", cond)
    for k in ("ENCE", "ZMSE", "UCE"):
        for variant in ("raw", "ctr", "own"):
            for alt in ("greater", "two"):
                print(f"  {k:5s} {variant} {alt:8s}", " ".join(f"{c}:{np.mean(res[(c,cond,k,variant,alt)]):.2f}" for c in "ABCDE"))
