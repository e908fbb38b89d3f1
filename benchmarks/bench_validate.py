"""Cost of ``mcref.validate(E, u)`` against M: seconds, peak memory and phases, beside the NumPy floor.

Each M runs in a fresh Python process (so that one M's peak memory is not another's), which

1. compiles: one ``validate`` of 2000 points with the same options (not timed);
2. reads its baseline resident memory (VmRSS, before E and u are made) and resets the
   high-water mark (``/proc/self/clear_refs``, Linux; else the peak includes the warm-up);
3. draws u ~ lognormal(0, 0.5), E = u·N(0, 1) (E and u: 16·M bytes);
4. times ``mcref.validate(E, u)`` with the defaults (ZMS, RCE, CC, ENCE, ZMSE; B = 5000 BCa;
   N_MC = ``default_n_mc(M)`` references under normal, t(6), the empirical and the
   permutation D; the conditional rule's scale tests; shape screen, tie spread, joint
   verdict), or with ``--n-boot``/``--n-mc``/``--dists`` for a quick run;
5. reads the peak resident memory of the process (VmHWM of /proc/self/status) after the call,
   E and u included;
6. splits the seconds into phases by wrapping, on the module object ``mcref.verdict._validate``, the
   functions that ``_validate_run`` calls: prepare (``prepare_for``), bootstrap
   (``bootstrap_prepared``), references (``simulate_prepared``), scale tests
   (``scale_tests``), tie spread (``tie_spread_prepared``), shape (``shape_screen_prepared``),
   joint (``_joint_of``) and the rest; each phase's own peak is read too (the high-water mark
   is reset when a phase starts and read when it ends);
7. times the baseline side by side, in the same process: one NumPy thread drawing
   ``standard_normal(M)`` (ns per element, "floor ns").

The floor ratios (the definitions of the earlier version of this script, kept):

* ``floor-eq s``: what drawing the references' N_MC·n_D·M normals would cost on all numba
  threads at the floor rate (n_D: the D the table reports, the rule's added D included);
* ``val/floor``: validate's ns per element·replicate·thread (seconds · threads /
  (M·(B + n_D·N_MC))) over the floor's ns per element: how many one-thread normal draws one
  element of one replicate costs. This ratio is what transfers to another machine.
* ``x floor-eq``: validate's seconds / floor-eq seconds.

``--cli`` (also with ``--m7``) adds the end-to-end row: a Parquet file of ``--cli-rows``
rows (default 10⁷; columns E, u) is written to a temporary folder and
``mcref validate FILE --seed 0`` (plus ``--boot``/``--mc``/``--dists`` when given) runs in a
subprocess, timed from the outside (the read, the imports and the compile included) with its
peak RSS (``/usr/bin/time -v`` when present, else psutil polling).

Run::

    python benchmarks/bench_validate.py --ms 1e4,1e5,1e6        # the defaults
    python benchmarks/bench_validate.py --m7                    # adds 1e7 and the CLI row
    python benchmarks/bench_validate.py --ms 1e7 --n-boot 200 --n-mc 100 --dists permutation
    python benchmarks/bench_validate.py --ms 1e7 --data-seed 1      # another data set
    python benchmarks/bench_validate.py --profile --ms 1e5,1e6 --n-boot 1000 --n-mc 500   # parallel profile
    python benchmarks/bench_validate.py --ms 1e5,1e6 --round 3 --n-boot 1000 --n-mc 500   # tied u

``--round D`` rounds u to D decimals, as files often hold it (QM9_E's u has 135 distinct values):
runs of tied u, so the bootstrap's tie splits and the tie spread run, which untied data skip.
Before 2026-11-28 the tie spread shuffled and re-sorted all M rows per order and the bootstrap
allocated its scratch per task; ``--round 3 --n-boot 1000 --n-mc 500``, 2 threads, the
version before (c23b9dd) and after, one run each::

         M  validate s   bootstrap s  ties s
     1e+05  2.95 → 1.22  0.366 → 0.233  1.63 → 0.0134
     1e+06  25.9 → 8.61  5.25 → 3.07    15.1 → 0.039

``--profile`` prints instead the **parallel profile** of each M (issue 41): for each phase of
``validate`` — the bootstrap's resampling kernel, the jackknife, the references (all D, and
the first round of 64 permutation repeats alone), the scale tests (all rounds, and the first) —

* ``tasks``: the independent tasks it handed to the threads (recorded by
  ``mcref.parallel.task_profile`` in one run on this machine's threads);
* ``largest``: the largest task's share of the phase's work;
* ``S(16)``, ``S(64)``: the speedup those tasks allow on T threads,
  S(T) = Σ_j W_j / Σ_j max_t W_{j,t} (``mcref.parallel.speedup_bound``): W_j the work of
  dispatch j (a ``map_chunks`` call, one range of ``batch_ranges``, one ``prange`` kernel
  call, run one after the other), W_{j,t} the work its fixed schedule gives thread t
  (round-robin for ``map_chunks``, contiguous blocks for ``prange``). For n equal tasks in one
  dispatch S(T) = n / ⌈n/T⌉ ≤ T. A dispatch whose work is below
  ``mcref.parallel.MIN_THREADED_WORK`` runs in the calling thread on any machine and counts as
  one thread (since 2026-11-28; the tables below before that date counted its tasks, so at
  M = 10⁵ their t fit's 10.0 and jackknife's 36.2 read 1.0 and 12.3 now). It counts tasks only:
  memory bandwidth, the Python between tasks and the serial steps of a phase come on top, in
  the measured column;
* ``s, 1 thr`` / ``s, 2 thr`` / ``1->2``: the phase's seconds on 1 and on 2 numba threads
  (medians of ``--reps`` runs each, alternated, same data and seed: by default 9 up to
  M = 2·10⁵, 3 up to 2·10⁶ and 1 above, ``default_reps``; the tables below before 2026-11-29
  04:00 UTC are medians of 3) and their ratio.

The first line prints the load average after the runs: on a shared machine the measured
ratio is only as good as the quiet it was measured in. The last two rows, ``machine: …``, are
the machine's own 1→T in the same process and hour (``_common.thread_ceiling``): a xoshiro
loop with no memory traffic (integer throughput, as the resampling, rank passes and t fit)
and an FP latency chain. On separate physical cores both give T; where the vCPUs share one
core's ports the throughput loop gets much less, and no phase can beat it.

Measured 2026-11-27 16:07 UTC on the 2-core machine, quiet (nothing else running; load average
after 1.62 and 1.51), ``--profile --ms 1e5 --n-boot 1000 --n-mc 500`` (medians of 3)::

    phase                        tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                     1000    0.10%   15.6   62.5      1.23     0.609  2.02
    jackknife                   200051   28.34%    3.0    3.4     0.102    0.0685  1.49
    references                     628    0.18%   15.7   62.6      3.99      2.06  1.94
    references, first round         64    1.56%   16.0   64.0    0.0968    0.0624  1.55
    scale tests                    192    0.52%   16.0   64.0     0.142     0.115  1.24
    t fit                        15640    0.01%   15.6   55.8     0.053     0.272  0.19

and ``--ms 1e6`` (``--reps 1``)::

    bootstrap                     1000    0.10%   15.9   62.5      18.1      9.58  1.89
    jackknife                  2000491   32.18%    2.7    3.0      1.25     0.679  1.85
    references                      64    1.56%   16.0   64.0      1.85      1.04  1.78
    scale tests                    192    0.52%   16.0   64.0      1.52     0.859  1.77
    t fit                       246141    0.00%   15.9   63.0     0.988     0.879  1.12

On the 16-core lent machine (numba 0.68.0, numpy 2.5.2; 2026-11-27 18:30 UTC, after the bootstrap,
jackknives, scale tests and t fit became serial kernels on threads), ``--profile --ms 1e5,1e6
--n-boot 1000 --n-mc 500 --reps 1 --threads 1,2,4,8,16`` (one run each)::

    M = 1e5                      tasks  largest  S(16)  S(64)  s, 1 thr  s, 16 thr  1->2  1->4  1->8 1->16
    bootstrap                      334    0.30%   15.9   55.6      1.09      0.115  1.95  3.05  5.41  9.53
    jackknife                      451   26.96%    3.1    3.5    0.0842     0.0637  1.30  1.76  1.59  1.32
    references                     628    0.18%   15.7   62.6      4.71      0.438  1.81  3.96  7.58 10.75
    references, first round         64    1.56%   16.0   64.0     0.138     0.0189  1.70  3.57  5.52  7.31
    scale tests                    192    0.52%   16.0   64.0     0.229     0.0686  1.81  3.00  3.66  3.33
    t fit                          440    0.25%   10.0   10.0    0.0702     0.0874  1.28  1.31  1.00  0.80
    M = 1e6
    bootstrap                      334    0.30%   15.9   55.6        17       1.86  1.69  3.53  5.96  9.15
    jackknife                     4501   30.70%    2.9    3.1     0.889      0.439  1.20  1.41  1.34  2.02
    references                      64    1.56%   16.0   64.0      2.46      0.337  1.50  2.38  4.34  7.30
    scale tests                    192    0.52%   16.0   64.0      2.36      0.312  1.89  3.36  5.43  7.57
    t fit                         9595    0.01%   14.3   50.1      1.35      0.608  1.70  2.32  2.52  2.22

At 16 threads the bootstrap reaches 9.2–9.5×, the references 7.3–10.8×, the scale tests 7.6×
at 10⁶: memory bandwidth and the Python call per task, not the tasks (bounds 15.7–16). The
jackknife stays near 2× (CC's serial pass, 27–31 % of its work) and the t fit near 2× (about
95 short likelihood passes, each starting its threads: ``map_chunks`` has no persistent pool).

The phases that carry the time reach 1.8–2.0 at 10⁶; the sub-second ones at 10⁵ (the t fit's
0.05 s, the first round's 0.1 s) are their fixed costs, and the t fit's 1.12 at 10⁶ is one run.

After ``over_tasks`` runs a call below ``mcref.parallel.MIN_THREADED_WORK`` (2·10⁶ element
operations) in the calling thread, same machine, quiet (load average after 1.02), 20:43 UTC,
``--profile --ms 1e5 --n-boot 1000 --n-mc 500`` (medians of 3)::

    phase                        tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6      1.17     0.665  1.75
    jackknife                      451   26.96%    3.1    3.5    0.0935    0.0679  1.38
    references                     628    0.18%   15.7   62.6      4.55      2.37  1.92
    references, first round         64    1.56%   16.0   64.0    0.0781    0.0615  1.27
    scale tests                    192    0.52%   16.0   64.0      0.16     0.132  1.21
    t fit                          440    0.25%   10.0   10.0    0.0657     0.076  0.86

and ``--ms 1e6 --reps 1`` (20:57 UTC, load average after 1.57)::

    bootstrap                      334    0.30%   15.9   55.6      19.8      8.56  2.32
    jackknife                     4501   30.70%    2.9    3.1      1.04     0.706  1.47
    references                      64    1.56%   16.0   64.0      2.05     0.938  2.18
    scale tests                    192    0.52%   16.0   64.0       1.5     0.889  1.69
    t fit                         6363    0.02%   14.3   50.1     0.856     0.809  1.06

(one pass of the t fit at 10⁶ alone: 14.8 ms on 1 thread, 10.5–13 ms on 2; with tasks ten times
larger 13.7 and 8.7 ms: the ~12 µs per task is not what holds it back.)

After CC's jackknife pass runs on its own thread beside the other statistics' passes, and the
binned statistics share one pass (``mcref.resampling._jackknife``; the jackknife row now times the making
of the ``Jackknives`` and each row taken), same machine, 22:57 UTC, ``--profile --ms 1e5
--n-boot 1000 --n-mc 500`` (medians of 3; load average after 0.87)::

    phase                        tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6      1.11       0.6  1.85
    jackknife                      451   26.96%    3.2    3.5    0.0722    0.0403  1.79
    references                     628    0.18%   15.7   62.6      3.72      2.01  1.85
    references, first round         64    1.56%   16.0   64.0    0.0802    0.0587  1.37
    scale tests                    192    0.52%   16.0   64.0     0.143     0.136  1.05
    t fit                          440    0.25%   10.0   10.0    0.0632    0.0498  1.27

and ``--ms 1e6 --reps 1`` (load average after 1.52)::

    bootstrap                      334    0.30%   15.9   55.6      18.5      9.06  2.04
    jackknife                     4501   30.70%    2.9    3.1     0.997     0.515  1.94
    references                      64    1.56%   16.0   64.0      2.15       1.1  1.96
    scale tests                    192    0.52%   16.0   64.0      1.48     0.813  1.82
    t fit                         6363    0.02%   14.3   50.1     0.758     0.704  1.08

The jackknife went from 1.38 to 1.79 at 10⁵ and from 1.47 to 1.94 at 10⁶. Its S(T) column still
counts the passes one after the other, so it does not see CC's pass overlap the others: on 2
threads the overlap is what the measured column shows; on many threads CC's pass (≈ 30 % of the
work) still bounds the phase near 3.

The t fit's 1.08 at 10⁶ is this VM's floating point: its passes are log1p per value. A loop of
log1p over 10⁶ values split between plain Python threads (numba, nogil; best of 3 × 20 runs)
gives 1 -> 2 = **1.51** here, and an integer xorshift loop of the same shape 1.94: the two
vCPUs (reported as 2 cores of 1 thread) do not double floating-point throughput. The 16-core
lent machine gave the t fit 1.70 at 10⁶.

The t fit's passes at 10⁵ (1 ms each) now run on one thread: 0.076 s on 2 threads against
0.272 s before (its 1->2 was 0.19); a pass that small cannot gain from a second thread.

2026-11-28 11:08 UTC, after the int32 multiplicities and the serial-dispatch accounting, same
machine (load average after 1.5; the machine's own 1->2 in the same runs: integer throughput
1.91 and 1.79, FP latency chain 1.96 and 1.91), ``--profile --ms 1e5,1e6 --n-boot 1000 --n-mc
500`` (medians of 3)::

    M = 1e5                      tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6      1.34     0.611  2.19
    jackknife                      697    0.15%    8.0   12.3    0.0757    0.0557  1.36
    references                     628    0.18%   15.7   62.6      4.57      2.25  2.03
    references, first round         64    1.56%   16.0   64.0      0.13    0.0776  1.68
    scale tests                    192    0.52%   16.0   64.0     0.102     0.109  0.93
    t fit                          440    0.25%    1.0    1.0    0.0804    0.0668  1.20
    M = 1e6
    bootstrap                      334    0.30%   15.9   55.6      14.7      9.23  1.59
    jackknife                     5708    0.03%   15.8   62.2     0.769     0.468  1.64
    references                      64    1.56%   16.0   64.0      1.82      1.03  1.77
    scale tests                    192    0.52%   16.0   64.0      1.08     0.712  1.52
    t fit                         8001    0.01%   15.8   63.0     0.916     0.779  1.18

The phases that carry the time pass 1.8 at 10⁵ (bootstrap 2.19, references 2.03) and reach
1.5–1.8 at 10⁶ in this hour; the sub-0.1 s phases at 10⁵ do not. One pass of the t fit at 10⁶,
timed alone in the same hour: 15.0 ms on one thread, 10.2–10.4 ms on two (1.45–1.72), 14.8–16.0
ms as one kernel call with no tasks: the tasks' Python costs about 1 %.

**A new VM, and what held the t fit back.** From 2026-11-28 11:50 UTC the 2-core machine is an
AMD EPYC of family 26 (Zen 5, AVX-512; the one above had AVX2 only): everything runs about 2.5–3×
faster, and its own 1→2 is 1.96–2.00 for both loops. There the t fit at 10⁶ still gave 1.02 and
the scale tests at 10⁵ 0.95, though one likelihood pass timed alone scaled 1.9×. The cause was
SciPy's OpenBLAS: L-BFGS-B's steps between the passes woke its threads, which then spun, waiting
for work, on the cores the passes needed (``OPENBLAS_NUM_THREADS=1``: t fit 1.82, references at
10⁶ 1.93). So the diagnosis above ("the vCPUs do not double floating-point throughput") was
wrong. The fit now runs its optimizer inside ``mcref.parallel.serial_blas`` (BLAS on one thread),
and ``MIN_THREADED_WORK`` went from 2·10⁶ to 2.5·10⁵ (its old value had measured the same spin).
``--profile --ms 1e5,1e6 --n-boot 1000 --n-mc 500`` (medians of 3; 12:40 UTC, load average after
1.5, the machine's own 1→2 1.99/1.99 at 10⁵, 1.76/1.98 at 10⁶), and a second run of 10⁶ (12:48,
ceiling 1.96/1.99)::

    M = 1e5                      tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6     0.437     0.228  1.92
    jackknife                      697    0.15%   13.9   34.3    0.0335    0.0194  1.72
    references                     628    0.18%   15.7   62.6      1.16     0.596  1.94
    references, first round         64    1.56%   16.0   64.0    0.0302    0.0164  1.84
    scale tests                    192    0.52%   16.0   64.0    0.0534    0.0316  1.69
    t fit                          440    0.25%   10.0   10.0     0.028     0.019  1.47
    M = 1e6, first run / second run
    bootstrap                      334    0.30%   15.9   55.6      5.74      3.78  1.52 / 1.68
    jackknife                     5708    0.03%   15.8   62.2      0.37     0.204  1.82 / 1.80
    references                      64    1.56%   16.0   64.0      0.75     0.425  1.76 / 1.82
    scale tests                    192    0.52%   16.0   64.0     0.559     0.309  1.81 / 1.81
    t fit                         8001    0.01%   15.8   63.0     0.393     0.226  1.74 / 1.77

Before the two changes, same hour: t fit 1.00 at 10⁵ (bound 1.0) and 1.02 at 10⁶, scale tests
0.95 at 10⁵ and 1.69 at 10⁶. The bootstrap at 10⁶ swings between runs (1.52, 1.68, 1.70, 1.82,
1.93 today): each thread's task holds 4·M bytes of counts and CC's 40·M-byte rank buffer, and
two of those do not fit the 32 MB L3. ``--profile --ms 1e7 --reps 1`` (after ``serial_blas``,
before the threshold, which does not act at 10⁷; 12:23 UTC, load average after 1.75, ceiling
2.00/1.98)::

    M = 1e7                      tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6      98.7        55  1.80
    jackknife                    43404    0.04%   15.9   63.5      4.23      2.33  1.82
    references                      64    1.56%   16.0   64.0      10.6       6.1  1.73
    scale tests                   1064    0.09%   15.6   62.6      26.8        14  1.91
    scale tests, first round       192    0.52%   16.0   64.0      6.27      3.32  1.89
    t fit                        38076    0.00%   15.9   62.6      2.39      1.37  1.74

What still misses 1.8 is a fixed serial cost of a small phase (at 10⁵: the scale tests' sums and
shape screen, about 4 ms of 30; the t fit's two partitions for its start and ~27 optimizer steps;
the jackknife's prefix sums, a serial scan: 8 ms at 10⁶, the same into reused arrays), or
memory traffic (the bootstrap and the references at 10⁶–10⁷).

Earlier the same day, on the 2-core machine shared with three other sessions (load average 12–14
throughout: the 1->2 column is the machine's contention as much as the code's; the first
rounds, measured in the same runs, gave 1.97/1.81 at 10⁵ and 1.71/1.63 at 10⁶),
``--profile --ms 1e5 --n-boot 1000 --n-mc 500`` (load after: 12.38 12.47 12.15)::

    phase                        tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                     1000    0.10%   15.6   62.5      5.34      5.07  1.05
    jackknife                   200051   28.34%    3.0    3.4     0.347     0.639  0.54
    references                     628    0.18%   15.7   62.6      15.7      15.8  0.99
    references, first round         64    1.56%   16.0   64.0     0.782     0.397  1.97
    scale tests                    192    0.52%   16.0   64.0     0.661     0.366  1.81
    scale tests, first round       192    0.52%   16.0   64.0     0.661     0.366  1.81
    t fit                        15640    0.01%   15.6   55.8      0.67      2.63  0.26

The same command again at 15:43 UTC (load after: 3.79 6.16 9.14; still more runnable processes
than the 2 cores, so a second numba thread found no free core): 1->2 bootstrap 0.94, jackknife
0.66, references 0.90, their first round 0.73, scale tests 1.02, t fit 0.19 (1-thread seconds
1.14, 0.097, 3.78, 0.098, 0.183, 0.212). Neither run measures the code's 1->2 speedup: that
needs a machine with two idle cores.

``--profile --ms 1e6 --n-boot 1000 --n-mc 500`` (load after: 14.34 12.15 12.20)::

    phase                        tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                     1000    0.10%   15.9   62.5       111       103  1.08
    jackknife                  2000491   32.18%    2.7    3.0      7.63      4.88  1.56
    references                      64    1.56%   16.0   64.0      14.1      8.25  1.71
    references, first round         64    1.56%   16.0   64.0      14.1      8.25  1.71
    scale tests                    192    0.52%   16.0   64.0      12.5      7.64  1.63
    scale tests, first round       192    0.52%   16.0   64.0      12.5      7.64  1.63
    t fit                       246141    0.00%   15.9   63.0      7.69       9.2  0.84

``--profile --reps 0 --ms 1e7 --n-boot 1000 --n-mc 2000`` (validate's defaults at 10⁷; tasks only,
load after: 4.48 7.12 9.73)::

    phase                        tasks  largest  S(16)  S(64)
    bootstrap                     1000    0.10%   15.9   62.5
    jackknife                 20004885   35.64%    2.5    2.7
    references                      64    1.56%   16.0   64.0
    references, first round         64    1.56%   16.0   64.0
    scale tests                   2176    0.05%   16.0   64.0
    scale tests, first round       192    0.52%   16.0   64.0
    t fit                      1484394    0.00%   16.0   63.9

Every phase but the jackknife has ≥ 4·64 tasks or S(64) ≥ 0.8·64; the jackknife's bound is
CC's serial O(M log M) pass (2.2 s of one thread at 10⁶, against the bootstrap's 111 s of
one thread: at 64 threads it would be about as long as the whole resampling). The t fit's
many short ``prange`` calls (one per likelihood evaluation, ~40 per fit) lose to a loaded
machine's scheduling (the second thread of each region waits for a core), which the bound
does not see.

The sequential tests' repeats depend on the data (a p near α runs towards the cap): the
phase line prints the permutation repeats and the scale-test replicates that ran, and
``--data-seed`` draws other sets of the same M.

2026-11-28 on the 2-core machine, after CC's jackknife pass got its joint counts by cache-sized
buckets and one walk along each order (same bits; ``mcref.kernels.jackknife_cc``), ``--profile
--ms 1e5 --n-boot 1000 --n-mc 500`` (medians of 3; load average after 1.19)::

    phase                        tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6     0.984     0.489  2.01
    jackknife                      451   26.96%    3.2    3.5    0.0763    0.0411  1.86
    references                     628    0.18%   15.7   62.6      3.38      1.72  1.97
    references, first round         64    1.56%   16.0   64.0    0.0788    0.0541  1.46
    scale tests                    192    0.52%   16.0   64.0     0.142     0.138  1.03
    t fit                          440    0.25%   10.0   10.0    0.0535    0.0656  0.82

and ``--ms 1e6 --reps 3`` (medians of 3; load average after 1.32)::

    bootstrap                      334    0.30%   15.9   55.6      17.7      7.31  2.42
    jackknife                     4501   30.70%    2.9    3.1     0.723     0.407  1.77
    references                      64    1.56%   16.0   64.0      1.58     0.916  1.72
    scale tests                    192    0.52%   16.0   64.0      1.42     0.891  1.60
    t fit                         6363    0.02%   14.3   50.1     0.835      0.67  1.25

The jackknife's 1-thread time at 10⁶ went from 0.997 s to 0.723 s (its CC pass at 10⁷: 6.3 → 3.4
s on one thread). A one-run profile at 10⁶ the same hour gave references 1.46, scale tests 1.67:
the 1->2 column of one run swings by ±0.3 on this VM.

2026-11-28 04:00 UTC, same machine, after CC's jackknife pass became nine steps over blocks on
all threads (``mcref.resampling._jackknife.cc_jackknife``), ``map_chunks`` kept its threads between calls and
``over_tasks`` cut 64–256 tasks to a multiple of 64, ``--profile --ms 1e5,1e6 --n-boot 1000
--n-mc 500`` (medians of 3; load average after 1.1–1.3)::

    phase                        tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6      1.02      0.64  1.59
    jackknife                      737    0.14%   14.4   38.4    0.0668    0.0518  1.29
    references                     628    0.18%   15.7   62.6      3.51       1.7  2.07
    references, first round         64    1.56%   16.0   64.0    0.0934    0.0572  1.63
    scale tests                    192    0.52%   16.0   64.0     0.144     0.129  1.11
    t fit                          440    0.25%   10.0   10.0    0.0599    0.0613  0.98
    M = 1e6
    bootstrap                      334    0.30%   15.9   55.6      16.3      9.11  1.79
    jackknife                     6120    0.03%   15.9   62.5     0.744     0.485  1.53
    references                      64    1.56%   16.0   64.0      1.68     0.985  1.70
    scale tests                    192    0.52%   16.0   64.0       1.4     0.874  1.60
    t fit                         8001    0.01%   15.8   63.0     0.753     0.683  1.10

and ``--profile --reps 0 --ms 1e7 --n-boot 1000 --n-mc 2000`` (tasks only)::

    bootstrap                      334    0.30%   15.9   55.6
    jackknife                    47404    0.04%   15.9   63.5
    references                      64    1.56%   16.0   64.0
    references, first round         64    1.56%   16.0   64.0
    scale tests                   2112    0.05%   16.0   64.0
    scale tests, first round       192    0.52%   16.0   64.0
    t fit                        38076    0.00%   15.9   62.6

The jackknife's bound went from 3.1 to 62.5 at 10⁶ and from 2.7 to 63.5 at 10⁷; the t fit's
from 50.1 to 63.0 at 10⁶ (127 tasks a pass instead of 101). At 10⁶ and 10⁷ every phase now has
S(64) ≥ 55.6 (≥ 0.8·64). At 10⁵ the jackknife (38.4) and the t fit (10) do not: their short steps
(0.4–4 ms of one thread) are cut into tasks of ~0.1 ms so that each task's call is paid for.
The 1->2 column was lower across the board in this hour than the day before (the bootstrap
1.59–1.82 at 10⁵ against 2.01; the same code for it): the runs share the VM with its other
load. Measured apart on the same data (medians of 7–21): CC's pass 1->2 = 1.85 at 10⁶ and
1.9–2.0 at 10⁷; the binned statistics' jackknife 1.46–1.81, ZMS's and RCE's (10–20 ms, mostly
the first touch of their 8 MB output, faulted in by both threads) below 1.

Measured 2026-11-28 15:10 UTC on the VM's new CPU (AMD EPYC family 26), after a dispatch of fewer
than 64 tasks of ``TASK_WORK`` became one contiguous run of items per thread (``over_tasks``; its
``tasks`` column now counts those items: the jackknife's 201 029 and the t fit's 15 640 at 10⁵),
the tasks were rounded to a multiple of 64 up to 512 of them, and the bootstrap kernel took its
sums once per block of 16 leaves. ``--profile --ms 1e5 --n-boot 1000 --n-mc 500`` (load average
before 1.10)::

    phase                        tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6     0.375     0.198  1.89
    jackknife                   201029    0.15%   14.9   51.5    0.0323    0.0183  1.76
    references                     628    0.18%   15.7   62.6      1.12     0.568  1.98
    references, first round         64    1.56%   16.0   64.0    0.0293     0.016  1.83
    scale tests                    192    0.52%   16.0   64.0    0.0522    0.0303  1.72
    scale tests, first round       192    0.52%   16.0   64.0    0.0522    0.0303  1.72
    t fit                        15640    0.01%   15.6   55.9    0.0259    0.0177  1.46
    machine: integer throughput                                                     2.00

and at ``--ms 1e6`` (load average after 1.88, just after the test suite)::

    bootstrap                      334    0.30%   15.9   55.6       5.4      2.91  1.86
    jackknife                  2006270    0.03%   15.9   63.2     0.358     0.194  1.84
    references                      64    1.56%   16.0   64.0     0.732     0.369  1.98
    scale tests                    192    0.52%   16.0   64.0     0.551     0.319  1.73
    t fit                         8001    0.01%   15.8   63.0     0.386     0.216  1.79

Every phase at 10⁵ and 10⁶ now has S(64) ≥ 51.2 (0.8·64): at 10⁵ the t fit went from 10 to 55.9
and the jackknife from 34.3 to 51.5. The measured 1→2 stays below 1.8 in the small phases at
10⁵: each of the t fit's 26 passes (0.6 ms on one thread) pays about 80 µs of dispatch on two
threads (an empty ``over_tasks`` call: 83 µs; an Event ping-pong between two Python threads alone
17–22 µs on this VM), and its start (one partition, 1.5 ms) is serial; three alternated runs of
the version before and after the per-thread cut gave the jackknife 1.59–1.73 → 1.76–1.80 and the
t fit 1.28–1.48 → 1.44–1.48.

2026-11-28 14:47 UTC, same machine (load average 1.1–1.6), after the t fit's passes, a scale test's
short rounds and its columns became ``prange`` regions (``mcref.parallel.run_region``: numba's
OpenMP threads start a region in 2.5 µs, a dispatch to mcref's threads costs ~70 µs) and the
resampling's upper splits BTPE draws, ``--profile --ms 1e5,1e6 --n-boot 1000 --n-mc 500`` (medians
of 3; the columns' M items now count in the scale tests' tasks)::

    M = 1e5                      tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6     0.382     0.198  1.94
    jackknife                   201029    0.15%   14.9   51.5    0.0335    0.0184  1.82
    references                     628    0.18%   15.7   62.6      1.21     0.613  1.97
    references, first round         64    1.56%   16.0   64.0    0.0308     0.017  1.82
    scale tests                 200192    0.50%   16.0   64.0    0.0534    0.0294  1.81
    t fit                        15640    0.01%   15.6   55.9    0.0257    0.0137  1.87
    M = 1e6
    bootstrap                      334    0.30%   15.9   55.6      5.07      3.09  1.64
    jackknife                  2006270    0.03%   15.9   63.2     0.345     0.183  1.89
    references                      64    1.56%   16.0   64.0      0.72     0.392  1.84
    scale tests                2000192    0.50%   16.0   64.0     0.557     0.283  1.97
    t fit                       246141    0.00%   15.9   63.0     0.362     0.184  1.96

Over five runs at 10⁵ the scale tests gave 1.70–1.81 and the jackknife 1.57–1.83 (the same code;
the VM's wake-up latencies swing); before the regions the t fit gave 1.39–1.51 and the scale tests
1.64–1.72 in the same hour. The bootstrap at 10⁶ (1.52–1.93 over the day) is memory traffic.

Then CC's rank buffer took 8 bytes a point and its u pass ran block by block as the bootstrap draws
its counts; ``--profile --ms 1e7 --n-boot 1000 --n-mc 500 --reps 1`` (15:40 UTC, one run each, load
average after 1.8; the columns' blocks counted in the scale tests' tasks only in this run: since, the
columns are a plain ``prange`` kernel, not recorded)::

    M = 1e7                      tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6      85.4      45.2  1.89
    jackknife                    43428    0.04%   15.9   63.5      4.43      2.53  1.75
    references                      64    1.56%   16.0   64.0      11.9      6.73  1.77
    scale tests                   (columns as items)  16.0   64.0      15.4      8.29  1.86
    scale tests, first round       192    0.52%   16.0   64.0      6.35       3.3  1.92
    t fit                        38076    0.00%   15.9   62.6      2.27      1.25  1.81

The bootstrap at 10⁷: 98.7 → 85.4 s on one thread and 55 → 45.2 s on two since 12:23 UTC (the
BTPE splits, CC's smaller buffer and block-wise u pass).

2026-11-28 evening (19:45–20:05 UTC, load average after 1.0–1.3), after the bootstrap's scratch
was kept per thread and CC's replicates got a call of their own at M ≥ 5·10⁵ (the bootstrap's
tasks: two runs of 334), ``--profile --ms 1e5,1e6 --n-boot 1000 --n-mc 500``, untied and with
``--round 3`` (tied u; at 10⁶ after the RCE scale test's (u, E) order stopped being an
``np.lexsort`` per round, which had given 0.707 / 0.526 s, 1.34)::

    untied                       tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    1e5 bootstrap                  334    0.30%   15.9   55.6     0.303     0.161  1.88
    1e5 references                 628    0.18%   15.7   62.6       1.2     0.593  2.02
    1e6 bootstrap                  668    0.15%   15.9   55.6      4.34      2.65  1.63
    1e6 jackknife              2006270    0.03%   15.9   63.2     0.356     0.197  1.81
    1e6 scale tests                192    0.52%   16.0   64.0     0.505     0.269  1.88
    u to 3 decimals
    1e5 bootstrap                  334    0.30%   15.9   55.6     0.396     0.209  1.89
    1e6 bootstrap                  668    0.15%   15.9   55.6      4.98      2.83  1.76
    1e6 references                  64    1.56%   16.0   64.0     0.694      0.35  1.98
    1e6 scale tests                192    0.52%   16.0   64.0     0.562     0.344  1.64

(machine rows 1.92–1.99.) The untied bootstrap at 10⁶ is CC's rank pass against the L3: CC's
bootstrap alone, 1→2 by M, same hour: 5·10⁵ 1.95, 7·10⁵ 1.87, 10⁶ 1.59, 1.5·10⁶ 1.40, 3·10⁶ 1.87;
one thread keeps its 8 MB rank buffer and the 8 MB of slots in the 32 MB L3 at 10⁶, two do not,
and from 3·10⁶ neither does, so both run from memory. Buffers of 5 bytes a point (a uint32 and a
uint8 array) or one packed uint32 gave 1.72 and 1.96 at 10⁶ but cost 9 % and 47 % more on one
thread at 10⁵: not taken then.

2026-11-29 (00:00–00:15 UTC, load average after 0.9–1.6), after CC's rank buffer took 5 bytes a
point after all — q a uint32 and the count one byte in planes of one array, with no branch in
either pass (a count of 255 or more goes to a third plane through a flag and a second compiled
|E| pass; a branch per point cost 0.3–0.6 of ~1 ns); one thread at 10⁵ now pays 3–5 % (CC's kernel
alone, three rounds), 1.40× faster at 10⁷ — and the scale tests' observed column sums came
from the kernels that write the columns (NumPy's ``X.sum(axis=0)`` was 1.1 ms serial each at
10⁵), ``--profile --ms 1e5,1e6 --n-boot 1000 --n-mc 500`` (medians of 3; at 10⁵ two more runs of
5 gave the same to ±0.02) and ``--ms 1e7 --reps 1``::

    M = 1e5                      tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6     0.313     0.159  1.97
    jackknife                   201029    0.15%   14.9   51.5    0.0316    0.0181  1.75
    references                     628    0.18%   15.7   62.6       1.1     0.553  1.99
    references, first round         64    1.56%   16.0   64.0    0.0288    0.0161  1.79
    scale tests                    192    0.52%   16.0   64.0    0.0463    0.0267  1.73
    t fit                        15640    0.01%   15.6   55.9    0.0246    0.0134  1.83
    M = 1e6
    bootstrap                      668    0.15%   15.9   55.6      3.62      1.87  1.94
    jackknife                  2006270    0.03%   15.9   63.2      0.35     0.179  1.95
    references                      64    1.56%   16.0   64.0     0.704     0.381  1.85
    scale tests                    192    0.52%   16.0   64.0     0.501     0.275  1.82
    t fit                       246141    0.00%   15.9   63.0     0.362     0.184  1.97
    M = 1e7
    bootstrap                      668    0.15%   15.9   55.6      48.6      26.2  1.86
    jackknife                    43428    0.04%   15.9   63.5      4.29      2.56  1.68
    references                      64    1.56%   16.0   64.0        11      6.24  1.76
    scale tests                    576    0.17%   16.0   64.0      15.2      7.23  2.10
    t fit                        38076    0.00%   15.9   62.6      2.22      1.16  1.92

(the 10⁵ rows before the column sums; after them the scale tests' own split gave 1.77 → 1.80.)
CC's bootstrap kernel alone at 10⁶, old and new in turn, six rounds: 1→2 1.49–1.68 → 1.74–1.96.
Every phase at 10⁶ passes 1.8. Below it: at 10⁵ the jackknife (the mean statistics' two passes
and CC's nine steps are 0.1–1 ms each, and a dispatch to mcref's threads costs ~80 µs) and the
first rounds; at 10⁷ the jackknife and the references, which run from memory (the jackknife's
serial prefix sums and totals are 0.2 of its 2.56 s on two threads).

2026-11-29 02:00 UTC, same machine, after the jackknife's two calls to the threads (the mean-type
and binned statistics in one pass after one call for their sums: no serial totals or prefix sums),
CC's seven steps run before the shared rows, the references' view of u made once per dataset and
the HD weights kept; ``--profile --ms 1e5,1e6`` (medians of 3) and ``--ms 1e7 --reps 1`` (two runs)::

    M = 1e5                      tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6     0.307     0.159  1.94
    jackknife                      988    0.14%   15.5   59.4    0.0313     0.017  1.84
    references                     628    0.18%   15.7   62.6      1.09     0.547  1.99
    references, first round         64    1.56%   16.0   64.0    0.0287    0.0151  1.90
    scale tests                    192    0.52%   16.0   64.0    0.0431    0.0235  1.84
    t fit                        15640    0.01%   15.6   55.9    0.0243     0.013  1.87
    M = 1e6
    bootstrap                      668    0.15%   15.9   55.6      3.47      1.79  1.93
    jackknife                     6241    0.03%   15.9   63.0     0.316     0.167  1.89
    references                      64    1.56%   16.0   64.0     0.664     0.368  1.80
    scale tests                    192    0.52%   16.0   64.0     0.515     0.287  1.79
    t fit                       246141    0.00%   15.9   63.0     0.352      0.18  1.95
    M = 1e7 (two runs)
    bootstrap                      668    0.15%   15.9   55.6 48.9, 47.8 25.8, 24.7  1.90, 1.94
    jackknife                    44266    0.04%   15.9   63.5 4.92, 4.84 2.21, 2.14  2.22, 2.26
    references                      64    1.56%   16.0   64.0 10.8, 10.7  6.0, 5.73  1.80, 1.87
    scale tests                    576    0.17%   16.0   64.0 14.4, 14.2 7.26, 7.17  1.99, 1.98
    t fit                        38076    0.00%   15.9   62.6 2.19, 2.18 1.16, 1.14  1.90, 1.91

Other runs of the same day spread around these: at 10⁵ the jackknife 1.76–1.84 (1.71–1.76
before), the references' first round 1.72–1.91, the scale tests 1.75–1.91; at 10⁶ (two more runs
with ``--reps 5``, the final code) the jackknife 1.71 and 1.84, the references 1.82 and 1.92, the
scale tests 1.80 and 1.74 (1.79–1.90 in the others; with ``NUMPY_MADVISE_HUGEPAGE=0`` 1.85); at
10⁷ the jackknife 1.70 once, with CC's pass beside the shared rows (then fixed). A phase of
15–30 ms on two shared vCPUs is measured to about ±3 %. The scale tests at 10⁶ hold a part that
does not scale in validate: the RCE test's columns (``rce_columns_all``, an (M, 5) array of 40 MB,
above glibc's largest mmap threshold of 32 MiB, so fresh pages on every call) took 45 ms a call on
one thread and 39 on two there, against 3 and 1.8 ms called alone.

2026-11-29 04:10 UTC, same machine, after the scale tests' resampling read z, or (E²/s, u²/s), and
made the other columns as it read them (no (M, 4) or (M, 5) array: the RCE test's fresh pages are
gone) and ``jack_kernel`` lost reassociation (same bits, same time); ``--profile --ms 1e5,1e6``
(medians of 9 at 10⁵, 3 at 10⁶, the new defaults) and ``--ms 1e7`` (one run)::

    M = 1e5                      tasks  largest  S(16)  S(64)  s, 1 thr  s, 2 thr  1->2
    bootstrap                      334    0.30%   15.9   55.6     0.308     0.161  1.91
    jackknife                      988    0.14%   15.5   59.4    0.0308     0.017  1.81
    references                     628    0.18%   15.7   62.6      1.08     0.556  1.94
    references, first round         64    1.56%   16.0   64.0    0.0288    0.0153  1.88
    scale tests                    192    0.52%   16.0   64.0    0.0364    0.0197  1.84
    t fit                        15640    0.01%   15.6   55.9    0.0242    0.0132  1.83
    M = 1e6
    bootstrap                      668    0.15%   15.9   55.6      3.51      1.79  1.96
    jackknife                     6241    0.03%   15.9   63.0     0.326     0.167  1.95
    references                      64    1.56%   16.0   64.0     0.716     0.387  1.85
    scale tests                    192    0.52%   16.0   64.0     0.356      0.19  1.87
    t fit                       246141    0.00%   15.9   63.0     0.351     0.181  1.94
    M = 1e7
    bootstrap                      668    0.15%   15.9   55.6      46.3      24.6  1.88
    jackknife                    44266    0.04%   15.9   63.5      4.59      2.07  2.21
    references                      64    1.56%   16.0   64.0      10.3      5.62  1.83
    scale tests                    576    0.17%   16.0   64.0      12.1      6.36  1.90
    t fit                        38076    0.00%   15.9   62.6      2.09      1.09  1.92

The scale tests on one thread: 0.515 → 0.356 s at 10⁶ (the last table's run; part of that is its
noise, the call alone measured 17 % less), 14.3 → 12.1 s at 10⁷. The runs at 10⁵ within the same
hour: the jackknife 1.78–1.85, the references' first round 1.76–1.89, the scale tests 1.82–1.86,
the t fit 1.72–1.84 (medians of 3 or 9). For half an hour before them, the VM's two vCPUs were
slower to hand work to each other (the machine's own rows still 1.96–2.01) and the same code,
and the code before these changes alike, gave the jackknife at 10⁵ 1.58–1.65: its calls of
0.2–1 ms (CC's steps) took longer on two threads than on one, the wake-ups of a thread costing
several hundred µs where they cost 60–100.

The seconds are this machine's (noisy on shared CPUs); the ratios and the memory transfer.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: the phases, by the functions _validate_run calls; "rounds" (validate's default, sequential tests:
#: the comparison D, the permutation D in rounds and the scale tests' rounds, which "scale" also counts)
PHASES = (("prepare", "prepare_for"), ("bootstrap", "bootstrap_prepared"), ("references", "simulate_prepared"),
          ("rounds", "sequential_work"), ("scale", "scale_tests"), ("ties", "tie_spread_prepared"),
          ("shape", "shape_screen_prepared"), ("joint", "_joint_of"))


# ---------------------------------------------------------------------------------------------- memory
def proc_status(key: str) -> float:
    """A ``kB`` field of /proc/self/status (VmRSS, VmHWM) in MiB (0 where there is no /proc)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux ≥ 4.0); False where it cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------- floor
