#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What `gpurent push` sends, compared with what git would commit, on real trees (issue #30's
# comparison; docs/benchmarks.md "push sends git's answer"). Not a timing: a file-set check.
#
# Usage: bench/push_vs_git.sh [--templates GITIGNORE_REPO] [REPO...]
#   REPO            a git repository (a clone, or a bare/mirror git directory) of a real project;
#                   it is cloned into scratch, given realistic junk (virtualenv, caches, wandb
#                   runs, checkpoints, data), secrets that only the global excludes file leaves
#                   out (.env, *.pem, id_rsa, .netrc, credentials.json, secrets/), and a nested
#                   repository with its own .gitignore and .git/info/exclude
#   --templates DIR a clone or git directory of github/gitignore: every *.gitignore becomes a
#                   tree whose files are made from its own patterns (half of them committed)
# Every tree is pushed to a loopback sshd (tests/e2e/sshd.sh); the files that arrive are compared
# with `git ls-files -z --cached --others --exclude-standard` asked in the tree and in each nested
# repository. Prints one line per repository, a summary for the templates, and exits 1 on any
# difference or any secret on the server.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${GPURENT_BIN:-$ROOT/build/gpurent}
[ -x "$BIN" ] || { echo "push_vs_git: build gpurent first (scripts/build.sh)" >&2; exit 2; }
templates=""
repos=()
while [ $# -gt 0 ]; do
  case "$1" in
    --templates) templates=$2; shift 2 ;;
    *) repos+=("$1"); shift ;;
  esac
done
source "$ROOT/bench/bench_env.sh"
export BENCH_DIR=${BENCH_DIR:-$(mktemp -d /tmp/gpurent-push-vs-git.XXXXXX)}
export SSHD_HOME=$BENCH_DIR/server  # the sessions' HOME: "~/repos/N" is under it
bench_setup push-vs-git
export XDG_CONFIG_HOME=$B/config GIT_CONFIG_NOSYSTEM=1
mkdir -p "$XDG_CONFIG_HOME/git" "$SSHD_HOME"
git config --global user.email bench@example.com
git config --global user.name bench
git config --global init.defaultBranch main
git config --global advice.detachedHead false
printf '.env\n*.pem\nid_rsa\n.netrc\ncredentials.json\nsecrets/\n.venv/\nwandb/\ncheckpoints/\n.DS_Store\n' \
  > "$XDG_CONFIG_HOME/git/ignore"
S=(--host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS")

git_files() { python3 "$ROOT/tests/e2e/git_files.py" "$1"; }
server_files() {
  [ -d "$1" ] || return 0
  (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort)
}
compare() {  # $1 tree, $2 server dir -> sets SAME (0/1), COUNT, EXTRA, MISSING
  git_files "$1" | LC_ALL=C sort > "$B/want"
  server_files "$2" > "$B/got"
  COUNT=$(wc -l < "$B/want")
  EXTRA=$(comm -13 "$B/want" "$B/got" | wc -l)
  MISSING=$(comm -23 "$B/want" "$B/got" | wc -l)
  SAME=$([ "$EXTRA" -eq 0 ] && [ "$MISSING" -eq 0 ] && echo 1 || echo 0)
}
bad=0

n=0
for repo in "${repos[@]}"; do
  n=$((n + 1))
  name=$(basename "$(cd "$repo" && git rev-parse --show-toplevel 2>/dev/null || dirname "$(cd "$repo" && pwd)")")
  t=$B/trees/$n-$name
  if ! git clone -q "$repo" "$t" 2> "$B/clone.err"; then
    echo "$name: not compared: git clone failed ($(head -1 "$B/clone.err"))"
    continue
  fi
  # Junk a working ML tree collects, and secrets only the global excludes file leaves out.
  mkdir -p "$t/__pycache__" "$t/.venv/lib" "$t/wandb/run-1/files" "$t/checkpoints/step-100" "$t/outputs" "$t/data" \
    "$t/secrets" "$t/.ipynb_checkpoints" "$t/third_party/tool"
  echo "x" > "$t/__pycache__/train.cpython-311.pyc"
  echo "x" > "$t/.venv/lib/site.py"
  echo "loss 1.0" > "$t/wandb/run-1/files/output.log"
  head -c 1048576 /dev/urandom > "$t/checkpoints/step-100/model.safetensors"
  echo "log" > "$t/outputs/log.txt"
  echo '{"text": "x"}' > "$t/data/train.jsonl"
  echo "{}" > "$t/.ipynb_checkpoints/notebook-checkpoint.ipynb"
  echo "x" > "$t/.DS_Store"
  echo "HF_TOKEN=hf_example" > "$t/.env"
  printf -- '-----BEGIN PRIVATE KEY-----\nMIIE\n' > "$t/server.pem"
  printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n' > "$t/id_rsa"
  echo "machine huggingface.co password hf_example" > "$t/.netrc"
  echo '{"type": "service_account"}' > "$t/credentials.json"
  echo "token" > "$t/secrets/token.txt"
  echo "tool" > "$t/third_party/tool/tool.py"
  echo "*.log" > "$t/third_party/tool/.gitignore"
  echo "noise" > "$t/third_party/tool/run.log"
  echo "private" > "$t/third_party/tool/private.txt"
  (cd "$t/third_party/tool" && git init -q . && git add tool.py .gitignore && echo private.txt >> .git/info/exclude)
  set +e
  "$BIN" push "$t" --to "~/repos/$n" --json "${S[@]}" > "$B/o" 2> "$B/e"
  rc=$?
  set -e
  compare "$t" "$SSHD_HOME/repos/$n"
  leaked=$(server_files "$SSHD_HOME/repos/$n" | grep -cE '(^|/)(\.env|server\.pem|id_rsa|\.netrc|credentials\.json|secrets/token\.txt|private\.txt)$' || true)
  gitdir=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['git']['git_dir']['bytes'] if d.get('git') and d['git'].get('git_dir') else 0)" "$B/o" 2>/dev/null || echo "?")
  printf '%-28s rc=%s  files=%-6s same_as_git=%s extra=%s missing=%s secrets_on_server=%s .git_not_sent=%s B\n' \
    "$name" "$rc" "$COUNT" "$SAME" "$EXTRA" "$MISSING" "$leaked" "$gitdir"
  if [ "$rc" -ne 0 ] || [ "$SAME" -ne 1 ] || [ "$leaked" -ne 0 ]; then bad=1; sed -n 1,5p "$B/e"; fi
