#!/usr/bin/env python3
"""The `swift test --filter` pattern naming every suite with a tag: `.unit` for `make test-unit`,
`.budget` for the budget suites `make test` runs last and alone (scripts/test-shards.sh).

    scripts/tagged-suites.py [ROOT]             print the pattern of `.unit` (one regular expression)
    scripts/tagged-suites.py --tag budget       the same for another tag (unit, live, process, budget)
    scripts/tagged-suites.py --list [--tag=T]   print the suites, one `Target.Suite` a line

Swift Testing filters by name only (`--filter`/`--skip`; no tag filter in Swift 6.3), so the
tags in the sources are read here: a suite is `@Suite(… .tags(.unit …) …)` followed by its
`struct`/`final class`. `.unit` means no database and no process spawned (PoiTestSupport's Tags).
Exits 1 when a suite holding tests carries no tag at all, so a new suite cannot go unclassified.
"""
import glob, os, re, sys

import argparse

parser = argparse.ArgumentParser(description="The --filter pattern naming every suite with a tag.")
parser.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                    help="the checkout (default: this one)")
parser.add_argument("--tag", default="unit", choices=["unit", "live", "process", "budget"],
                    help="the tag (PoiTestSupport's Tags; default unit)")
parser.add_argument("--list", action="store_true", help="the suites, one Target.Suite a line")
options = parser.parse_args()
TAG, root = options.tag, options.root
if not os.path.isdir(os.path.join(root, "Tests")):
    sys.exit(f"tagged-suites: {root} has no Tests folder")
SUITE = re.compile(r"^@Suite\b(?P<attrs>[^\n]*)\n?(?:@\w+[^\n]*\n)*(?:public |final |private |fileprivate )*(?:final )?"
                   r"(?:struct|class|enum) (?P<name>\w+)", re.M)
TOP = re.compile(r"^(?:@Suite\b[^\n]*\s)?(?:final class|struct|enum|class) (\w+)[^{\n]*\{\s*$", re.M)

unit, untagged = [], []
for path in sorted(glob.glob(os.path.join(root, "Tests", "Poi*Tests", "*.swift"))):
    target = os.path.basename(os.path.dirname(path))
    text = open(path, encoding="utf-8").read()
    tagged = {}
    for m in SUITE.finditer(text):
        tagged[m.group("name")] = m.group("attrs")
    # every top-level type whose body holds a @Test is a suite and must carry tags
    for m in TOP.finditer(text):
        end = text.find("\n}\n", m.end())
        body = text[m.end(): end if end >= 0 else len(text)]
        if "@Test" not in body:
            continue
        attrs = tagged.get(m.group(1))
        if attrs is None or ".tags(" not in attrs:
            untagged.append(f"{os.path.relpath(path, root)}: suite {m.group(1)} has no .tags(...)")
        elif re.search(r"\.tags\([^)]*\." + TAG + r"\b", attrs):
            unit.append(f"{target}.{m.group(1)}")

if untagged:
    print("\n".join(untagged), file=sys.stderr)
    sys.exit(1)
if options.list:
    print("\n".join(unit))
else:
    # A test's id is `Target.Suite/test(…)`: the suite's name, then its end or a "/".
    print("^(" + "|".join(re.escape(u) for u in unit) + ")(/|$)")
