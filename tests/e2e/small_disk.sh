# SPDX-License-Identifier: MIT
# A destination that fills up, for the disk-full tests (source this file; it is not a test).
#
#   small_disk DIR MIB     a tmpfs of MIB MiB mounted at DIR (as root), its path in $MOUNTED for
#                          the caller's cleanup to unmount; without root, DIR stays a plain
#                          directory and run_limited gives the command a file size limit of MIB
#                          MiB instead (writes past it fail with EFBIG, SIGXFSZ ignored)
#   run_limited CMD...     runs CMD under that limit (or as it is, on the tmpfs)
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
