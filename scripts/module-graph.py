#!/usr/bin/env python3
"""The import graph of one crate's modules, and its circles.

    python3 scripts/module-graph.py crates/rudder-cli            # text: `a -> b, c`, then circles
    python3 scripts/module-graph.py --dot crates/rudder-cluster  # graphviz
    python3 scripts/module-graph.py --why crates/rudder-cluster  # also where each edge comes from
    python3 scripts/module-graph.py --check crates/rudder-cli crates/rudder-rpc   # one line each
    python3 scripts/module-graph.py --all                        # --check over every crate in crates/
    python3 scripts/module-graph.py --self-test

Exit status: 0 when no circle was found, 1 when one was, 2 on a usage error.

Nodes are the crate's modules, found by following `mod` declarations from src/lib.rs (or src/main.rs
when there is no lib.rs), `#[path]` included; inline `mod x { ... }` blocks are modules too. A reference
is a `use` item (trees such as `use crate::{a::X, b::{Y, Z}}` expanded) or a path written in code
starting with `crate::`, `super::` or `self::`. Comments, doc comments, strings and `$crate` (macros) are
not references. A reference is resolved to the module that defines the name: through child modules,
then through the imports of the module it lands in (so `use crate::router::Chain` where router/mod.rs
says `pub use chain::Chain` is a reference to `router::chain`), then through glob imports to a module
that defines an item of that name.

The edge rule: a reference from module A to module B becomes an edge between the two children of their
nearest common ancestor that contain A and B. So `router::chain` using `loadbalance::view::X` is the edge
`router -> loadbalance` (top-level siblings), and `router::chain` using `router::state::Y` is the edge
`router::chain -> router::state` (siblings inside the directory module `router`). A reference between a
module and its own ancestor or descendant makes no edge: a parent declares and re-exports its children
and a child may read its parent's items, which is how Rust nests modules, not a circle between files.
`#[cfg(test)]` modules and `use` items are left out unless --tests is given (as `cargo modules`
leaves them out without --cfg-test): the graph is the library as it compiles, and a unit test may
drive its module through the API above it.

Not followed: names that a glob import (`use super::*`) brings into scope (the glob is a reference to
the module it names, which for `super::*` is the parent: no edge), and names a macro expands to.

A circle is a strongly connected component of more than one module; each is printed with one concrete
cycle through it and, for every edge inside it, the lines that make the edge.
"""

import argparse
import os
import re
import signal
import sys
import tempfile
from collections import defaultdict

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


# ---------------------------------------------------------------------------------------------------
# Source text: comments and literals blanked out, line numbers kept.


