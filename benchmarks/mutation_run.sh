#!/bin/bash
# The mutation run of issue 31 (results: benchmarks/mutation_results.md).
#
# mutmut 2.5.1's engine (benchmarks/mutation_driver.py: mutmut.Context/list_mutations/mutate,
# every mutation type but string, fstring, decorator and annassign) over _validate, _joint,
# features, _scale_test and the binned statistics of kernels/stats.py. Each module is mutated in
# a private copy of the tree (/tmp/mut/<module>), never in the worktree; the mutants run in a
# seeded random order (--seed 31), so the mutants that ran in the time given are a simple random
# sample. A runner's non-zero exit (or a timeout, 300 s) kills the mutant.
#
# BEFORE: the runners below (the test files that exercise each module, slow tests deselected).
# AFTER:  the same runners plus tests/test_mutants.py, re-run on the survivors of BEFORE (the
#         mutants killed before stay killed: tests were only added).
#
# The binned kernels run with NUMBA_DISABLE_JIT=1 (the mutated Python runs, no numba cache can
# serve a stale compiled kernel). Machine of the recorded run: 2 shared cores, ~90-200 s per mutant.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/tmp/mut}
PHASE=${1:-before}            # before | after
IDS_DIR=${IDS_DIR:-$WORK/res} # after: <module>.ids (comma-separated survivor ids of BEFORE)
mkdir -p "$WORK/res"
P="python -m pytest -x -q -p no:cacheprovider"
PRE=""   # after: the added tests first, so that -x stops a mutant they kill early
[ "$PHASE" = after ] && PRE="tests/test_mutants.py "
declare -A FILE LINES RUNNER
FILE[validate]=mcref/verdict/_validate.py
RUNNER[validate]="$P ${PRE}tests/test_validate.py -k 'not test_table_on_calibrated_data_is_consistent_with_its_parts'"
FILE[joint]=mcref/verdict/_joint.py
RUNNER[joint]="$P ${PRE}tests/test_joint.py -k 'not size_alpha and not power'"
FILE[features]=mcref/features.py
RUNNER[features]="$P ${PRE}tests/test_adaptivity.py"
FILE[scale]=mcref/verdict/_scale_test.py
RUNNER[scale]="$P ${PRE}tests/test_scale_test.py -k 'not power'"
# the binned statistics: finish_binned (88-110; the range ran to 118, taking in the NEED_*/N_RAW
# constants), prefix_counts, bin_acc, wsum3, bin_finish, bin_sums (232-340), prefix_sums and
# jack_binned_kernel (596-641)
FILE[stats]=mcref/kernels/stats.py
LINES[stats]="88-118,232-340,596-641"
KLEAF=""  # after: of tests/test_mutants.py, the binned kernels' test
[ "$PHASE" = after ] && KLEAF=" or bins_longer_than_a_leaf"
RUNNER[stats]="NUMBA_DISABLE_JIT=1 $P ${PRE}tests/test_stats.py tests/test_bootstrap.py -k '(test_stats and not qm9 and not shrink_not_triggered) or jackknife_matches_naive or (replicates_equal_naive and tied_both)$KLEAF'"
for m in validate joint features scale stats; do
  T=$WORK/$m
  rm -rf "$T" && mkdir -p "$T" && tar -C "$REPO" --exclude=.git -cf - . | tar -C "$T" -xf -
  ids=""
  if [ "$PHASE" = after ]; then ids=$(cat "$IDS_DIR/$m.ids"); [ -z "$ids" ] && continue; fi
  (cd "$T" && PYTHONPATH=$T nice -n 15 python "$REPO/benchmarks/mutation_driver.py" --tree "$T" \
     --file "${FILE[$m]}" --lines "${LINES[$m]:-}" --runner "${RUNNER[$m]}" --seed 31 --timeout 300 \
     ${ids:+--ids $ids} --out "$WORK/res/$m.$PHASE.jsonl" > "$WORK/res/$m.$PHASE.log" 2>&1) &
done
wait
