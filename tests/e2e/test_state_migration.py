# SPDX-License-Identifier: MIT
"""The state database migrates forward: a database written by a gpurent with schema version 1
(servers, events, backups; no doctor observations) is upgraded to the latest version in place the first
time a newer gpurent opens it, keeping every record; a database from a newer gpurent is refused
(exit 3) and left untouched. Python's sqlite3 writes the old database directly."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

BIN = os.environ["GPURENT_BIN"]
FAILS = []

# Schema version 1 exactly as it shipped (providers/state/sqlite_state_store.cpp, migration 0 -> 1).
V1 = """
CREATE TABLE schema_version(version INTEGER NOT NULL);
CREATE TABLE servers(
  id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, provider TEXT NOT NULL,
  provider_id TEXT NOT NULL DEFAULT '', card TEXT NOT NULL, gpus INTEGER NOT NULL, spot INTEGER NOT NULL,
  attached INTEGER NOT NULL, region TEXT NOT NULL DEFAULT '', price_micro INTEGER NOT NULL, currency TEXT NOT NULL,
  increment_s INTEGER NOT NULL, minimum_s INTEGER NOT NULL, deploy_s INTEGER NOT NULL, terms_json TEXT NOT NULL,
  ssh_user TEXT NOT NULL DEFAULT 'root', host TEXT NOT NULL DEFAULT '', port INTEGER NOT NULL DEFAULT 22,
  host_key TEXT NOT NULL DEFAULT '', status TEXT NOT NULL, status_since INTEGER NOT NULL, created_at INTEGER NOT NULL,
  last_change INTEGER NOT NULL, closed INTEGER NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX servers_open_name ON servers(name) WHERE closed = 0;
CREATE TABLE events(id INTEGER PRIMARY KEY AUTOINCREMENT, server_id INTEGER NOT NULL REFERENCES servers(id),
  at INTEGER NOT NULL, status TEXT NOT NULL, note TEXT NOT NULL DEFAULT '');
CREATE INDEX events_server ON events(server_id, id);
CREATE TABLE backups(id INTEGER PRIMARY KEY AUTOINCREMENT, server_id INTEGER NOT NULL REFERENCES servers(id),
  at INTEGER NOT NULL, manifest TEXT NOT NULL, verified INTEGER NOT NULL, files INTEGER NOT NULL, bytes INTEGER NOT NULL);
CREATE INDEX backups_server ON backups(server_id, at);
INSERT INTO schema_version(version) VALUES(1);
"""


def check(cond, what, extra=""):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what, extra, file=sys.stderr)


def write_v1(db_path, started):
    db = sqlite3.connect(db_path)
    db.executescript(V1)
    terms = json.dumps({"stopped": {"available": True, "bills_full_rate": False, "fixed_per_hour": 10000},
                        "hibernated": {"available": False, "unavailable_reason": "no hibernate"},
                        "destroy_loses": "everything", "workspace_dir": "/workspace"})
    db.execute("INSERT INTO servers(name, provider, provider_id, card, gpus, spot, attached, price_micro, currency, "
               "increment_s, minimum_s, deploy_s, terms_json, host, status, status_since, created_at, last_change) "
               "VALUES('old1', 'runpod', 'pod-1', 'rtx-4090', 1, 0, 0, 600000, 'USD', 1, 0, 0, ?, '10.0.0.1', "
               "'running', ?, ?, ?)", (terms, started, started, started))
    db.execute("INSERT INTO events(server_id, at, status, note) VALUES(1, ?, 'creating', 'recorded')", (started,))
    db.execute("INSERT INTO events(server_id, at, status, note) VALUES(1, ?, 'running', 'SSH answered')",
               (started + 60,))
    db.commit()
    db.close()


def main():
    tmp = tempfile.mkdtemp(prefix="gpurent-migrate-")
    try:
        state = os.path.join(tmp, "state")
        os.makedirs(state, mode=0o700)
        db_path = os.path.join(state, "state.db")
        started = int(time.time()) - 3600
        write_v1(db_path, started)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "NO_COLOR": "1",
               "XDG_CONFIG_HOME": os.path.join(tmp, "config"), "XDG_CACHE_HOME": os.path.join(tmp, "cache"),
               "GPURENT_STATE_DIR": state}
        p = subprocess.run([BIN, "status", "--json"], env=env, capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "status opens a version-1 database", p.stderr)
        doc = json.loads(p.stdout) if p.returncode == 0 else {}
        rows = doc.get("instances", [])
        check(len(rows) == 1 and rows[0]["name"] == "old1" and rows[0]["state"] == "running",
              "the old record survives the migration", p.stdout)
        check(rows and rows[0].get("idle") is None and not any("idle GPU" in w for w in rows[0]["warnings"]),
              "no doctor data: no idle warning", p.stdout)
        check(rows and 0.59 <= rows[0]["accrued_cost"] <= 0.62, "the old ledger still bills", p.stdout)
        db = sqlite3.connect(db_path)
        version = db.execute("SELECT version FROM schema_version").fetchone()[0]
        check(version >= 3, "schema version is now at least 3", str(version))
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        check("doctor_observations" in tables, "the doctor_observations table exists", str(tables))
        columns = {r[1] for r in db.execute("PRAGMA table_info(servers)")}
        check({"ssh_identity", "ssh_known_hosts", "provider_state", "trouble", "trouble_detail",
               "unreachable_since"} <= columns, "migration 3 added the server columns", str(columns))
        check(db.execute("SELECT ssh_identity, trouble, unreachable_since FROM servers").fetchall() == [("", "", None)],
              "the old server gets empty defaults")
        check("jobs" in tables, "the jobs table exists", str(tables))
        check("autostop" in tables and version >= 5, "migration 5 added the autostop table", str(tables))
        job_columns = {r[1] for r in db.execute("PRAGMA table_info(jobs)")}
        check(version >= 6 and {"git_commit", "git_dirty"} <= job_columns, "migration 6 added the jobs' commit", str(job_columns))
        server_columns = {r[1] for r in db.execute("PRAGMA table_info(servers)")}
        check(version >= 7 and {"group_name", "group_rank"} <= server_columns, "migration 7 added server groups",
              str(server_columns))
        check(version == 8, "schema version is now 8", str(version))
        push_columns = {r[1] for r in db.execute("PRAGMA table_info(push_dirs)")}
        check({"server_id", "remote_dir", "first_at", "last_at"} <= push_columns, "migration 8 added push_dirs",
              str(push_columns))
        plan_columns = {r[1] for r in db.execute("PRAGMA table_info(backup_plans)")}
        check({"server_id", "remote_paths_json", "dest", "given_paths_json", "given_to", "started_at"} <= plan_columns,
              "migration 8 added backup_plans", str(plan_columns))
        check(db.execute("SELECT count(*) FROM push_dirs").fetchone()[0] == 0 and
              db.execute("SELECT count(*) FROM backup_plans").fetchone()[0] == 0, "an old database has no push dirs or plans")
        check(db.execute("PRAGMA journal_mode").fetchone()[0] == "wal", "still in WAL mode")
        check(db.execute("SELECT count(*) FROM events").fetchone()[0] == 2, "the ledger events are kept")
        db.close()
        # Opening it again is a no-op.
        p = subprocess.run([BIN, "status", "--json"], env=env, capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "a second open of the migrated database", p.stderr)

        # A database from a newer gpurent is refused and left as it is.
        db = sqlite3.connect(db_path)
        db.execute("UPDATE schema_version SET version=99")
        db.commit()
        db.close()
        p = subprocess.run([BIN, "status", "--json"], env=env, capture_output=True, text=True, timeout=60)
        check(p.returncode == 3 and "newer than this gpurent knows" in p.stderr, "a newer schema is refused",
              p.stderr)
        check(json.loads(p.stdout)["error"]["code"] == "refused", "the error document on stdout when refused", p.stdout)
        db = sqlite3.connect(db_path)
        check(db.execute("SELECT version FROM schema_version").fetchall() == [(99,)], "the newer database is untouched")
        db.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print("%d check(s) failed" % len(FAILS), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