def strip_source(text):
    """Returns text with comments, strings and char literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)

    def blank(s):
        return "".join("\n" if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(blank(text[i:end]))
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif re.match(r'(?:br|rb|r|cr)(#*)"', text[i:i + 260]) and not _ident_before(text, i):
            m = re.match(r'(?:br|rb|r|cr)(#*)"', text[i:])
            close = '"' + m.group(1)
            end = text.find(close, i + m.end())
            end = n if end < 0 else end + len(close)
            out.append(blank(text[i:end]))
            i = end
        elif c == '"' or (c in "bc" and text.startswith('"', i + 1) and not _ident_before(text, i)):
            j = i + (1 if c == '"' else 2)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(blank(text[i:j + 1]))
            i = j + 1
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a, 'static): only the former closes.
            m = re.match(r"'(?:\\(?:u\{[0-9A-Fa-f]+\}|x[0-9A-Fa-f]{2}|.)|[^\\'\n])'", text[i:i + 16])
            if m:
                out.append(blank(m.group(0)))
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident_before(text, i):
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


# ---------------------------------------------------------------------------------------------------
# Modules: the tree of `mod` declarations.


class Module:
    """One module: its path from the crate root, the file it lives in, and what it names."""

    def __init__(self, path, file):
        self.path = path  # tuple of names; () is the crate root
        self.file = file
        self.children = set()
        self.items = set()  # names of items defined here (struct, fn, ...)
        self.imports = {}  # name -> absolute path (tuple) that a `use` brought into scope
        self.globs = []  # absolute module paths of `use x::*`
        self.refs = []  # (absolute path, line) the module's code refers to, unresolved


MOD_DECL = re.compile(
    r"(?<![\w])((?:#\s*\[[^\]]*\]\s*)*)(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*([;{])"
)
PATH_ATTR = re.compile(r'#\s*\[\s*path\s*=\s*"([^"]+)"\s*\]')
ITEM_DEF = re.compile(
    r"\b(?:struct|enum|union|trait|type|fn|const|static|macro_rules!)\s+(" + IDENT + r")"
)
USE_ITEM = re.compile(
    r"(?<![\w])((?:#\s*\[[^\]]*\]\s*)*)(?:pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]*);"
)
CFG_TEST = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")
CODE_PATH = re.compile(r"(?<![\w$])((?:crate|super|self)(?:\s*::\s*" + IDENT + r")+)")
VISIBILITY_IN = re.compile(r"pub\s*\(\s*in\s+[^)]*\)")


def load_crate(src_dir, tests=False):
    """Reads every module reachable from the crate root under src_dir; returns {path: Module}.

    Without tests, `#[cfg(test)]` modules and `use` items are left out, as the library compiles."""
    root_file = None
    for name in ("lib.rs", "main.rs"):
        if os.path.isfile(os.path.join(src_dir, name)):
            root_file = os.path.join(src_dir, name)
            break
    if root_file is None:
        raise SystemExit(f"module-graph: no src/lib.rs or src/main.rs under {src_dir}")
    modules = {}
    _load_file(modules, (), root_file, os.path.dirname(root_file), tests)
    return modules


def _load_file(modules, path, file, child_dir, tests):
    with open(file, encoding="utf-8") as f:
        raw = f.read()
    text = VISIBILITY_IN.sub(lambda m: " " * len(m.group(0)), strip_source(raw))
    modules[path] = Module(path, file)
    _scan(modules, path, file, (raw, text), 0, len(text), child_dir, tests)


def _scan(modules, path, file, texts, start, end, child_dir, tests):
    """Scans text[start:end] as the body of module `path`; inline modules recurse with their span.

    texts is (raw, stripped): the stripped text is read, the raw one only for `#[path = "..."]`."""
    raw, text = texts
    module = modules[path]
    pos = start
    body = []  # spans of this module's own text (inline child modules cut out)
    while True:
        m = MOD_DECL.search(text, pos, end)
        if not m:
            break
        name, kind = m.group(2), m.group(3)
        child = path + (name,)
        body.append((pos, m.start()))
        skip = not tests and CFG_TEST.search(m.group(1) or "")
        if kind == ";" and skip:
            pos = m.end()
            continue
        if skip:
            pos = _matching_brace(text, m.end() - 1, end) + 1
            continue
        module.children.add(name)
        attr = PATH_ATTR.search(raw[m.start(1):m.end(1)])
        if kind == ";":
            if attr:
                target = os.path.join(os.path.dirname(file), attr.group(1))
            else:
                base = os.path.join(child_dir, name)
                target = base + ".rs" if os.path.isfile(base + ".rs") else os.path.join(base, "mod.rs")
            if not os.path.isfile(target):
                raise SystemExit(f"module-graph: {file}:{line_of(text, m.start())}: no file for mod {name}")
            own_dir = os.path.dirname(target) if os.path.basename(target) == "mod.rs" else target[:-3]
            _load_file(modules, child, target, own_dir, tests)
            pos = m.end()
        else:
            close = _matching_brace(text, m.end() - 1, end)
            modules[child] = Module(child, file)
            _scan(modules, child, file, texts, m.end(), close, os.path.join(child_dir, name), tests)
            pos = close + 1
    body.append((pos, end))
    for s, e in body:
        _read_body(module, file, text, s, e, tests)


def _matching_brace(text, open_pos, end):
    depth = 0
    for j in range(open_pos, end):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    raise SystemExit("module-graph: unbalanced braces")


def _read_body(module, file, text, start, end, tests):
    chunk = text[start:end]
    module.items.update(ITEM_DEF.findall(chunk))
    cut = []
    for m in USE_ITEM.finditer(chunk):
        cut.append((m.start(), m.end()))
        if not tests and CFG_TEST.search(m.group(1)):
            continue
        line = line_of(text, start + m.start(2))
        for segments, alias in expand_use_tree(m.group(2)):
            absolute = absolute_path(module.path, segments, module.children)
            if absolute is None:
                continue
            if alias == "*":
                module.globs.append(absolute)
                module.refs.append((absolute, line))
            else:
                if alias != "_":
                    module.imports[alias] = absolute
                module.refs.append((absolute, line))
    rest = list(chunk)
    for s, e in cut:
        rest[s:e] = " " * (e - s)
    rest = "".join(rest)
    for m in CODE_PATH.finditer(rest):
        segments = [s.strip() for s in m.group(1).split("::")]
        absolute = absolute_path(module.path, segments, module.children)
        if absolute is not None:
            module.refs.append((absolute, line_of(text, start + m.start())))


def expand_use_tree(tree):
    """`a::{b, c::{d as e}, f::*}` -> [(['a','b'],'b'), (['a','c','d'],'e'), (['a','f'],'*')]."""
    tree = re.sub(r"\s+", " ", tree).strip()
    tree = re.sub(r"^::", "", tree)
    out = []

    def walk(prefix, s):
        s = s.strip()
        if not s:
            return
        parts = _split_top(s)
        if len(parts) > 1:
            for p in parts:
                walk(prefix, p)
            return
        brace = s.find("{")
        if brace >= 0 and s.endswith("}"):
            head = [x.strip() for x in s[:brace].split("::") if x.strip()]
            walk(prefix + head, s[brace + 1:-1])
            return
        alias = None
        m = re.match(r"(.*?)\s+as\s+(" + IDENT + r")$", s)
        if m:
            s, alias = m.group(1), m.group(2)
        segments = prefix + [x.strip() for x in s.split("::") if x.strip()]
        if segments and segments[-1] == "*":
            out.append((segments[:-1], "*"))
        elif segments and segments[-1] == "self":
            segments = segments[:-1]
            if segments:
                out.append((segments, alias or segments[-1]))
        elif segments:
            out.append((segments, alias or segments[-1]))

    walk([], tree)
    return out


def _split_top(s):
    parts, depth, cur = [], 0, []
    for c in s:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p for p in parts if p.strip()]


def absolute_path(current, segments, children):
    """The path from the crate root that segments name, or None for another crate's path."""
    if not segments:
        return None
    first = segments[0]
    if first == "crate":
        base, rest = (), segments[1:]
    elif first in ("super", "self"):
        base, rest = tuple(current), segments
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                if not base:
                    return None
                base = base[:-1]
            rest = rest[1:]
    elif first in children:
        # 2018 paths: a child module's name is in scope in its parent.
        base, rest = tuple(current), segments
    else:
        return None
    return base + tuple(rest)