def floor_ns(m: int, target_s: float = 0.3) -> float:
    """ns per element of one-thread ``Generator.standard_normal(m)`` (median of 5 runs of ≈ target_s)."""
    import numpy as np

    m = min(m, 1_000_000)  # the rate, not the memory: 8 MB chunks
    gen = np.random.default_rng(0)
    reps = max(1, int(target_s / (m * 15e-9)))
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            gen.standard_normal(m)
        ts.append((time.perf_counter() - t0) / reps)
    return statistics.median(ts) / m * 1e9


# ---------------------------------------------------------------------------------------------- child
def child(m: int, n_boot: int | None, n_mc: int | None, dists: list[str] | None, data_seed: int | None = None,
          decimals: int | None = None) -> dict:
    import warnings

    import numba
    import numpy as np

    import mcref
    import mcref.verdict._validate as V

    warnings.simplefilter("ignore")
    kw: dict = {"progress": False}
    if n_boot is not None:
        kw["n_boot"] = n_boot
    if n_mc is not None:
        kw["n_mc"] = n_mc
    if dists is not None:
        kw["dists"] = dists
    rng0 = np.random.default_rng(0)
    u0 = rng0.lognormal(0.0, 0.5, 2000)
    V.validate(u0 * rng0.standard_normal(2000), u0, seed=0, **{"n_boot": 200, "n_mc": 200, **kw})  # compile
    fl = floor_ns(m)
    base = proc_status("VmRSS")
    exact_peak = reset_peak()

    acc = {p: {"s": 0.0, "peak": 0.0, "after": 0.0} for p, _ in PHASES}
    overall = [base]

    def wrap(phase, fn):
        def inner(*a, **k):
            overall[0] = max(overall[0], proc_status("VmHWM"))  # the peak of what ran before
            reset_peak()
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                acc[phase]["s"] += time.perf_counter() - t0
                hwm = proc_status("VmHWM")
                acc[phase]["peak"] = max(acc[phase]["peak"], hwm)
                acc[phase]["after"] = proc_status("VmRSS")
                overall[0] = max(overall[0], hwm)
                reset_peak()
        return inner

    saved = {name: getattr(V, name) for _, name in PHASES}
    for phase, name in PHASES:
        setattr(V, name, wrap(phase, saved[name]))
    rng = np.random.default_rng(m if data_seed is None else [m, data_seed])  # --data-seed: another set
    u = rng.lognormal(0.0, 0.5, m)
    E = u * rng.standard_normal(m)
    if decimals is not None:  # --round: u as a file with that many decimals holds it (tied values)
        u = np.round(u, decimals)
    data = proc_status("VmRSS")
    t0 = time.perf_counter()
    try:
        res = V.validate(E, u, seed=1, **kw)
    finally:
        for name, fn in saved.items():
            setattr(V, name, fn)
    seconds = time.perf_counter() - t0
    peak = max(overall[0], proc_status("VmHWM"))
    return {"M": m, "seconds": seconds, "base_mib": base, "data_mib": data, "peak_mib": peak,
            "exact_peak": exact_peak, "floor_ns": fl, "threads": numba.get_num_threads(), "n_boot": res.n_boot,
            "n_mc": res.n_mc, "dists": list(res.dists), "phases": acc,
            "n_perm": res.rounds.n_perm if res.rounds is not None else None,
            "n_scale": res.rounds.n_scale if res.rounds is not None else None}


