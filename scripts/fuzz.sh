#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Coverage-guided fuzzing of every parser of outside input (docs/fuzzing.md).
#
# Builds every fuzz target (fuzz/fuzz_*.cpp) with Debian 12's clang-19 and libFuzzer
# (-fsanitize=fuzzer,address,undefined; `scripts/deps.sh --fuzz` installs clang-19 and
# libclang-rt-19-dev) in build-fuzz/, then runs the targets one after the other, SECONDS each
# (default 30), on their committed corpus (fuzz/corpus/<target>_seed_corpus.zip, unpacked into
# build-fuzz/committed/<target>/), every crash input found so far (fuzz/crashes/<target>/) and
# their dictionary (fuzz/dict/<target>.dict). New inputs go to build-fuzz/corpus/<target>/; a
# crashing input to build-fuzz/artifacts/<target>/. Exits non-zero when a target crashes. A table
# of executions, exec/s, coverage and corpus size per target is printed at the end and kept in
# build-fuzz/fuzz-results.md.
#
# Without clang-19 it says so and falls back to g++ and the replay+mutate driver
# (fuzz/driver/replay_mutate_driver.cpp: ASan+UBSan, no coverage guidance).
#
# Usage: scripts/fuzz.sh [SECONDS] [--seed] [--update-corpus] [TARGET...]
#   --seed           also start from fresh seeds (fuzz/make_seeds.py: tests/data, reference shapes)
#   --update-corpus  after each run, minimise (-merge=1) the committed corpus plus what the run
#                    found and re-pack it into fuzz/corpus/<target>_seed_corpus.zip
#                    (fuzz/pack_corpus.py; libFuzzer only)
#   TARGET           e.g. fuzz_tar; default: every target
# Environment: GPURENT_JOBS (build jobs, default 2), GPURENT_FUZZ_DIR (reuse an existing sanitizer
# build such as CI's build-asan: a clang-19 one built by `scripts/test.sh --sanitize --with-fuzzers`
# holds the libFuzzer targets; a g++ one, the replay driver's fallback), GPURENT_FUZZ_NICE (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=30
seed=0
update=0
targets=()
for arg in "$@"; do
  case "$arg" in
    --seed) seed=1 ;;
    --update-corpus) update=1 ;;
    [0-9]*) seconds=$arg ;;
    fuzz_*) targets+=("$arg") ;;
    *) echo "fuzz.sh: unknown argument $arg (usage: scripts/fuzz.sh [SECONDS] [--seed] [--update-corpus] [TARGET...])" >&2
       exit 2 ;;
  esac
