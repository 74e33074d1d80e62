#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Times `gpurent push` against `rsync -a` over the same loopback sshd and the same algorithms
# (aes128-ctr + hmac-sha2-256 + curve25519-sha256: what libssh2 1.10 negotiates), on loopback and
# at BENCH_RTT_MS of round-trip time through bench/delay_proxy.py:
#   - a generated, real-looking repository of BENCH_FILES (20,000) source files with its .git
#     (committed and packed): first push into an empty directory, then a no-change re-push;
#   - one BENCH_BIG_MIB (512) MiB file (weights): first push.
# Writes the "Push" section of docs/benchmarks.md.
#
#   bash bench/push_bench.sh [BUILD_DIR]      (default build/)
# Env: BENCH_ROUNDS (default 3; the median is reported), BENCH_WAN_ROUNDS (default 1),
# BENCH_FILES (20000), BENCH_BIG_MIB (512), BENCH_RTT_MS (50; 0 skips the WAN part),
# BENCH_DIR (default a temp dir under /tmp; needs ~3 GiB), BENCH_NO_DOC=1 (print only).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
GPURENT=$BUILD/gpurent
[ -x "$GPURENT" ] || { echo "build gpurent first ($GPURENT missing)" >&2; exit 1; }
ROUNDS=${BENCH_ROUNDS:-3}
WAN_ROUNDS=${BENCH_WAN_ROUNDS:-1}
FILES=${BENCH_FILES:-20000}
BIG_MIB=${BENCH_BIG_MIB:-512}
RTT=${BENCH_RTT_MS:-50}
source "$ROOT/bench/bench_env.sh"
bench_setup push-bench

echo "generating a repository of $FILES files in $B/repo ..." >&2
python3 - "$B/repo" "$FILES" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(20261130)
words = ("def class return self import from for in if else while with as try except raise yield lambda None True False "
         "model layer tensor batch loss grad optimizer config data loader train eval step epoch weight bias shape dtype "
         "cuda device float int str list dict tuple len range print open path json yaml args kwargs").split()