# ---------------------------------------------------------------------------------------------------
# Resolution and the graph.


def resolve(modules, path, depth=0):
    """The module that defines what the absolute path names."""
    module_path = ()
    i = 0
    while i < len(path) and module_path + (path[i],) in modules:
        module_path += (path[i],)
        i += 1
    if i == len(path) or depth > 16:
        return module_path
    name = path[i]
    module = modules[module_path]
    if name in module.items:
        return module_path
    if name in module.imports:
        target = module.imports[name]
        if target != path[: i + 1]:
            return resolve(modules, target + tuple(path[i + 1:]), depth + 1)
    for glob in module.globs:
        owner = resolve(modules, glob, depth + 1)
        if owner in modules and (name in modules[owner].items or name in modules[owner].imports):
            if owner != module_path:
                return resolve(modules, owner + tuple(path[i:]), depth + 1)
    return module_path


def build_graph(modules):
    """{node: {node: [(file, line), ...]}} under the sibling rule in the module docs."""
    edges = defaultdict(lambda: defaultdict(list))
    for module in modules.values():
        for ref, line in module.refs:
            target = resolve(modules, ref)
            a, b = module.path, target
            k = 0
            while k < len(a) and k < len(b) and a[k] == b[k]:
                k += 1
            if k == len(a) or k == len(b):
                continue  # same module, an ancestor or a descendant
            src, dst = a[: k + 1], b[: k + 1]
            edges[src][dst].append((module.file, line))
    return edges


