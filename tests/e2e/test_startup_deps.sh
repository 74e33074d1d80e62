#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the offline commands load at start-up (docs/benchmarks.md, "Start-up"): the executable
# needs libc and nothing else (no libm, libcurl, libssh2, SQLite; those live in the IO module),
# builds only the subcommand it runs, and `plan` loads the IO module only to fetch the price catalogue.
set -euo pipefail
: "${GPURENT_BIN:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
T=$(mktemp -d /tmp/gpurent-startup-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
export HOME=$T XDG_CONFIG_HOME=$T/config XDG_CACHE_HOME=$T/cache XDG_STATE_HOME=$T/state NO_COLOR=1

if [ "${GPURENT_SANITIZED:-OFF}" != ON ]; then  # the sanitizer runtimes add their own libraries
  needed=$(readelf -d "$GPURENT_BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | paste -sd' ' -)
  for lib in $needed; do
    case "$lib" in
      libc.so.6 | ld-linux-*.so.*) ;;
      *) fail "gpurent needs $lib at start-up (only libc is allowed; put it in the IO module): $needed" ;;
    esac
  done
fi

# The IO module must not be loaded by an offline command: point it at a file that is not a
# library, so loading it would fail the command. plan loads it only to fetch the price catalogue
# (none cached yet, or older than catalog_max_age_hours): not with catalog_auto_refresh=false.
echo "not a library" >"$T/not-a-module.so"
GPURENT_CATALOG_AUTO_REFRESH=false GPURENT_IO_MODULE=$T/not-a-module.so "$GPURENT_BIN" plan llama-3.1-8b --json \
  >"$T/plan.json" 2>"$T/plan.err" || fail "plan tried to load the IO module: $(cat "$T/plan.err")"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/plan.json" || fail "plan --json is not JSON"
[ ! -s "$T/plan.err" ] || fail "plan wrote to stderr: $(cat "$T/plan.err")"
# Its first fetch, with the module unloadable, is a warning and the snapshot answers.
GPURENT_CATALOG_AUTO_REFRESH=true GPURENT_IO_MODULE=$T/not-a-module.so "$GPURENT_BIN" plan llama-3.1-8b --json \
  >"$T/plan.json" 2>"$T/plan.err" || fail "plan failed when the catalogue could not be fetched: $(cat "$T/plan.err")"
grep -q "warning: the price catalogue was not fetched (the shipped snapshot of" "$T/plan.err" ||
  fail "no warning for the catalogue not fetched: $(cat "$T/plan.err")"

# A subcommand's help works although only that subcommand is built; the top-level help lists all.
# The help is read whole first: `grep -q` in a pipe exits at the first match and, under pipefail,
# the writer's SIGPIPE (exit 141) would fail the line at random.
plan_help=$("$GPURENT_BIN" plan --help)
grep -q -- "--gpu-util" <<<"$plan_help" || fail "plan --help lacks its options"
top=$("$GPURENT_BIN" --help)
for c in plan fits models offers cost config oom up attach status down ssh backup doctor; do
  grep -qE "^  $c( |$)" <<<"$top" || fail "gpurent --help does not list $c"
done
set +e
out=$("$GPURENT_BIN" plna llama-3.1-8b 2>&1)
code=$?
set -e
[ "$code" = 2 ] || fail "a mistyped command exits $code, not 2"
grep -q "unknown command 'plna'; commands: plan, fits" <<<"$out" || fail "mistyped command message: $out"
echo "ok"
