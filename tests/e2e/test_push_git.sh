#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `gpurent push` sends what git would commit, and never a likely secret, against a real OpenSSH
# sshd on 127.0.0.1. The file set that arrives on the server is compared, in this test, with
# `git ls-files --cached --others --exclude-standard` run in the repository and in each nested
# repository or submodule:
#   1. a global excludes file ($XDG_CONFIG_HOME/git/ignore, then core.excludesFile) holding .env
#      and *.pem: neither is sent;
#   2. a nested repository (its own .gitignore and .git/info/exclude) and a submodule: their
#      files as git lists them, no .git of theirs;
#   3. a split index, skip-worktree and core.ignorecase;
#   4. a generated tree with several hundred patterns;
#   5. the secret guard: id_rsa and .env stop the push (exit 3, the JSON error lists them,
#      nothing arrives); --allow-secret lets one through, then both;
#   6. .git only with --with-git, its size and the commit in the JSON either way; the walk's
#      warnings in the JSON.
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}"
T=$(mktemp -d /tmp/gpurent-push-git-test.XXXXXX)
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config GPURENT_STATE_DIR=$T/state/gpurent
export SSHD_HOME=$T/server GIT_CONFIG_NOSYSTEM=1
unset SSH_AUTH_SOCK GPURENT_SSH_PASSPHRASE SSH_ASKPASS GIT_DIR GIT_WORK_TREE GIT_CONFIG_GLOBAL
mkdir -p "$HOME" "$XDG_CONFIG_HOME/git" "$SSHD_HOME"
source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
cleanup() {
  sshd_stop
  rm -rf "$T"
}
trap cleanup EXIT
sshd_start "$T/sshd"
git config --global user.email t@example.com
git config --global user.name t
git config --global init.defaultBranch main
git config --global protocol.file.allow always

