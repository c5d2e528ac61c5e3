#!/usr/bin/env python3
"""Counts each library crate's public API from rustdoc's JSON output.

    python3 scripts/public-api.py                      # build the JSON (nightly) and count every crate
    python3 scripts/public-api.py rudder rudder-rpc    # only these crates
    python3 scripts/public-api.py --no-build           # count what target/doc/*.json already holds
    python3 scripts/public-api.py --by-module rudder   # also one row per top-level module
    python3 scripts/public-api.py --json               # machine-readable

Building runs, per crate, `cargo +nightly rustdoc -p <crate> -- -Z unstable-options --output-format
json` (rustdoc's JSON output is unstable, so it needs a nightly toolchain:
`rustup toolchain install nightly`), with the crate's default features. `CARGO_TARGET_DIR` is
honoured, and `--features` is passed on to cargo (e.g. to count a feature's additions).

What counts as one public item: everything a user can name from the crate root through public
modules and `pub use` re-exports, each once (an item re-exported under two paths counts once, under
its shortest path): modules, structs, enums, unions, traits, functions, type aliases, constants,
statics, macros; a public struct field, an enum variant, a trait's items, and the items of a type's
inherent `impl` blocks (methods, associated constants). Trait implementations (`impl Display for X`)
are not counted: they add no name. A `pub use` of another crate's item counts once, as `reexport`
(its own items belong to that crate). rustdoc leaves `#[doc(hidden)]` items out of its JSON, so they
are not in the count; the column `doc(hidden)` is how many `#[doc(hidden)]` attributes the crate's
sources hold (a grep, feature-gated ones included): public to the compiler, not to the documentation.
"""

import argparse
import json
import os
import subprocess
import sys
from collections import Counter, deque

# The workspace counted: the one the command runs in (so the script can count another checkout, e.g.
# a `git worktree` of an older commit), else the one holding this script.
ROOT = os.getcwd() if os.path.exists(os.path.join(os.getcwd(), "crates")) else os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))
KINDS_WITH_CHILDREN = ("struct", "enum", "union", "trait")


def library_crates():
    """The workspace's library crates (a src/lib.rs under crates/), by package name."""
    names = []
    crates_dir = os.path.join(ROOT, "crates")
    for entry in sorted(os.listdir(crates_dir)):
        if os.path.exists(os.path.join(crates_dir, entry, "src", "lib.rs")):
            names.append(entry)
    return names


def build(crate, features):
    command = ["cargo", "+nightly", "rustdoc", "-q", "-p", crate] + (["--features", features] if features else []) + ["--",
               "-Z", "unstable-options", "--output-format", "json"]
    result = subprocess.run(command, cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({result.returncode})")


def json_path(crate):
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "doc", crate.replace("-", "_") + ".json")


def is_hidden(item):
    return "hidden" in json.dumps(item.get("attrs", [])) and "doc" in json.dumps(item.get("attrs", []))


def kind_of(item):
    inner = item.get("inner", {})
    return next(iter(inner)) if isinstance(inner, dict) and inner else str(inner)


def count(doc):
    """Counter of kinds, Counter of kinds under #[doc(hidden)], Counter per top-level module."""
    index = doc["index"]
    kinds, hidden, groups = Counter(), Counter(), Counter()
    seen = set()
    # Breadth first from the root, so an item is filed under its shortest path.
    queue = deque([(doc["root"], None, False)])

    def local(item_id):
        item = index.get(str(item_id))
        return item if item is not None and item.get("crate_id") == 0 else None

    def tally(kind, group, hide):
        (hidden if hide else kinds)[kind] += 1
        if not hide:
            groups[group or "(root)"] += 1

    while queue:
        item_id, group, hide = queue.popleft()
        if item_id in seen:
            continue
        seen.add(item_id)
        item = local(item_id)
        if item is None:
            continue
        kind = kind_of(item)
        inner = item["inner"][kind] if isinstance(item.get("inner"), dict) else {}
        hide = hide or is_hidden(item)
        is_root = item_id == doc["root"]
        if kind == "module":
            if not is_root:
                tally("module", group, hide)
            for child in inner.get("items", []):
                child_item = local(child)
                child_group = group
                if is_root and child_item is not None:
                    child_kind = kind_of(child_item)
                    child_group = (child_item.get("name") if child_kind == "module" else None)
                queue.append((child, child_group, hide))
            continue
        if kind == "use":
            target = inner.get("id")
            if target is not None and local(target) is not None:
                target_item = local(target)
                target_group = group
                if group is None and kind_of(target_item) == "module":
                    target_group = inner.get("name")
                queue.append((target, target_group, hide or is_hidden(item)))
            else:
                tally("reexport", group, hide or is_hidden(item))
            continue
        if kind == "impl":
            continue
        tally(kind, group, hide)
        if kind in ("struct", "union"):
            fields = inner.get("kind", {})
            if isinstance(fields, dict):
                for key in ("plain", "tuple"):
                    value = fields.get(key)
                    if isinstance(value, dict):
                        value = value.get("fields", [])
                    for field in value or []:
                        if field is not None and local(field) is not None:
                            queue.append((field, group, hide))
        if kind == "union":
            for field in inner.get("fields", []):
                queue.append((field, group, hide))
        if kind == "enum":
            for variant in inner.get("variants", []):
                queue.append((variant, group, hide))
        if kind == "trait":
            for child in inner.get("items", []):
                queue.append((child, group, hide))
        for impl_id in inner.get("impls", []) if kind in KINDS_WITH_CHILDREN else []:
            impl = local(impl_id)
            if impl is None:
                continue
            impl_inner = impl["inner"].get("impl", {})
            if impl_inner.get("trait") is not None or impl_inner.get("is_synthetic"):
                continue
            for child in impl_inner.get("items", []):
                child_item = local(child)
                if child_item is not None and child_item.get("visibility") == "public":
                    queue.append((child, group, hide))
    return kinds, hidden, groups


def hidden_attributes(crate):
    """How many `#[doc(hidden)]` attributes the crate's sources hold."""
    total = 0
    for directory, _, files in os.walk(os.path.join(ROOT, "crates", crate, "src")):
        for name in files:
            if name.endswith(".rs"):
                with open(os.path.join(directory, name), encoding="utf-8") as f:
                    total += sum(1 for line in f if line.strip() == "#[doc(hidden)]")
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("crates", nargs="*", help="package names (default: every library crate)")
    parser.add_argument("--no-build", action="store_true", help="read target/doc/*.json as it is")
    parser.add_argument("--by-module", action="store_true", help="also count per top-level module")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--features", help="cargo features to build with (passed to cargo)")
    args = parser.parse_args()
    crates = args.crates or library_crates()
    report = {}
    for crate in crates:
        if not args.no_build:
            build(crate, args.features)
        with open(json_path(crate), encoding="utf-8") as f:
            doc = json.load(f)
        kinds, hidden, groups = count(doc)
        report[crate] = {
            "total": sum(kinds.values()),
            "hidden": hidden_attributes(crate),
            "kinds": dict(sorted(kinds.items())),
            "modules": dict(sorted(groups.items())),
            "format_version": doc.get("format_version"),
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{'crate':<22} {'public items':>12} {'doc(hidden)':>12}  kinds")
    for crate, r in report.items():
        kinds = ", ".join(f"{k} {v}" for k, v in r["kinds"].items())
        print(f"{crate:<22} {r['total']:>12} {r['hidden']:>12}  {kinds}")
        if args.by_module:
            for module, n in r["modules"].items():
                print(f"    {module:<30} {n:>6}")


if __name__ == "__main__":
    main()
