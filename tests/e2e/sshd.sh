# SPDX-License-Identifier: MIT
# A throw-away OpenSSH server on 127.0.0.1 for tests (source this file; it is not a test).
#
#   source "$GPURENT_SOURCE_DIR/tests/e2e/sshd.sh"
#   sshd_start "$tmpdir/sshd"     # starts /usr/sbin/sshd -D on a free high port
#   ...                           # use the variables below
#   sshd_stop                     # kills it by PID (also register: trap sshd_stop EXIT)
#
# Before sshd_start, optionally:
#   SSHD_PATH_PREFIX=/dir         # prepended to PATH in every session (e.g. a fake nvidia-smi)
#   SSHD_HOME=/dir                # HOME and the starting directory of every session, so "~" on the
#                                 # "server" is a test directory (sshd itself always starts in the
#                                 # account's home: a ForceCommand changes directory, then runs the
#                                 # command as the login shell would)
#   SSHD_TMPDIR=/dir              # TMPDIR of every session (where a remote mktemp writes)
#   SSHD_COMMAND_LOG=/file        # (with SSHD_HOME) every command line the server is asked to run
#                                 # is appended to this file, as sshd received it
# After sshd_start:
#   SSHD_PORT SSHD_PID SSHD_DIR SSHD_USER SSHD_TARGET (user@127.0.0.1:port)
#   SSHD_KEY        ed25519 client key, no passphrase (authorized)
#   SSHD_KEY_PASS   ed25519 client key with passphrase $SSHD_PASSPHRASE (authorized)
#   SSHD_KEY_RSA    RSA 3072 client key, no passphrase (authorized)
#   SSHD_KEY_OTHER  ed25519 key that is NOT authorized
#   SSHD_KNOWN_HOSTS  an OpenSSH known_hosts file with this server's host key
#   SSHD_WRONG_KNOWN_HOSTS  the same host with a different (wrong) key
#   SSHD_FINGERPRINT  "SHA256:..." of the host key
# Key-only auth, its own host key, StrictModes no, UsePAM no, runs as the current user.
# Everything lives under the given directory; the env is also written to $SSHD_DIR/sshd.env.

sshd_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

sshd_start() {
  SSHD_DIR=$1
  mkdir -p "$SSHD_DIR"
  SSHD_DIR=$(cd "$SSHD_DIR" && pwd)
  SSHD_USER=$(id -un)
  SSHD_PASSPHRASE=gpurent-test-passphrase
  [ -d /run/sshd ] || mkdir -p /run/sshd 2>/dev/null || true   # sshd's compiled-in privsep dir
  ssh-keygen -q -t ed25519 -N '' -f "$SSHD_DIR/host_ed25519" -C gpurent-test-host
  ssh-keygen -q -t ed25519 -N '' -f "$SSHD_DIR/host_other" -C gpurent-test-wrong
  ssh-keygen -q -t ed25519 -N '' -f "$SSHD_DIR/client_ed25519" -C gpurent-test
  ssh-keygen -q -t ed25519 -N "$SSHD_PASSPHRASE" -f "$SSHD_DIR/client_ed25519_pass" -C gpurent-test-pass
  ssh-keygen -q -t rsa -b 3072 -N '' -f "$SSHD_DIR/client_rsa" -C gpurent-test-rsa
  ssh-keygen -q -t ed25519 -N '' -f "$SSHD_DIR/client_other" -C gpurent-test-unauthorized
  cat "$SSHD_DIR/client_ed25519.pub" "$SSHD_DIR/client_ed25519_pass.pub" "$SSHD_DIR/client_rsa.pub" > "$SSHD_DIR/authorized_keys"
  chmod 600 "$SSHD_DIR"/client_* "$SSHD_DIR"/host_* "$SSHD_DIR/authorized_keys"
  SSHD_PORT=$(sshd_free_port)
  local setenv=""
  if [ -n "${SSHD_PATH_PREFIX:-}" ]; then
    setenv="PATH=$SSHD_PATH_PREFIX:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
  fi
  if [ -n "${SSHD_TMPDIR:-}" ]; then
    mkdir -p "$SSHD_TMPDIR"
    setenv="$setenv TMPDIR=$SSHD_TMPDIR"
  fi
  if [ -n "${SSHD_HOME:-}" ]; then
    mkdir -p "$SSHD_HOME"
    setenv="$setenv HOME=$SSHD_HOME"
  fi
  [ -z "$setenv" ] || setenv="SetEnv $setenv"
  local force=""
  if [ -n "${SSHD_HOME:-}" ]; then
    force='ForceCommand '
    [ -z "${SSHD_COMMAND_LOG:-}" ] || force="$force"'printf "%s\n" "$SSH_ORIGINAL_COMMAND" >> '"$SSHD_COMMAND_LOG"'; '
    force="$force"'cd "$HOME" || exit 1; if [ -n "$SSH_ORIGINAL_COMMAND" ]; then eval "$SSH_ORIGINAL_COMMAND"; else exec "$SHELL" -l; fi'
  fi
  cat > "$SSHD_DIR/sshd_config" <<CFG
Port $SSHD_PORT
ListenAddress 127.0.0.1
AddressFamily inet
HostKey $SSHD_DIR/host_ed25519
PidFile $SSHD_DIR/sshd.pid
AuthorizedKeysFile $SSHD_DIR/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
# libssh2 1.10 signs RSA user keys with SHA-1 only (ssh-rsa), which OpenSSH 8.8+ refuses by default.
PubkeyAcceptedAlgorithms +ssh-rsa
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitEmptyPasswords no
UsePAM no
StrictModes no
X11Forwarding no
AllowTcpForwarding no
PrintMotd no
UseDNS no
MaxStartups 50
MaxSessions 50
LogLevel VERBOSE
Subsystem sftp /usr/lib/openssh/sftp-server
$setenv
$force
CFG
  sshd_launch || return 1
  SSHD_TARGET="$SSHD_USER@127.0.0.1:$SSHD_PORT"
  SSHD_KEY=$SSHD_DIR/client_ed25519
  SSHD_KEY_PASS=$SSHD_DIR/client_ed25519_pass
  SSHD_KEY_RSA=$SSHD_DIR/client_rsa
  SSHD_KEY_OTHER=$SSHD_DIR/client_other
  SSHD_KNOWN_HOSTS=$SSHD_DIR/known_hosts
  SSHD_WRONG_KNOWN_HOSTS=$SSHD_DIR/known_hosts_wrong
  echo "[127.0.0.1]:$SSHD_PORT $(cut -d' ' -f1,2 "$SSHD_DIR/host_ed25519.pub")" > "$SSHD_KNOWN_HOSTS"
  echo "[127.0.0.1]:$SSHD_PORT $(cut -d' ' -f1,2 "$SSHD_DIR/host_other.pub")" > "$SSHD_WRONG_KNOWN_HOSTS"
  SSHD_FINGERPRINT=$(ssh-keygen -lf "$SSHD_DIR/host_ed25519.pub" | cut -d' ' -f2)
  {
    for v in SSHD_PORT SSHD_PID SSHD_DIR SSHD_USER SSHD_TARGET SSHD_KEY SSHD_KEY_PASS SSHD_KEY_RSA SSHD_KEY_OTHER \
             SSHD_KNOWN_HOSTS SSHD_WRONG_KNOWN_HOSTS SSHD_FINGERPRINT SSHD_PASSPHRASE; do
      echo "$v=${!v}"
    done
  } > "$SSHD_DIR/sshd.env"
}

