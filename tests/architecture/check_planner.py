#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The planner's boundary (docs/ARCHITECTURE.md), checked on the sources as text.

Usage: check_planner.py ROOT  (the checkout; exit 0 when every rule holds, 1 with one line per
breach). Rules:
  1. cli/ reaches the planner only through its entry point and the report it returns:
     planner/plan.hpp, planner/plan_report.hpp, planner/job_request.hpp.
  2. sizing/, providers/, common/, oom/ and sync/ never include planner/ (it depends on them).
  3. planner/ includes only planner/, sizing/, providers/ and common/ (no cli/, oom/, sync/).
  4. No ranking, speed, job time, card verdict, fix, recipe or launch-line code outside planner/:
     none of its functions is defined or called there, and none of its old files is left in
     providers/ or sizing/. tests/ and fuzz/ exercise the internals on purpose and are not read.
"""
import re
import sys
from pathlib import Path

ENTRY = {"planner/plan.hpp", "planner/plan_report.hpp", "planner/job_request.hpp"}
BELOW = ("sizing", "providers", "common", "oom", "sync")
PLANNER_MAY_INCLUDE = ("planner/", "sizing/", "providers/", "common/")
# The planner's internal functions: the decision that must be made in one place.
INTERNAL = ("rank", "estimate_speed", "speed_load", "speed_figures", "speed_range_pct", "speed_engine",
            "startup_time", "work_seconds", "tokens_per_dollar", "run_on", "job_for_gpus", "gpus_feasible",
            "default_shard", "expand_offers", "suggest_fixes", "find_recipe", "launch_commands",
            "training_command", "torchtune_config", "add_fixes_and_recipe", "add_layout_defaults", "sold_counts")
CALL = re.compile(r"(?<![\w.>:])(?:gpurent::)?(" + "|".join(INTERNAL) + r")\s*\(")
# The files that moved into planner/ (a file of that name back in its old folder is a breach).
OLD = re.compile(r"^(providers/(plan|speed|speed_constants|job_time|card_run)|"
                 r"sizing/(recipe|recipe_\w+|fixes|fixes_\w+|launch|launch_\w+))\.(hpp|cpp)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def code_only(text: str) -> str:
    """The text without comments and string literals (a name in a comment or a message is no call)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'R"(\w*)\((?:.|\n)*?\)\1"', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)


def breaches(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".h", ".cc") or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        top = rel.split("/", 1)[0]
        if top in ("tests", "fuzz", "build") or top.startswith("build-") or top.startswith("."):
            continue
        if OLD.match(rel):
            out.append(f"{rel}: planner code left outside planner/ (it lives in planner/)")
        text = path.read_text(errors="replace")
        includes = INCLUDE.findall(text)
        for inc in includes:
            if top == "cli" and inc.startswith("planner/") and inc not in ENTRY:
                out.append(f"{rel}: includes {inc}, a planner internal; cli/ may include only "
                           f"{', '.join(sorted(ENTRY))}")
            if top in BELOW and inc.startswith("planner/"):
                out.append(f"{rel}: includes {inc}; {top}/ must not depend on planner/")
            if top == "planner" and not inc.startswith(PLANNER_MAY_INCLUDE):
                out.append(f"{rel}: includes {inc}; planner/ may include only planner/, sizing/, providers/, common/")
        if top != "planner":
            code = code_only(text)
            for m in CALL.finditer(code):
                line = code[: m.start()].count("\n") + 1
                out.append(f"{rel}:{line}: {m.group(1)}( outside planner/ (ranking, speed, fixes, recipe and "
                           f"launch lines are the planner's: call plan() or plan_on_card())")
    return out


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: check_planner.py ROOT", file=sys.stderr)
        return 2
    root = Path(sys.argv[1])
    if not (root / "planner").is_dir():
        print(f"{root}: no planner/ folder", file=sys.stderr)
        return 1
    found = breaches(root)
    for b in found:
        print(b)
    print(f"planner boundary: {len(found)} breach(es)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