tops = ["src", "lib", "tests", "docs", "tools", "models", "configs", "scripts"]
dirs = []
for _ in range(max(1, n // 25)):
    depth = rng.choice([1, 2, 2, 3, 3, 4])
    parts = [rng.choice(tops)] + ["%s%d" % (rng.choice(["pkg", "mod", "core", "util", "layers", "io"]), rng.randrange(40))
                                  for _ in range(depth - 1)]
    dirs.append(os.path.join(*parts))
exts = [".py"] * 6 + [".md", ".json", ".yaml", ".txt", ".cpp", ".h"]
for i in range(n):
    d = os.path.join(root, dirs[i % len(dirs)])
    os.makedirs(d, exist_ok=True)
    size = int(min(200_000, rng.lognormvariate(7.6, 1.1)))  # median ~2 KB, a long tail
    line, out, total = [], [], 0
    while total < size:
        w = rng.choice(words)
        line.append(w)
        if len(line) > rng.randrange(4, 12):
            s = "    " * rng.randrange(0, 3) + " ".join(line) + "\n"
            out.append(s)
            total += len(s)
            line = []
    with open(os.path.join(d, "f%05d%s" % (i, rng.choice(exts))), "w") as f:
        f.write("".join(out))
PY
(cd "$B/repo" && git init -q && git add -A && git -c gc.auto=0 -c user.email=bench@gpurent -c user.name=bench commit -qm "bench" && git gc -q)
mkdir -p "$B/big"
openssl rand -out "$B/big/weights.safetensors" $((BIG_MIB * 1024 * 1024))
REPO_FILES=$(find "$B/repo" -type f | wc -l)
REPO_BYTES=$(du -sb "$B/repo" | cut -f1)
GIT_FILES=$(find "$B/repo/.git" -type f | wc -l)
cat "$B/big/"* > /dev/null
find "$B/repo" -type f -exec cat {} + > /dev/null   # warm the page cache

ALG="-c aes128-ctr -o MACs=hmac-sha2-256 -o KexAlgorithms=curve25519-sha256 -o Compression=no"
U=$SSHD_USER
H=127.0.0.1

# run_cases PREFIX PORT KNOWN_HOSTS ROUNDS: the three cases through one port, gpurent and rsync interleaved.
run_cases() {
  local p=$1 port=$2 kh=$3 rounds=$4 r
  local G="$GPURENT push --host $U@$H:$port --identity $SSHD_KEY --known-hosts $kh --json"
  local SSHO="-p $port -i $SSHD_KEY -o IdentitiesOnly=yes -o UserKnownHostsFile=$kh -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR $ALG"
  for r in $(seq 1 "$rounds"); do
    echo "$p round $r/$rounds ..." >&2
    rm -rf "$B/dst"; mkdir -p "$B/dst"
    t $G "$B/repo" --to "$B/dst/g" >> "$B/$p.first.gpurent.times"
    t rsync -a -e "ssh $SSHO" "$B/repo/" "$U@$H:$B/dst/r/" >> "$B/$p.first.rsync.times"
    t $G "$B/repo" --to "$B/dst/g" >> "$B/$p.noop.gpurent.times"
    t rsync -a -e "ssh $SSHO" "$B/repo/" "$U@$H:$B/dst/r/" >> "$B/$p.noop.rsync.times"
    t $G "$B/big" --to "$B/dst/gb" >> "$B/$p.big.gpurent.times"
    t rsync -a -e "ssh $SSHO" "$B/big/" "$U@$H:$B/dst/rb/" >> "$B/$p.big.rsync.times"
  done
  # Both copies are whole and equal to the source.
  diff -r "$B/repo" "$B/dst/g" > /dev/null && diff -r "$B/repo" "$B/dst/r" > /dev/null
  cmp "$B/big/weights.safetensors" "$B/dst/gb/weights.safetensors"
  (cd "$B/dst/g" && [ -z "$(git status --porcelain)" ]) || { echo "git status not clean on the pushed copy" >&2; exit 1; }
}
run_cases lo "$SSHD_PORT" "$SSHD_KNOWN_HOSTS" "$ROUNDS"
if [ "$RTT" != 0 ]; then
  PP=$(sshd_free_port)
  python3 "$ROOT/bench/delay_proxy.py" "$PP" "$SSHD_PORT" "$RTT" &
  PROXY_PID=$!
  for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PP") 2>/dev/null && break; sleep 0.05; done
  sed "s/^\[127.0.0.1\]:$SSHD_PORT /[127.0.0.1]:$PP /" "$SSHD_KNOWN_HOSTS" > "$B/known_hosts_wan"
  run_cases wan "$PP" "$B/known_hosts_wan" "$WAN_ROUNDS"
fi

row() {  # row LABEL KEY [target]
  local g r
  g=$(med "$2.gpurent"); r=$(med "$2.rsync")
  printf '| %s | %.2f s | %.2f s | %s | %s |\n' "$1" "$g" "$r" "$(ratio "$g" "$r")" "${3:-}"
}
big_row() {  # big_row LABEL KEY target: MB/s as well
  local g r bytes=$((BIG_MIB * 1024 * 1024))
  g=$(med "$2.gpurent"); r=$(med "$2.rsync")
  printf '| %s | %.2f s (%.0f MB/s) | %.2f s (%.0f MB/s) | %s | %s |\n' "$1" "$g" "$(echo "$bytes / $g / 1000000" | bc -l)" "$r" \
    "$(echo "$bytes / $r / 1000000" | bc -l)" "$(ratio "$g" "$r")" "${3:-}"
}
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
WAN=""
if [ "$RTT" != 0 ]; then
  WAN=$(cat <<MD
$(row "${RTT} ms RTT: repository, first push" wan.first "no slower than rsync (<= 1.00)")
$(row "${RTT} ms RTT: repository, no-change re-push" wan.noop "<= 0.50")
$(big_row "${RTT} ms RTT: ${BIG_MIB} MiB file" wan.big "twice rsync's speed (<= 0.50)")
MD
)
fi
TABLE=$(cat <<MD
Measured $(date -u +%Y-%m-%d) on $(nproc) vCPU ($CPU), $(free -g | awk '/Mem:/ {print $2}') GiB RAM, load average
at the end $LOAD; loopback sshd (OpenSSH $(ssh -V 2>&1 | cut -d, -f1 | sed 's/OpenSSH_//'), libssh2
$(dpkg-query -W -f='${Version}' libssh2-1 2>/dev/null || echo '?'), rsync $(rsync --version | head -1 | awk '{print $3}')), everything in the page cache. Loopback: median of $ROUNDS
round(s); ${RTT} ms RTT (\`bench/delay_proxy.py\`): median of $WAN_ROUNDS round(s); each tool once per round,
interleaved. Same algorithms for both (aes128-ctr + hmac-sha2-256 + curve25519-sha256). The
repository: $FILES generated source files, committed and packed by git (\`git gc\`):
$REPO_FILES files ($GIT_FILES in .git), $REPO_BYTES bytes. gpurent verifies every file it sends
against a SHA-256 computed on the server (a large file per byte range and whole); rsync
checks its own transfer checksums. "ratio" is gpurent's time divided by rsync's (below 1 =
gpurent faster).

| case | gpurent push | rsync -a | ratio | target |
|---|---|---|---|---|
$(row "loopback: repository, first push" lo.first)
$(row "loopback: repository, no-change re-push" lo.noop)
$(big_row "loopback: ${BIG_MIB} MiB file" lo.big)
$WAN

Command: \`bash bench/push_bench.sh build\` (BENCH_ROUNDS=$ROUNDS, BENCH_WAN_ROUNDS=$WAN_ROUNDS,
BENCH_FILES=$FILES, BENCH_BIG_MIB=$BIG_MIB, BENCH_RTT_MS=$RTT).
MD
)
echo "$TABLE"
if [ -z "${BENCH_NO_DOC:-}" ]; then
  python3 - "$ROOT/docs/benchmarks.md" "$TABLE" <<'PY'
import sys
path, table = sys.argv[1], sys.argv[2]
text = open(path).read()
body = "## Push\n\n(`bench/push_bench.sh`)\n\n" + table.strip() + "\n"
start = text.find("## Push")
if start < 0:
    text = text.rstrip("\n") + "\n\n" + body
else:
    nxt = text.find("\n## ", start + 1)
    text = text[:start] + body + ("\n" + text[nxt + 1:] if nxt >= 0 else "")
open(path, "w").write(text)
PY
fi
