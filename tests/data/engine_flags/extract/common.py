"""Shared helpers for the engine_flags extractors.

Every extractor reads an engine's source from a bare git mirror (git show REV:PATH)
and writes tests/data/engine_flags/<engine>.json in one fixed format:

{"engine", "release", "commit", "repository", "sources", "commands",
 "flags": {"--flag": {"aliases": [...], "takes_value": bool, "choices": [...]|null, ...extra}},
 "env": {...}, "notes": "..."}
"""
import json
import os
import subprocess

OUT_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
MIRRORS = os.environ.get("MIRRORS", "")
if not MIRRORS:
    raise SystemExit("set MIRRORS to the folder that holds the engines' bare git snapshots (<owner>+<name>/repo)")


def git(mirror, *args):
    gd = os.path.join(MIRRORS, mirror, "repo")
    return subprocess.run(["git", "--git-dir", gd, *args], check=True, capture_output=True,
                          text=True).stdout


def show(mirror, rev, path):
    return git(mirror, "show", f"{rev}:{path}")


def tag_commit(mirror, tag):
    return git(mirror, "rev-parse", f"{tag}^{{commit}}").strip()


def flag(aliases=(), takes_value=True, choices=None, **extra):
    d = {"aliases": list(aliases), "takes_value": takes_value,
         "choices": list(choices) if choices is not None else None}
    d.update(extra)
    return d


def write(engine, release, commit, repository, sources, commands, flags, env, notes, **extra):
    doc = {"engine": engine, "release": release, "commit": commit, "repository": repository,
           "sources": sources, "commands": commands, "flags": flags, "env": env, "notes": notes}
    doc.update(extra)
    path = os.path.join(OUT_DIR, f"{engine}.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"wrote {path}: {len(flags)} flags")


def argparse_flags(src, func_filter=None):
    """Options of every `<x>.add_argument("--a", "-b", ...)` call in a Python source (via ast).

    action store_true/store_false/store_const/count/help -> takes_value False;
    argparse.BooleanOptionalAction -> also adds --no-<name>; choices kept when literal.
    """
    import ast
    tree = ast.parse(src)
    out = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        opts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        opts = [o for o in opts if o.startswith("-")]
        if not opts:
            continue
        kw = {k.arg: k.value for k in node.keywords}
        action = kw.get("action")
        action_s = ast.unparse(action) if action is not None else ""
        takes_value = not any(x in action_s for x in ("store_true", "store_false", "store_const", "count",
                                                      "BooleanOptionalAction", "'help'", "version"))
        extra = {}
        if "nargs" in kw:
            try:
                n = ast.literal_eval(kw["nargs"])
            except ValueError:
                n = ast.unparse(kw["nargs"])
            if n == "?":
                takes_value, extra["value_optional"] = False, True
            elif n == 0:
                takes_value = False
            else:
                extra["nargs"] = n
        choices = None
        if "choices" in kw:
            try:
                choices = [str(c) for c in ast.literal_eval(kw["choices"])]
            except ValueError:
                extra["choices_expr"] = ast.unparse(kw["choices"])
        longs = [o for o in opts if o.startswith("--")]
        canon = longs[0] if longs else opts[0]
        aliases = [o for o in opts if o != canon]
        if "BooleanOptionalAction" in action_s:
            aliases += ["--no-" + l[2:] for l in longs]
        out[canon] = flag(aliases, takes_value, choices, **extra)
    return out
