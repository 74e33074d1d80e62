# SPDX-License-Identifier: MIT
# A destination that fills up, for the disk-full tests (source this file; it is not a test).
#
#   small_disk DIR MIB     a tmpfs of MIB MiB mounted at DIR (as root), its path in $MOUNTED for
#                          the caller's cleanup to unmount; without root, DIR stays a plain
#                          directory and run_limited gives the command a file size limit of MIB
#                          MiB instead (writes past it fail with EFBIG, SIGXFSZ ignored)
#   run_limited CMD...     runs CMD under that limit (or as it is, on the tmpfs)
#   disk_full_backup SRC DEST BIG_BYTES [ARGS...]
#                          the disk-full case of `gpurent backup` (needs G_ARGS, the SSH flags,
#                          and fail()): a first backup of SRC (one.txt) to DEST on the small disk,
#                          then one.txt changed and a BIG_BYTES file added, and a backup with ARGS
#                          that must exit 1 saying the disk is full, leave the manifest and the
#                          previous copy as they were, and publish nothing of the big file
small_disk() {
  mkdir -p "$1"
  SMALL_DISK_KIB=$(($2 * 1024))
  if mount -t tmpfs -o "size=${2}m" tmpfs "$1" 2>/dev/null; then
    MOUNTED=$1
    SMALL_DISK_LIMITED=0
  else
    SMALL_DISK_LIMITED=1
  fi
}
run_limited() {
  if [ "${SMALL_DISK_LIMITED:-0}" = 1 ]; then
    (trap '' XFSZ; ulimit -f "$SMALL_DISK_KIB"; exec "$@")
  else
    "$@"
  fi
}

disk_full_backup() {
  local src=$1 dest=$2 big=$3 before rc err
  shift 3
  err=$(mktemp)
  echo one > "$src/one.txt"
  run_limited "$GPURENT_BIN" backup "${G_ARGS[@]}" "$src" --to "$dest" --json > /dev/null
  before=$(sha256sum "$dest/.gpurent-manifest.json")
  echo two > "$src/one.txt"
  head -c "$big" /dev/urandom > "$src/zz_big.bin"
  set +e
  run_limited "$GPURENT_BIN" backup "${G_ARGS[@]}" "$src" --to "$dest" "$@" > /dev/null 2> "$err"; rc=$?
  set -e
  [ $rc -eq 1 ] || fail "disk full: exit $rc $(cat "$err")"
  grep -q "full\|too large" "$err" || fail "disk full message: $(cat "$err")"
  [ "$(sha256sum "$dest/.gpurent-manifest.json")" = "$before" ] || fail "manifest changed on a failed run"
  [ "$(cat "$dest/one.txt")" = one ] || fail "previous copy damaged"
  [ ! -e "$dest/zz_big.bin" ] || fail "partial data published"
  rm -f "$err"
}