# Starts sshd with $SSHD_DIR/sshd_config and waits until it listens.
sshd_launch() {
  /usr/sbin/sshd -D -f "$SSHD_DIR/sshd_config" -E "$SSHD_DIR/sshd.log" &
  SSHD_PID=$!
  local i
  for i in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$SSHD_PORT") 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$SSHD_PID" 2>/dev/null; then
      echo "sshd.sh: sshd exited at start:" >&2
      cat "$SSHD_DIR/sshd.log" >&2
      return 1
    fi
    sleep 0.05
  done
}

# Restarts the server on the same port with a new host key of TYPE (ecdsa, rsa, ed25519) as its
# only host key: SSHD_OLD_FINGERPRINT keeps the fingerprint before, SSHD_FINGERPRINT is the new one.
sshd_restart_with_host_key() {
  local key="$SSHD_DIR/host_$1_new"
  rm -f "$key" "$key.pub"
  ssh-keygen -q -t "$1" -N '' -f "$key" -C gpurent-test-host-new
  chmod 600 "$key"
  sed -i "s|^HostKey .*|HostKey $key|" "$SSHD_DIR/sshd_config"
  sshd_stop
  sshd_launch || return 1
  SSHD_OLD_FINGERPRINT=$SSHD_FINGERPRINT
  SSHD_FINGERPRINT=$(ssh-keygen -lf "$key.pub" | cut -d' ' -f2)
}

# The per-connection sshd processes (children of the listener), e.g. to cut a transfer.
sshd_connection_pids() {
  pgrep -P "$SSHD_PID" || true
}

sshd_stop() {
  if [ -n "${SSHD_PID:-}" ]; then
    local c
    for c in $(pgrep -P "$SSHD_PID" 2>/dev/null); do kill "$c" 2>/dev/null || true; done
    kill "$SSHD_PID" 2>/dev/null || true
    wait "$SSHD_PID" 2>/dev/null || true
    SSHD_PID=
  fi
}

# OpenSSH client options matching the fixture (for scp/sftp/rsync comparisons).
sshd_ssh_opts() {
  echo "-p $SSHD_PORT -i $SSHD_KEY -o IdentitiesOnly=yes -o UserKnownHostsFile=$SSHD_KNOWN_HOSTS -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR"
}