done
dir=build-fuzz
jobs=${GPURENT_JOBS:-2}
nice_level=${GPURENT_FUZZ_NICE:-10}
if [ ${#targets[@]} -eq 0 ]; then
  for source in fuzz/fuzz_*.cpp; do
    targets+=("$(basename "$source" .cpp)")
  done
fi

# libFuzzer needs clang; Debian 12's clang 14 cannot compile libstdc++ 12's <expected>, clang-19 can.
libfuzzer=0
if scripts/libfuzzer_probe.sh; then
  libfuzzer=1
  export CC=clang-19 CXX=clang++-19
  echo "fuzz: libFuzzer targets built with clang++-19" >&2
else
  export CC=gcc CXX=g++
  echo "fuzz: WARNING: clang++-19 with libFuzzer (clang-19, libclang-rt-19-dev) is missing; install it with" \
       "'scripts/deps.sh --fuzz'. Falling back to g++ and the replay+mutate driver" \
       "(fuzz/driver/replay_mutate_driver.cpp: ASan+UBSan, NO coverage guidance)." >&2
fi

start_build=$(date +%s)
reuse=0
if [ -n "${GPURENT_FUZZ_DIR:-}" ] && [ -f "$GPURENT_FUZZ_DIR/CMakeCache.txt" ] &&
  grep -q "GPURENT_SANITIZE:BOOL=ON" "$GPURENT_FUZZ_DIR/CMakeCache.txt"; then
  if [ $libfuzzer -eq 1 ]; then
    # A clang-19 tree built with GPURENT_FUZZ (CI: `scripts/test.sh --sanitize --with-fuzzers`, whose
    # tests already built the libFuzzer targets): no second build of the whole tree.
    grep -q "GPURENT_FUZZ:BOOL=ON" "$GPURENT_FUZZ_DIR/CMakeCache.txt" &&
      grep -q "CMAKE_CXX_COMPILER:.*clang++-19\$" "$GPURENT_FUZZ_DIR/CMakeCache.txt" && reuse=1
  else
    reuse=1  # an existing g++ ASan+UBSan build, whose tests already built the replay targets
  fi
fi
if [ $reuse -eq 1 ]; then
  dir=$GPURENT_FUZZ_DIR
  echo "fuzz: reusing the sanitizer build in $dir/" >&2
else
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -q "CMAKE_CXX_COMPILER:.*${CXX}\$" "$dir/CMakeCache.txt"; then
    rm -rf "$dir"  # the compiler changed
  fi
  extra=()
  [ $libfuzzer -eq 1 ] && extra=(-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link)
  cmake -S . -B "$dir" -G Ninja -DGPURENT_FUZZ=ON -DGPURENT_TESTS=OFF -DGPURENT_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" "${extra[@]}" >/dev/null
fi
ninja -C "$dir" -j "$jobs" "${targets[@]}" >&2
echo "fuzz: build took $(( $(date +%s) - start_build )) s" >&2

if [ $seed -eq 1 ]; then
  rm -rf "$dir/seeds"
  python3 fuzz/make_seeds.py "$dir/seeds"
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
results=$dir/fuzz-results.md
printf '| target | seconds | executions | exec/s | cov | ft | corpus at the end | committed corpus | result |\n%s\n' \
  '|---|---|---|---|---|---|---|---|---|' >"$results"
status=0
for name in "${targets[@]}"; do
  bin=$dir/$name
  work=$dir/corpus/$name
  artifacts=$dir/artifacts/$name
  log=$dir/logs/$name.log
  rm -rf "$work"
  mkdir -p "$work" "$artifacts" "$(dirname "$log")"
  # The committed corpus is one zip per target: unpacked into the build folder, never into fuzz/.
  committed_dir=$dir/committed/$name
  archive=fuzz/corpus/${name}_seed_corpus.zip
  rm -rf "$committed_dir"
  if [ -f "$archive" ]; then
    mkdir -p "$committed_dir"
    (cd "$committed_dir" && cmake -E tar xf "$root/$archive")
  fi
  inputs=()
  for d in "$committed_dir" "fuzz/crashes/$name" "$dir/seeds/$name"; do
    [ -d "$d" ] && inputs+=("$d")
  done
  opts=(-max_total_time="$seconds" -artifact_prefix="$artifacts/")
  if [ $libfuzzer -eq 1 ]; then
    opts+=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
    [ -f "fuzz/dict/$name.dict" ] && opts+=(-dict="fuzz/dict/$name.dict")
  fi
  echo "fuzz: $name for ${seconds}s" >&2
  result=ok
  crashed=0
  # One process per target, one target at a time, at a low priority (the machine is shared).
  if ! nice -n "$nice_level" "$bin" "${opts[@]}" "$work" "${inputs[@]}" >"$log" 2>&1; then
    result="CRASH (see $log; input in $artifacts/)"
    status=1
    crashed=1
    tail -n 40 "$log" >&2
  fi
  if [ $libfuzzer -eq 1 ]; then
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
    runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -n 1)
    rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$log" | tail -n 1)
    corp=$(sed -nE 's/.* corp: ([0-9]+\/[0-9]+[a-zA-Z]*).*/\1/p' <<<"$last")
  else
    runs=$(sed -nE 's/.*done: ([0-9]+) runs.*/\1/p' "$log" | tail -n 1)
    rate="" cov="n/a" ft="n/a"
    corp=0
    for d in "${inputs[@]}"; do
      corp=$(( corp + $(find "$d" -type f | wc -l) ))
    done
    corp="$corp files"
    [ -n "$runs" ] && rate=$(( runs / (seconds > 0 ? seconds : 1) ))
  fi
  if [ $update -eq 1 ] && [ $libfuzzer -eq 1 ] && [ $crashed -eq 0 ]; then
    merged=$dir/merged/$name
    rm -rf "$merged"
    mkdir -p "$merged"
    nice -n "$nice_level" "$bin" -merge=1 -artifact_prefix="$artifacts/" "$merged" "$work" "${inputs[@]}" \
      >"$dir/logs/$name.merge.log" 2>&1
    # Re-pack the minimised set (sorted names, fixed timestamps: the same files give the same zip).
    if [ -n "$(ls -A "$merged")" ]; then
      python3 fuzz/pack_corpus.py pack "$merged" "$archive"
      committed_dir=$merged
    else
      echo "fuzz: $name: the merge kept no input (see $dir/logs/$name.merge.log); $archive left as it was" >&2
    fi
  fi
  committed=0
  [ -d "$committed_dir" ] && committed=$(find "$committed_dir" -type f | wc -l)
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$seconds" "${runs:-?}" "${rate:-?}" "${cov:-?}" \
    "${ft:-?}" "${corp:-?}" "$committed" "$result" >>"$results"
done
cat "$results"
exit $status
