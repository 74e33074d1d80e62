#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Packs and unpacks the committed fuzz corpora, fuzz/corpus/<target>_seed_corpus.zip.

Each target's corpus is one zip (OSS-Fuzz's <target>_seed_corpus.zip convention) of flat files,
so that the repository does not track tens of thousands of small files. The zips are written
deterministically: entries sorted by name, a fixed timestamp (1980-01-01 00:00:00), fixed Unix
permissions (0644) and deflate level 9, so packing the same files gives the same archive.
Nothing reads fuzz/corpus/<target>/ any more: the test build unpacks each zip into its build
tree (fuzz/CMakeLists.txt), scripts/fuzz.sh into build-fuzz/ (and re-packs the minimised corpus
with `pack` when given --update-corpus). See docs/fuzzing.md.

Usage:
  fuzz/pack_corpus.py pack DIR ZIP        write ZIP from the files directly in DIR (replaces ZIP)
  fuzz/pack_corpus.py unpack ZIP DIR      extract ZIP into DIR (created when missing)
  fuzz/pack_corpus.py add ZIP FILE...     add seed files (named by their base name) and re-pack
  fuzz/pack_corpus.py list ZIP            print the entry names, one a line
  fuzz/pack_corpus.py check ZIP...        verify the archives: flat, sorted, unique names, fixed
                                          timestamp and mode, CRCs; exit 1 when one is not
"""
import os
import sys
import tempfile
import zipfile

DATE_TIME = (1980, 1, 1, 0, 0, 0)
MODE = 0o100644  # a regular file, rw-r--r--
LEVEL = 9


def valid_name(name):
    return (name not in ("", ".", "..") and "/" not in name and "\\" not in name and "\0" not in name)


def write_zip(path, entries):
    """entries: {name: bytes}. Writes path atomically, in canonical form."""
    for name in entries:
        if not valid_name(name):
            raise SystemExit(f"pack_corpus: {name!r} is not a plain file name")
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".pack_corpus-", suffix=".zip", dir=directory)
    try:
        with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w") as z:
            for name in sorted(entries, key=lambda n: n.encode()):
                info = zipfile.ZipInfo(name, date_time=DATE_TIME)
                info.create_system = 3  # Unix, so that external_attr is read as a mode
                info.external_attr = MODE << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, entries[name], compress_type=zipfile.ZIP_DEFLATED, compresslevel=LEVEL)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_zip(path):
    entries = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if info.is_dir() or not valid_name(info.filename):
                raise SystemExit(f"pack_corpus: {path}: {info.filename!r} is not a plain file name")
            entries[info.filename] = z.read(info)
    return entries


def read_dir(directory):
    entries = {}
    for name in sorted(os.listdir(directory)):
        p = os.path.join(directory, name)
        if os.path.isdir(p):
            raise SystemExit(f"pack_corpus: {p} is a directory; a corpus is flat")
        with open(p, "rb") as f:
            entries[name] = f.read()
    return entries


def pack(directory, path):
    if not os.path.isdir(directory):
        raise SystemExit(f"pack_corpus: {directory} is not a directory")
    entries = read_dir(directory)
    write_zip(path, entries)
    print(f"pack_corpus: {path}: {len(entries)} files", file=sys.stderr)


def unpack(path, directory):
    entries = read_zip(path)
    os.makedirs(directory, exist_ok=True)
    for name, data in entries.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
    print(f"pack_corpus: {directory}: {len(entries)} files from {path}", file=sys.stderr)


def add(path, files):
    entries = read_zip(path) if os.path.exists(path) else {}
    added = 0
    for p in files:
        name = os.path.basename(p)
        with open(p, "rb") as f:
            data = f.read()
        if name in entries:
            if entries[name] != data:
                raise SystemExit(f"pack_corpus: {path} already holds a different {name}; rename the seed")
            continue
        entries[name] = data
        added += 1
    write_zip(path, entries)
    print(f"pack_corpus: {path}: {added} added, {len(entries)} files", file=sys.stderr)


def check(paths):
    bad = 0
    for path in paths:
        problems = []
        try:
            with zipfile.ZipFile(path) as z:
                infos = z.infolist()
                names = [i.filename for i in infos]
                if names != sorted(names, key=lambda n: n.encode()):
                    problems.append("entries are not sorted by name")
                if len(set(names)) != len(names):
                    problems.append("an entry name is repeated")
                for i in infos:
                    if i.is_dir() or not valid_name(i.filename):
                        problems.append(f"{i.filename!r} is not a plain file name")
                    if i.date_time != DATE_TIME:
                        problems.append(f"{i.filename}: timestamp {i.date_time}, not {DATE_TIME}")
                    if i.external_attr >> 16 != MODE:
                        problems.append(f"{i.filename}: mode {oct(i.external_attr >> 16)}, not {oct(MODE)}")
                broken = z.testzip()
                if broken is not None:
                    problems.append(f"{broken}: bad CRC")
        except (OSError, zipfile.BadZipFile) as e:
            problems.append(str(e))
        for p in problems[:10]:
            print(f"pack_corpus: {path}: {p}", file=sys.stderr)
        if problems:
            bad += 1
            print(f"pack_corpus: {path}: not canonical; re-pack it: fuzz/pack_corpus.py unpack ZIP DIR && "
                  "fuzz/pack_corpus.py pack DIR ZIP", file=sys.stderr)
        else:
            print(f"pack_corpus: {path}: {len(names)} files, ok")
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(argv) == 4 and argv[1] == "pack":
        pack(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "unpack":
        unpack(argv[2], argv[3])
    elif len(argv) >= 4 and argv[1] == "add":
        add(argv[2], argv[3:])
    elif len(argv) == 3 and argv[1] == "list":
        for name in read_zip(argv[2]):
            print(name)
    elif len(argv) >= 3 and argv[1] == "check":
        return check(argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