fail() { echo "FAIL: $*" >&2; exit 1; }
jq_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
S=(--host "$SSHD_TARGET" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS")
R() {  # runs gpurent, keeping stdout in $T/o and stderr in $T/e; sets RC
  set +e
  "$GPURENT_BIN" "$@" > "$T/o" 2> "$T/e"
  RC=$?
  set -e
}
# The files (and links) under a directory on the server, one per line, sorted.
server_files() {
  [ -d "$1" ] || return 0
  (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort)
}
# What git would commit in a working tree, asked of git here: ls-files in the repository and in
# every nested repository or submodule below it (their .git never), files that exist only.
git_files() { python3 "$GPURENT_SOURCE_DIR/tests/e2e/git_files.py" "$1"; }
same_as_git() {  # $1 local tree, $2 server directory, $3 what
  git_files "$1" > "$T/want"
  server_files "$2" > "$T/got"
  diff "$T/want" "$T/got" > "$T/diff" || fail "$3: the server's files differ from git's list: $(head -20 "$T/diff")"
}

echo "== 1. the global excludes file: .env and *.pem stay home"
P=$T/global
mkdir -p "$P/src"
echo "print(1)" > "$P/src/train.py"
echo "HF_TOKEN=hf_abc" > "$P/.env"
printf -- '-----BEGIN PRIVATE KEY-----\nMIIE\n' > "$P/server.pem"
echo "notes" > "$P/notes.md"
(cd "$P" && git init -q . && git add src && git commit -qm init)
printf '.env\n*.pem\n' > "$XDG_CONFIG_HOME/git/ignore"
R --json push "$P" --to '~/global1' "${S[@]}"
[ $RC -eq 0 ] || fail "push with global excludes: rc=$RC $(cat "$T/e") $(cat "$T/o")"
[ ! -e "$SSHD_HOME/global1/.env" ] && [ ! -e "$SSHD_HOME/global1/server.pem" ] || fail ".env or server.pem was sent"
same_as_git "$P" "$SSHD_HOME/global1" "global excludes (XDG)"
[ "$(jq_get "$T/o" 'd["git"]["commit"] == "'"$(git -C "$P" rev-parse HEAD)"'" and d["git"]["dirty"] is False')" = True ] ||
  fail "the commit in the JSON: $(cat "$T/o")"
rm "$XDG_CONFIG_HOME/git/ignore"
printf '.env\n*.pem\n' > "$HOME/my-excludes"
git config --global core.excludesFile "$HOME/my-excludes"
R --json push "$P" --to '~/global2' "${S[@]}"
[ $RC -eq 0 ] || fail "push with core.excludesFile: rc=$RC $(cat "$T/e")"
same_as_git "$P" "$SSHD_HOME/global2" "global excludes (core.excludesFile)"
[ ! -e "$SSHD_HOME/global2/.env" ] || fail ".env was sent (core.excludesFile)"
git config --global --unset core.excludesFile

echo "== 2. a nested repository and a submodule, as git treats them"
L=$T/lib
mkdir -p "$L"
echo "x = 1" > "$L/lib.py"
echo "*.cache" > "$L/.gitignore"
echo "c" > "$L/tracked.cache"
(cd "$L" && git init -q . && git add lib.py .gitignore && git add -f tracked.cache && git commit -qm lib)
P=$T/nest
mkdir -p "$P"
echo "main" > "$P/main.py"
(cd "$P" && git init -q . && git add main.py && git commit -qm main && git submodule add -q "$L" third_party/lib && git commit -qm sub)
echo "local" > "$P/third_party/lib/local.cache"
echo "new" > "$P/third_party/lib/new.py"
N=$P/tools/nested
mkdir -p "$N"
echo "tool" > "$N/tool.py"
echo "private" > "$N/private.txt"
echo "*.log" > "$N/.gitignore"
echo "forced" > "$N/forced.log"
echo "noise" > "$N/run.log"
(cd "$N" && git init -q . && git add tool.py .gitignore && git add -f forced.log && echo private.txt >> .git/info/exclude)
R --json push "$P" --to '~/nest' "${S[@]}"
[ $RC -eq 0 ] || fail "push nested: rc=$RC $(cat "$T/e")"
same_as_git "$P" "$SSHD_HOME/nest" "nested repository and submodule"
D=$SSHD_HOME/nest
[ -f "$D/tools/nested/forced.log" ] && [ -f "$D/third_party/lib/tracked.cache" ] || fail "files the inner indexes track are missing"
[ ! -e "$D/tools/nested/private.txt" ] || fail "the inner .git/info/exclude was not honoured"
[ ! -e "$D/.git" ] && [ ! -e "$D/tools/nested/.git" ] && [ ! -e "$D/third_party/lib/.git" ] || fail "a .git was sent"

echo "== 3. a split index, skip-worktree and core.ignorecase"
P=$T/index
mkdir -p "$P/src" "$P/data"
printf '*.bin\nDATA/\n' > "$P/.gitignore"
echo "a" > "$P/src/a.py"
echo "w" > "$P/weights.bin"
echo "s" > "$P/sparse.txt"
echo "r" > "$P/data/rows.csv"
(cd "$P" && git init -q . && git add .gitignore src sparse.txt && git add -f weights.bin && git commit -qm init &&
  git update-index --split-index && echo b > src/b.py && git add src/b.py &&
  git update-index --skip-worktree sparse.txt && git config core.ignorecase true)
ls "$P/.git" | grep -q '^sharedindex\.' || fail "the test repository has no split index"
R --json push "$P" --to '~/index' "${S[@]}"
[ $RC -eq 0 ] || fail "push split index: rc=$RC $(cat "$T/e")"
same_as_git "$P" "$SSHD_HOME/index" "split index, skip-worktree, core.ignorecase"
[ -f "$SSHD_HOME/index/weights.bin" ] && [ -f "$SSHD_HOME/index/src/b.py" ] && [ ! -e "$SSHD_HOME/index/data" ] ||
  fail "tracked-but-ignored, split-index or ignorecase files wrong: $(server_files "$SSHD_HOME/index" | tr '\n' ' ')"
[ "$(jq_get "$T/o" 'd["warnings"]')" = "[]" ] || fail "warnings: $(cat "$T/o")"

echo "== 4. a generated tree with several hundred patterns"
P=$T/gen
python3 - "$P" <<'PY'
import os, random, sys
root = sys.argv[1]
rng = random.Random(30)
names = ["a", "b", "build", "data", "x.log", "y.txt", "model.bin", "ckpt", "Cache", "logs", "deep", "n.py", ".hidden",
         "out", "w[1].csv", "sp ace", "tmp", "src"]
shapes = ["*.{}", "{}", "{}/", "/{}", "**/{}", "{}/**", "!{}", "*{}*", "{}?", "[ab]{}", "!*.{}", "{}/*/", "a/**/{}", "{}*/x",
          "!{}/", "\\#{}", "{}  ", "*/{}"]
files = []
for i in range(600):
    depth = rng.randint(1, 4)
    parts = [rng.choice(names) for _ in range(depth)]
    parts[-1] += str(rng.randint(0, 3))
    files.append(os.path.join(root, *parts))
for f in files:
    try:
        os.makedirs(os.path.dirname(f), exist_ok=True)
        if not os.path.exists(f):
            with open(f, "w") as out:
                out.write(f)
    except (FileExistsError, NotADirectoryError, IsADirectoryError):
        pass
count = 0
ignores = {}
for i in range(400):
    # Mostly specific names (a name and a digit, as the files have), some broad ones.
    name = rng.choice(names) + (str(rng.randint(0, 3)) if rng.random() < 0.75 else "")
    pat = rng.choice(shapes).replace("{}", name)
    where = root
    if rng.random() < 0.35:
        d = os.path.dirname(rng.choice(files))
        if os.path.isdir(d):
            where = d
    ignores.setdefault(where, []).append(pat)
    count += 1
for where, pats in ignores.items():
    with open(os.path.join(where, ".gitignore"), "w") as out:
        out.write("\n".join(pats) + "\n")
print(count, "patterns", file=sys.stderr)
PY
(cd "$P" && git init -q . && git add -A && git commit -qm gen && echo extra > untracked.py)
R --json push "$P" --to '~/gen' "${S[@]}"
[ $RC -eq 0 ] || fail "push generated: rc=$RC $(cat "$T/e")"
same_as_git "$P" "$SSHD_HOME/gen" "generated tree"
echo "   $(wc -l < "$T/got") files sent, as git lists them; $(cat "$P"/.gitignore "$P"/*/.gitignore 2>/dev/null | wc -l)+ patterns"

echo "== 5. the secret guard"
P=$T/secrets
mkdir -p "$P/deploy"
echo "print(1)" > "$P/train.py"
echo "WANDB_API_KEY=abc" > "$P/.env"
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----\n' > "$P/deploy/id_rsa"
(cd "$P" && git init -q . && git add -A && git commit -qm "secrets tracked by mistake")
R --json push "$P" --to '~/secrets' "${S[@]}"
[ $RC -eq 3 ] || fail "a push with id_rsa and .env: rc=$RC (want 3) $(cat "$T/o")"
[ "$(jq_get "$T/o" 'd["error"]["code"]')" = refused ] || fail "error code: $(cat "$T/o")"
[ "$(jq_get "$T/o" 'sorted(s["path"] for s in d["secrets"])')" = "['.env', 'deploy/id_rsa']" ] || fail "the list: $(cat "$T/o")"
[ ! -e "$SSHD_HOME/secrets" ] || fail "something was sent although the push was refused"
# The walk runs while the connection is made: a server that cannot be reached still gets the
# secrets' refusal first (nothing would have been sent either way).
R push "$P" --to '~/secrets' --host "root@127.0.0.1:1" --identity "$SSHD_KEY" --known-hosts "$SSHD_KNOWN_HOSTS"
[ $RC -eq 3 ] && grep -q "look like credentials" "$T/e" && ! grep -q "connection refused" "$T/e" || fail "refusal before the connection's error: rc=$RC $(cat "$T/e")"
R push "$P" --to '~/secrets' --allow-secret .env "${S[@]}"
[ $RC -eq 3 ] && grep -q "deploy/id_rsa" "$T/e" && ! grep -q "\.env (" "$T/e" || fail "--allow-secret .env: rc=$RC $(cat "$T/e")"
[ ! -e "$SSHD_HOME/secrets" ] || fail "something was sent although id_rsa is still refused"
R --json push "$P" --to '~/secrets' --allow-secret .env --allow-secret deploy "${S[@]}"
[ $RC -eq 0 ] || fail "both allowed: rc=$RC $(cat "$T/e")"
[ -f "$SSHD_HOME/secrets/.env" ] && [ -f "$SSHD_HOME/secrets/deploy/id_rsa" ] || fail "the allowed secrets did not arrive"
[ "$(jq_get "$T/o" 'sorted(s["path"] for s in d["secrets_sent"])')" = "['.env', 'deploy/id_rsa']" ] || fail "secrets_sent: $(cat "$T/o")"
R push "$P" --to '~/secrets' --allow-secret /etc/passwd "${S[@]}"
[ $RC -eq 2 ] || fail "--allow-secret outside the tree: rc=$RC $(cat "$T/e")"

echo "== 6. .git only with --with-git; the walk's warnings in the JSON"
P=$T/index
R --json push "$P" --to '~/nogit' "${S[@]}"
[ $RC -eq 0 ] && [ ! -e "$SSHD_HOME/nogit/.git" ] || fail ".git sent without --with-git: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" 'd["git"]["git_dir"]["bytes"] > 0 and d["git"]["git_dir"]["sent"] is False')" = True ] || fail "git_dir: $(cat "$T/o")"
R push "$P" --to '~/nogit' "${S[@]}"
grep -q "not sent (--with-git sends it)" "$T/o" || fail "the text does not say .git stayed: $(cat "$T/o")"
R --json push "$P" --to '~/withgit' --with-git "${S[@]}"
[ $RC -eq 0 ] && [ -f "$SSHD_HOME/withgit/.git/HEAD" ] || fail "--with-git did not send .git: $(cat "$T/e") $(cat "$T/o")"
[ "$(cd "$SSHD_HOME/withgit" && git rev-parse HEAD)" = "$(git -C "$P" rev-parse HEAD)" ] || fail "the sent .git is not the repository"
# A tree outside git with a symlinked .gitignore: not followed, and said in the JSON.
P=$T/plain
mkdir -p "$P"
echo "a" > "$P/a.txt"
echo "*.txt" > "$P/rules"
ln -s rules "$P/.gitignore"
R --json push "$P" --to '~/plain' "${S[@]}"
[ $RC -eq 0 ] || fail "push plain: rc=$RC $(cat "$T/e")"
[ "$(jq_get "$T/o" 'any("symbolic link" in w for w in d["warnings"]) and d["git"] is None')" = True ] || fail "warnings: $(cat "$T/o")"
echo "OK"