# ---------------------------------------------------------------------------------------------- parallel profile
#: the profile's rows: the parallel phases, and the first round (repeats 0–64) of the sequential ones
PROFILE_ROWS = ("bootstrap", "jackknife", "references", "references, first round", "scale tests",
                "scale tests, first round", "t fit")


def _profile_timers(V, first: int):
    """Wrap the functions of each profiled phase on their module objects; returns (seconds per row,
    undo). The first rounds are the calls with repeats (0, ``first``) (references) or B = ``first``
    (scale tests); the bootstrap's seconds exclude the jackknife's, the scale tests' the t fit's
    (``fit_t``: ν̂ of Z, once per table, in the first round)."""
    import mcref._distfit as F
    import mcref.reference as R
    from mcref.resampling._jackknife import Jackknives as JK

    acc = dict.fromkeys(PROFILE_ROWS, 0.0)
    # the jackknife phase: making the Jackknives (CC's pass starts on its thread) and taking each row
    saved = [(V, "bootstrap_prepared"), (JK, "__init__"), (JK, "take"), (V, "simulate_prepared"),
             (R, "simulate_prepared"), (V, "scale_tests"), (F, "fit_t")]
    orig = {(id(mod), name): getattr(mod, name) for mod, name in saved}

    def timed(fn, rows_of):
        def inner(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                for row in rows_of(k):
                    acc[row] += time.perf_counter() - t0
        return inner

    V.bootstrap_prepared = timed(orig[(id(V), "bootstrap_prepared")], lambda k: ["bootstrap"])
    JK.__init__ = timed(orig[(id(JK), "__init__")], lambda k: ["jackknife"])
    JK.take = timed(orig[(id(JK), "take")], lambda k: ["jackknife"])
    refs = lambda k: ["references"] + (["references, first round"] if k.get("repeats") == (0, first) else [])
    V.simulate_prepared = timed(orig[(id(V), "simulate_prepared")], refs)
    R.simulate_prepared = timed(orig[(id(R), "simulate_prepared")], refs)
    inside = [0]  # > 0 while the scale tests run: the t fits they make (not those of a t(fit) D)
    F.fit_t = timed(orig[(id(F), "fit_t")], lambda k: ["t fit"] if inside[0] else [])
    scale = timed(orig[(id(V), "scale_tests")],
                  lambda k: ["scale tests"] + (["scale tests, first round"] if k.get("n_boot") == first else []))

    def scale_tests(*a, **k):
        inside[0] += 1
        try:
            return scale(*a, **k)
        finally:
            inside[0] -= 1

    V.scale_tests = scale_tests

    def undo():
        for mod, name in saved:
            setattr(mod, name, orig[(id(mod), name)])

    def seconds():
        out = dict(acc)
        out["bootstrap"] -= out["jackknife"]  # the jackknife runs inside bootstrap_prepared
        out["scale tests"] -= out["t fit"]  # ν̂ of Z, fitted once inside the first round's scale tests
        out["scale tests, first round"] -= out["t fit"]
        return out

    return seconds, undo


def default_reps(m: int) -> int:
    """Timed runs per thread count of the profile at M = ``m`` when ``--reps`` is not given: 9 up to
    2·10⁵ (phases of 15–40 ms, whose single runs spread ±3–6 % on this VM: the median of 9 settles
    where that of 3 did not), 3 up to 2·10⁶, 1 above (a run of minutes).

    Examples
    --------
    >>> [default_reps(m) for m in (10**5, 10**6, 10**7)]
    [9, 3, 1]
    """
    return 9 if m <= 200_000 else 3 if m <= 2_000_000 else 1


def profile_child(m: int, kw: dict, data_seed: int | None, reps: int = 3, threads=(1, 2),
                  decimals: int | None = None) -> dict:
    """The parallel profile of one M: the tasks of each phase (one run on this machine's threads,
    :func:`mcref.parallel.task_profile`), their speedup bounds at 16 and 64 threads
    (:func:`mcref.parallel.speedup_bound`), and each phase's seconds on each of ``threads`` numba
    threads (``reps`` runs of each, alternated; the medians)."""
    import warnings

    import numba
    import numpy as np

    import mcref.verdict._validate as V
    from mcref.parallel import speedup_bound, task_profile
    from mcref.verdict._rounds import FIRST_ROUND

    warnings.simplefilter("ignore")
    rng0 = np.random.default_rng(0)
    u0 = rng0.lognormal(0.0, 0.5, 2000)
    V.validate(u0 * rng0.standard_normal(2000), u0, seed=0, **{"n_boot": 200, "n_mc": 200, **kw})  # compile
    rng = np.random.default_rng(m if data_seed is None else [m, data_seed])
    u = rng.lognormal(0.0, 0.5, m)
    E = u * rng.standard_normal(m)
    if decimals is not None:
        u = np.round(u, decimals)
    with task_profile() as rec:
        V.validate(E, u, seed=1, **kw)
    rows = {}
    for row in PROFILE_ROWS:
        phase, _, first = row.partition(", ")
        ds = [d for d in rec if d["phase"] == phase and (not first or d["span"] == (0, FIRST_ROUND))]
        sizes = [x for d in ds for x in d["sizes"]]
        rows[row] = {"tasks": len(sizes), "largest": max(sizes) / sum(sizes) if sizes else float("nan"),
                     "bound16": speedup_bound(ds, 16) if ds else float("nan"),
                     "bound64": speedup_bound(ds, 64) if ds else float("nan"), **{f"s{t}": [] for t in threads}}
    seconds, undo = _profile_timers(V, FIRST_ROUND)
    n0 = numba.get_num_threads()
    try:
        for _ in range(reps):
            for t in threads:
                numba.set_num_threads(min(t, numba.config.NUMBA_NUM_THREADS))
                before = seconds()
                V.validate(E, u, seed=1, **kw)
                after = seconds()
                for row in PROFILE_ROWS:
                    rows[row][f"s{t}"].append(after[row] - before[row])
    finally:
        numba.set_num_threads(n0)
        undo()
    for r in rows.values():
        for t in threads:
            r[f"s{t}"] = statistics.median(r[f"s{t}"]) if r[f"s{t}"] else float("nan")
    from _common import thread_ceiling

    return {"M": m, "rows": rows, "load": os.getloadavg(), "threads": n0, "thread_counts": list(threads),
            "ceiling": {k: {str(t): x for t, x in v.items()} for k, v in thread_ceiling(tuple(threads)).items()}}


def print_profile(p: dict) -> None:
    print(f"# parallel profile, M = {p['M']:.0e} (load average after: {p['load'][0]:.2f} {p['load'][1]:.2f} "
          f"{p['load'][2]:.2f})", flush=True)
    ts = p.get("thread_counts", [1, 2])
    print(f"{'phase':26s} {'tasks':>7s} {'largest':>8s} {'S(16)':>6s} {'S(64)':>6s} "
          + " ".join(f"{f's, {t} thr':>9s}" for t in ts) + " " + " ".join(f"{f'1->{t}':>5s}" for t in ts[1:]),
          flush=True)
    for name, r in p["rows"].items():
        if not r["tasks"]:
            print(f"{name:26s} {'(did not run)':>7s}", flush=True)
            continue
        sp = [r["s1"] / r[f"s{t}"] if r[f"s{t}"] > 0 else float("nan") for t in ts[1:]]  # NaN: not timed
        print(f"{name:26s} {r['tasks']:7d} {r['largest']:8.2%} {r['bound16']:6.1f} {r['bound64']:6.1f} "
              + " ".join(f"{r[f's{t}']:9.3g}" for t in ts) + " " + " ".join(f"{x:5.2f}" for x in sp), flush=True)
    for name, c in p.get("ceiling", {}).items():  # the machine's own 1->T, same process, same hour
        print(f"{'machine: ' + name:26s} {'':7s} {'':8s} {'':6s} {'':6s} " + " ".join(f"{'':9s}" for _ in ts) + " "
              + " ".join(f"{c[str(t)]:5.2f}" for t in ts[1:]), flush=True)


def run_child(m: int, args) -> dict:
    cmd = [sys.executable, __file__, "--child", str(m)]
    for opt in ("n_boot", "n_mc", "dists", "data_seed", "round"):
        v = getattr(args, opt)
        if v is not None:
            cmd += ["--" + opt.replace("_", "-"), str(v)]
    if args.profile:
        cmd += ["--profile", "--reps", str(default_reps(m) if args.reps is None else args.reps), "--threads", args.threads]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"M = {m}: {res.stderr.strip()[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def print_row(r: dict) -> None:
    m, n_d = r["M"], len(r["dists"])
    # the repeats run: a sequential table's permutation D stops early (the other D run n_mc)
    reps = n_d * r["n_mc"] if r.get("n_perm") is None else (n_d - 1) * r["n_mc"] + r["n_perm"]
    work_ref = float(m) * reps
    work_val = float(m) * (r["n_boot"] + reps)
    floor_eq = r["floor_ns"] * 1e-9 * work_ref / r["threads"]
    ns_val = r["seconds"] * r["threads"] / work_val * 1e9
    print(f"{m:8.0e} {r['n_boot']:6d} {r['n_mc']:6d} {n_d:3d} {r['seconds']:10.3g} {floor_eq:10.3g} "
          f"{r['floor_ns']:8.3g} {ns_val / r['floor_ns']:9.3g} {r['seconds'] / floor_eq:10.3g} "
          f"{r['base_mib']:8.0f} {r['data_mib'] - r['base_mib']:7.0f} {r['peak_mib']:8.0f}"
          + ("" if r["exact_peak"] else " (peak incl. warm-up)"), flush=True)
    ph = r["phases"]
    rest = r["seconds"] - sum(p["s"] for k, p in ph.items() if not (k == "scale" and ph["rounds"]["s"] > 0))
    parts = "  ".join(f"{k} {v['s']:.3g}s/{v['peak']:.0f}" for k, v in ph.items() if v["s"] > 0)
    run = f"  permutation repeats run {r['n_perm']} of {r['n_mc']}" if r.get("n_perm") is not None else ""
    if r.get("n_scale"):
        run += f", scale-test replicates {r['n_scale']}"
    print(f"{'':8s}   phases (s / peak MiB): {parts}  rest {rest:.3g}s{run}", flush=True)


# ---------------------------------------------------------------------------------------------- CLI row
def cli_row(rows: int, args) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    work = Path(tempfile.mkdtemp(prefix="mcref_bench_validate_"))
    try:
        path = work / "big.parquet"
        rng = np.random.default_rng(rows)
        u = rng.lognormal(0.0, 0.5, rows)
        pq.write_table(pa.table({"E": u * rng.standard_normal(rows), "u": u}), path)
        del u
        cmd = [sys.executable, "-m", "mcref", "validate", str(path), "--seed", "0", "--no-progress"]
        if args.n_boot is not None:
            cmd += ["--boot", str(args.n_boot)]
        if args.n_mc is not None:
            cmd += ["--mc", str(args.n_mc)]
        if args.dists is not None:
            cmd += ["--dists", args.dists]
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        gnu_time = shutil.which("time") if Path("/usr/bin/time").exists() else None
        t0 = time.perf_counter()
        if gnu_time:
            res = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env, check=False)
            seconds = time.perf_counter() - t0
            peak = next((int(ln.split(":")[-1]) / 1024 for ln in res.stderr.splitlines()
                         if "Maximum resident set size" in ln), float("nan"))
            how = "/usr/bin/time -v"
        else:
            import psutil

            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            ps, peak = psutil.Process(proc.pid), 0.0
            while proc.poll() is None:
                try:
                    peak = max(peak, ps.memory_info().rss / 2**20)
                except psutil.Error:
                    pass
                time.sleep(0.05)
            out, err = proc.communicate()
            res = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
            seconds = time.perf_counter() - t0
            how = "psutil polling"
        if res.returncode != 0:
            raise RuntimeError(f"mcref validate: {res.stderr.strip()[-3000:]}")
        print(f"CLI: mcref validate {path.name} ({rows:.0e} rows, {path.stat().st_size / 2**20:.0f} MiB Parquet) "
              f"--seed 0{' ' + ' '.join(cmd[8:]) if len(cmd) > 8 else ''}: {seconds:.1f} s end to end, "
              f"peak RSS {peak:.0f} MiB ({how})", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def tied(args) -> str:
    return "untied" if args.round is None else f"to {args.round} decimals"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ms", default="1e4,1e5,1e6")
    ap.add_argument("--m7", action="store_true", help="add M = 1e7 and the CLI row")
    ap.add_argument("--cli", action="store_true", help="the end-to-end CLI row")
    ap.add_argument("--cli-rows", type=float, default=1e7)
    ap.add_argument("--n-boot", type=int, default=None, help="default: validate's (5000)")
    ap.add_argument("--n-mc", type=int, default=None, help="default: validate's default_n_mc(M)")
    ap.add_argument("--dists", default=None, help="comma-separated D (default: validate's)")
    ap.add_argument("--data-seed", type=int, default=None,
                    help="draw another data set of each M (default: the generator seeded by M alone)")
    ap.add_argument("--round", type=int, default=None,
                    help="u rounded to this many decimals, as files often hold it: runs of tied u, the tie "
                         "splits and the tie spread (default: untied)")
    ap.add_argument("--profile", action="store_true",
                    help="the parallel profile of each M instead of the cost table (tasks, bounds, 1->2 threads)")
    ap.add_argument("--reps", type=int, default=None,
                    help="--profile: timed runs per thread count (0: the tasks and bounds only, one run; default: "
                         "9 up to M = 2e5, 3 up to 2e6, 1 above)")
    ap.add_argument("--threads", default="1,2",
                    help="--profile: the numba thread counts timed, comma-separated, starting at 1 (default 1,2; "
                         "on a many-core machine 1,2,4,8,16)")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        dists = [d for d in args.dists.split(",") if d] if args.dists else None
        if args.profile:
            kw = {k: v for k, v in (("n_boot", args.n_boot), ("n_mc", args.n_mc), ("dists", dists)) if v is not None}
            # a given n_mc is the fixed test by default: the profile keeps validate's sequential rounds
            threads = [int(t) for t in args.threads.split(",") if t]
            print(json.dumps(profile_child(args.child, {"progress": False, "sequential": True, **kw}, args.data_seed,
                                           reps=default_reps(args.child) if args.reps is None else args.reps, threads=threads, decimals=args.round)))
        else:
            print(json.dumps(child(args.child, args.n_boot, args.n_mc, dists, args.data_seed, args.round)))
        return
    from _common import machine

    ms = [int(float(x)) for x in args.ms.split(",") if x]
    if args.m7 and 10_000_000 not in ms:
        ms.append(10_000_000)
    if args.profile:
        print(f"# mcref from {ROOT / 'mcref'}; {machine()}; B = {args.n_boot or 'default'}, "
              f"N_MC = {args.n_mc or 'default_n_mc(M)'}, D = {args.dists or 'default'}, u {tied(args)}; "
              "one process per M", flush=True)
        for m in ms:
            print_profile(run_child(m, args))
        return
    print(f"# mcref from {ROOT / 'mcref'}; {machine()}; B = {args.n_boot or 'default'}, "
          f"N_MC = {args.n_mc or 'default_n_mc(M)'}, D = {args.dists or 'default'}, u {tied(args)}; one process per M")
    print(f"{'M':>8s} {'B':>6s} {'N_MC':>6s} {'n_D':>3s} {'validate s':>10s} {'floor-eq s':>10s} {'floor ns':>8s} "
          f"{'val/floor':>9s} {'x floor-eq':>10s} {'base MiB':>8s} {'E,u MiB':>7s} {'peak MiB':>8s}", flush=True)
    for m in ms:
        print_row(run_child(m, args))
    print("# floor ns: one NumPy thread's standard_normal per element; floor-eq s: the references' N_MC·n_D·M "
          "normals at that rate on all threads; val/floor: validate's ns per element·replicate·thread over floor ns; "
          "x floor-eq: validate s / floor-eq s; peak: VmHWM of the process (E, u and the imports included); "
          "base: VmRSS after imports and warm-up")
    if args.cli or args.m7:
        cli_row(int(args.cli_rows), args)


if __name__ == "__main__":
    main()