done

if [ -n "$templates" ]; then
  tdir=$B/templates-src
  git clone -q "$templates" "$tdir"
  total=0; same=0; refused=0; failed=0
  while IFS= read -r -d '' tpl; do
    total=$((total + 1))
    t=$B/tpl/$total
    mkdir -p "$t"
    cp "$tpl" "$t/.gitignore"
    # Files named by the template's own patterns ('*' -> x, '**' -> a/b, '?' -> q, '[..]' -> its first
    # character), a file beside each, and half of them committed (tracked files stay sent).
    python3 - "$t" "$tpl" <<'PY'
import os, re, sys
root, tpl = sys.argv[1], sys.argv[2]
made = []
for line in open(tpl, encoding="utf-8", errors="replace"):
    p = line.strip()
    if not p or p.startswith("#"):
        continue
    p = p.lstrip("!").strip("/")
    p = p.replace("**", "a/b").replace("*", "x").replace("?", "q")
    p = re.sub(r"\[([^\]])[^\]]*\]", r"\1", p).replace("\\", "")
    if not p or ".." in p.split("/") or len(p) > 200:
        continue
    for path in (p, p + "/inner.txt", os.path.join(os.path.dirname(p), "keep_" + os.path.basename(p) + ".py")):
        full = os.path.join(root, path)
        try:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            if not os.path.exists(full):
                with open(full, "w") as f:
                    f.write(path)
                made.append(path)
        except OSError:
            pass
with open(os.path.join(root, "main.py"), "w") as f:
    f.write("print(1)\n")
PY
    (cd "$t" && git init -q . && { git add -A >/dev/null 2>&1; git ls-files -z -o | head -z -n 40 | xargs -0 -r git add -f -- >/dev/null 2>&1;
     git commit -qm t >/dev/null 2>&1; } || true)  # (head may close the pipe early: SIGPIPE is not a failure here)
    set +e
    "$BIN" push "$t" --to "~/tpl/$total" --json "${S[@]}" > "$B/o" 2> "$B/e"
    rc=$?
    set -e
    if [ "$rc" -eq 3 ] && grep -q '"secrets"' "$B/o"; then
      # A tree whose pattern-made names hold a likely secret: refused, nothing sent. Again with
      # each of them allowed, then compared like the others.
      refused=$((refused + 1))
      [ ! -e "$SSHD_HOME/tpl/$total" ] || { bad=1; echo "template $tpl: refused but something was sent"; }
      allow=()
      while IFS= read -r -d '' path; do allow+=(--allow-secret "$path"); done < <(python3 -c \
        "import json,sys; [print(s['path'], end='\\0') for s in json.load(open(sys.argv[1]))['secrets']]" "$B/o")
      set +e
      "$BIN" push "$t" --to "~/tpl/$total" --json "${allow[@]}" "${S[@]}" > "$B/o" 2> "$B/e"
      rc=$?
      set -e
    fi
    compare "$t" "$SSHD_HOME/tpl/$total"
    if [ "$rc" -eq 0 ] && [ "$SAME" -eq 1 ]; then
      same=$((same + 1))
    else
      failed=$((failed + 1)); bad=1
      echo "template $(basename "$tpl"): rc=$rc extra=$EXTRA missing=$MISSING $(head -c 300 "$B/e")"
    fi
  done < <(find "$tdir" -name '*.gitignore' -type f -print0 | sort -z)
  echo "github/gitignore templates: $total trees, $same sent exactly git's list ($refused of them first refused for likely secrets, nothing sent, then sent with --allow-secret), $failed differ"
fi
exit $bad