def strongly_connected(nodes, edges):
    """Tarjan's algorithm, iterative; components of more than one node, each sorted."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, {})))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return sorted(out)


def one_cycle(component, edges):
    """A shortest cycle through the component's first node, staying inside the component."""
    members = set(component)
    start = component[0]
    previous, frontier = {start: None}, [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(edges.get(node, {})):
                if nxt == start:
                    cycle = [node]
                    while previous[cycle[-1]] is not None:
                        cycle.append(previous[cycle[-1]])
                    return list(reversed(cycle)) + [start]
                if nxt in members and nxt not in previous:
                    previous[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return [start]


def name(path):
    return "::".join(path) if path else "crate"


def analyse(crate_dir, tests=False):
    src = os.path.join(crate_dir, "src")
    modules = load_crate(src, tests)
    edges = build_graph(modules)
    circles = strongly_connected(list(modules), edges)
    return modules, edges, circles


def rel(file, crate_dir):
    return os.path.relpath(file, crate_dir)


def print_text(crate_dir, modules, edges, circles, why, out):
    for path in sorted(modules):
        if not path:
            continue
        targets = sorted(edges.get(path, {}))
        out.write(f"{name(path)} -> {', '.join(name(t) for t in targets) if targets else '-'}\n")
        if why:
            for t in targets:
                out.write(f"    {name(t)}: {where(edges[path][t], crate_dir)}\n")
    print_circles(crate_dir, edges, circles, out)


def print_circles(crate_dir, edges, circles, out):
    for component in circles:
        cycle = one_cycle(component, edges)
        out.write(f"circle: {' -> '.join(name(p) for p in cycle)}  ({len(component)} modules: "
                  f"{', '.join(name(p) for p in component)})\n")
        members = set(component)
        for a in component:
            for b in sorted(edges.get(a, {})):
                if b in members:
                    out.write(f"    {name(a)} -> {name(b)}: {where(edges[a][b], crate_dir)}\n")


def where(sites, crate_dir, limit=4):
    seen = []
    for file, line in sites:
        s = f"{rel(file, crate_dir)}:{line}"
        if s not in seen:
            seen.append(s)
    more = f" (+{len(seen) - limit} more)" if len(seen) > limit else ""
    return ", ".join(seen[:limit]) + more


def print_dot(crate_dir, modules, edges, circles, out):
    in_circle = {p for c in circles for p in c}
    out.write(f'digraph "{os.path.basename(os.path.normpath(crate_dir))}" {{\n  rankdir=LR;\n')
    for path in sorted(modules):
        if path:
            colour = ' color=red fontcolor=red' if path in in_circle else ''
            out.write(f'  "{name(path)}" [shape=box{colour}];\n')
    for a in sorted(edges):
        for b in sorted(edges[a]):
            colour = ' [color=red]' if any(a in c and b in c for c in circles) else ''
            out.write(f'  "{name(a)}" -> "{name(b)}"{colour};\n')
    out.write("}\n")


def summary(crate_dir, out, tests):
    modules, edges, circles = analyse(crate_dir, tests)
    count = sum(len(v) for v in edges.values())
    label = os.path.basename(os.path.normpath(crate_dir))
    if circles:
        sizes = ", ".join(str(len(c)) for c in circles)
        out.write(f"{label}: {len(modules)} modules, {count} edges, {len(circles)} circle(s) "
                  f"(sizes {sizes})\n")
        print_circles(crate_dir, edges, circles, out)
    else:
        out.write(f"{label}: {len(modules)} modules, {count} edges, no circle\n")
    return bool(circles)


# ---------------------------------------------------------------------------------------------------
# Self-test: tiny synthetic crates written to a temporary directory.

SELF_TEST_FILES = {
    "lib.rs": """
        //! Root. `crate::b::Beta` in a doc comment is not a reference.
        pub mod a;
        pub mod b;
        pub mod c;
        mod inline_parent {
            #[cfg(test)]
            use crate::c::Gamma;
            pub(crate) fn f() { let _ = "crate::a::Alpha"; }
        }
    """,
    "a.rs": """
        use crate::b::{Beta, self as bee};
        pub struct Alpha;
        #[cfg(test)]
        mod tests { use super::*; use super::super::c::Gamma; }
    """,
    "b/mod.rs": """
        mod inner;
        mod other;
        pub use inner::Beta;
        pub fn lifetime<'a>(s: &'a str) -> &'a str { let _c = '{'; s }
    """,
    "b/inner.rs": "pub struct Beta; pub(in crate::b) fn g() { super::other::h(); }\n",
    "b/other.rs": "pub fn h() {}\n",
    "c.rs": "pub struct Gamma;\nfn touch() { let _ = crate::b::Beta; }\n",
}


def self_test():
    failures = []

    def check(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    check("use tree", expand_use_tree("crate::{a::X, b::{Y as Z, self}, c::*}"),
          [(["crate", "a", "X"], "X"), (["crate", "b", "Y"], "Z"), (["crate", "b"], "b"),
           (["crate", "c"], "*")])
    check("strip", strip_source("a // crate::x\nb /* /* c */ */ \"s\\\"\" 'x' 'a"),
          "a" + " " * 12 + "\nb" + " " * 25 + "'a")
    with tempfile.TemporaryDirectory() as tmp:
        for with_circle in (False, True):
            crate = os.path.join(tmp, f"crate{int(with_circle)}")
            for rel_path, body in SELF_TEST_FILES.items():
                if with_circle and rel_path == "b/other.rs":
                    # other -> inner (h() names Beta) closes other <-> inner; b -> a closes a <-> b.
                    body = "pub fn h() { let _ = super::inner::Beta; let _ = crate::a::Alpha; }\n"
                full = os.path.join(crate, "src", rel_path)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "w", encoding="utf-8") as f:
                    f.write(body)
            for tests in (False, True):
                what = f"{'circle' if with_circle else 'no circle'}, tests {tests}"
                modules, edges, circles = analyse(crate, tests)
                flat = {name(a): sorted(name(b) for b in edges[a]) for a in edges}
                check(f"modules ({what})", sorted(name(p) for p in modules),
                      ["a"] + (["a::tests"] if tests else [])
                      + ["b", "b::inner", "b::other", "c", "crate", "inline_parent"])
                if not with_circle:
                    # a -> b through the re-export, c -> b, inner -> other inside b; with tests also
                    # a's test module -> c (as a -> c) and inline_parent's test-only use. Nothing from strings,
                    # comments or `pub(in ...)`.
                    want = {"a": ["b"], "b::inner": ["b::other"], "c": ["b"]}
                    if tests:
                        want.update({"a": ["b", "c"], "inline_parent": ["c"]})
                    check(f"edges ({what})", flat, want)
                    check(f"circles ({what})", circles, [])
                else:
                    top = ["a", "b", "c"] if tests else ["a", "b"]
                    check(f"circles ({what})", [[name(p) for p in c] for c in circles],
                          [top, ["b::inner", "b::other"]])
                    check(f"cycle ({what})", [name(p) for p in one_cycle(circles[0], edges)],
                          ["a", "b", "a"])
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "c", "src"))
        with open(os.path.join(tmp, "c", "src", "main.rs"), "w", encoding="utf-8") as f:
            f.write("mod x;\n")
        os.makedirs(os.path.join(tmp, "c", "src", "x"))
        with open(os.path.join(tmp, "c", "src", "x", "mod.rs"), "w", encoding="utf-8") as f:
            f.write('#[path = "t.rs"]\nmod y;\n')
        with open(os.path.join(tmp, "c", "src", "x", "t.rs"), "w", encoding="utf-8") as f:
            f.write("pub fn z() {}\n")
        modules, _, _ = analyse(os.path.join(tmp, "c"))
        check("main.rs and #[path]", sorted(name(p) for p in modules), ["crate", "x", "x::y"])
    for f in failures:
        print("FAIL", f)
    print("self-test:", "FAILED" if failures else "ok")
    return 1 if failures else 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("crates", nargs="*", help="crate directories (each with a src/)")
    parser.add_argument("--dot", action="store_true", help="print a graphviz digraph")
    parser.add_argument("--why", action="store_true", help="print the lines behind each edge")
    parser.add_argument("--tests", action="store_true", help="count #[cfg(test)] modules and uses too")
    parser.add_argument("--check", action="store_true", help="one summary line per crate")
    parser.add_argument("--all", action="store_true", help="--check over every crate under crates/")
    parser.add_argument("--self-test", action="store_true", help="test this script on synthetic crates")
    args = parser.parse_args(argv)
    if args.self_test:
        return self_test()
    crates = list(args.crates)
    if args.all:
        top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates")
        crates += sorted(os.path.join(top, d) for d in os.listdir(top)
                         if os.path.isdir(os.path.join(top, d, "src")))
    if not crates:
        parser.print_usage(sys.stderr)
        return 2
    if args.check or args.all or len(crates) > 1:
        found = [summary(c, sys.stdout, args.tests) for c in crates]
        return 1 if any(found) else 0
    modules, edges, circles = analyse(crates[0], args.tests)
    if args.dot:
        print_dot(crates[0], modules, edges, circles, sys.stdout)
    else:
        print_text(crates[0], modules, edges, circles, args.why, sys.stdout)
    return 1 if circles else 0


if __name__ == "__main__":
    # `module-graph.py ... | head` ends quietly, as other command-line tools do.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main(sys.argv[1:]))
