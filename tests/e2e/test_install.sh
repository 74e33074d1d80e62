#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `cmake --install` into a temporary prefix: the binary finds its IO module there, `man -l`
# renders the installed gpurent(1), the completions are where bash, zsh and fish look. And
# --version: the commit of the tree it was built from, and a tree without .git still configures
# and writes its build info ("unknown" commit), rewritten only when it changes.
set -euo pipefail
: "${GPURENT_BIN:?}" "${GPURENT_SOURCE_DIR:?}"
T=$(mktemp -d /tmp/gpurent-install-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
BUILD=$(dirname "$GPURENT_BIN")
export HOME=$T/home XDG_CONFIG_HOME=$T/config XDG_STATE_HOME=$T/state XDG_CACHE_HOME=$T/cache
unset GPURENT_IO_MODULE GPURENT_CONFIG
mkdir -p "$HOME"

echo "== cmake --install into a prefix"
cmake --install "$BUILD" --prefix "$T/prefix" >"$T/install.log" 2>&1 || fail "install: $(cat "$T/install.log")"
for f in bin/gpurent lib/gpurent/libgpurent_io.so share/man/man1/gpurent.1 share/bash-completion/completions/gpurent \
         share/zsh/site-functions/_gpurent share/fish/vendor_completions.d/gpurent.fish; do
  [ -s "$T/prefix/$f" ] || fail "not installed: $f"
done

echo "== the installed binary runs, and loads its IO module from PREFIX/lib/gpurent"
"$T/prefix/bin/gpurent" --version | grep -q "^gpurent " || fail "--version"
GPURENT_STATE_DIR=$T/state/gpurent "$T/prefix/bin/gpurent" status --json >"$T/status.json" || fail "status (IO module)"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["instances"] == []' "$T/status.json" || fail "status JSON"

echo "== man -l renders the installed page; man finds it on the prefix's MANPATH"
MANWIDTH=80 MANPAGER=cat man -l "$T/prefix/share/man/man1/gpurent.1" >"$T/man.txt" 2>"$T/man.err" || fail "man -l: $(cat "$T/man.err")"
grep -q "GPURENT(1)" "$T/man.txt" && grep -q "gpurent completion" "$T/man.txt" && grep -q "EXIT STATUS" "$T/man.txt" ||
  fail "man page text: $(head -20 "$T/man.txt")"
[ "$(MANPATH=$T/prefix/share/man man -w gpurent)" = "$T/prefix/share/man/man1/gpurent.1" ] || fail "man -w gpurent"
cmp -s "$T/prefix/share/man/man1/gpurent.1" <("$GPURENT_BIN" man) || fail "the installed page is not what gpurent man prints"

echo "== the installed bash completion registers itself"
bash -c "source '$T/prefix/share/bash-completion/completions/gpurent' && complete -p gpurent" | grep -q "_gpurent" ||
  fail "bash completion"

echo "== --version names the commit of the tree"
version=$("$GPURENT_BIN" --version)
if command -v git >/dev/null && [ "$(git -C "$GPURENT_SOURCE_DIR" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$GPURENT_SOURCE_DIR" && pwd -P)" ]; then
  # The commit the binary was built from (HEAD, unless committed since the last build).
  commit=$(sed -n 's/.*(commit \([0-9a-f]\{12\}\)\(-dirty\)\{0,1\}, built [0-9-]*)$/\1/p' <<<"$version")
  [ -n "$commit" ] && git -C "$GPURENT_SOURCE_DIR" cat-file -e "$commit^{commit}" ||
    fail "--version '$version' does not name a commit of the tree"
fi

echo "== build info without git: commit unknown, the file rewritten only when it changes"
mkdir -p "$T/nogit"
SOURCE_DATE_EPOCH=0 cmake -DSOURCE_DIR="$T/nogit" -DOUTPUT="$T/bi.cpp" -DVERSION=9.9.9 -P "$GPURENT_SOURCE_DIR/cmake/BuildInfo.cmake"
grep -q 'BuildInfo{"9.9.9", "unknown", "1970-01-01"}' "$T/bi.cpp" || fail "build info: $(cat "$T/bi.cpp")"
touch -d '2000-01-01' "$T/bi.cpp"
SOURCE_DATE_EPOCH=0 cmake -DSOURCE_DIR="$T/nogit" -DOUTPUT="$T/bi.cpp" -DVERSION=9.9.9 -P "$GPURENT_SOURCE_DIR/cmake/BuildInfo.cmake"
[ "$(stat -c %Y "$T/bi.cpp")" = "$(date -d 2000-01-01 +%s)" ] || fail "an unchanged build info file was rewritten"

echo "== a source tree without .git configures"
mkdir -p "$T/src"
tar -C "$GPURENT_SOURCE_DIR" --exclude=.git --exclude='./build*' -cf - . | tar -C "$T/src" -xf -
cmake -S "$T/src" -B "$T/src-build" -G Ninja -DGPURENT_TESTS=OFF >"$T/configure.log" 2>&1 || fail "configure: $(tail -20 "$T/configure.log")"
grep -q '"unknown"' "$T/src-build/cli/build_info.cpp" || fail "no .git: $(cat "$T/src-build/cli/build_info.cpp")"
echo "ok"
