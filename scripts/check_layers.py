#!/usr/bin/env python3
"""Fails when a file under src/ includes a header of a library its own library does not
depend on (a higher layer, or a sibling it does not link).

The build writes the library map (see cmake/HearthLayers.cmake): for each library under src/,
its folder, its sources and its hearth_* dependencies as CMake records them (`link`: what
the library itself links, public and private; `interface`: what it passes on to its users).
A library may include its own headers and those of every library it links, plus whatever
those pass on, as the compiler's usage requirements would allow if each library exported
only its own headers.

Usage: check_layers.py LAYER_MAP.json SOURCE_ROOT [STAMP]
"""
import json
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def load_map(path, root):
    with open(path, encoding="utf-8") as f:
        libs = json.load(f)
    src = os.path.join(root, "src")
    out = {}
    for lib in libs:
        folder = os.path.relpath(lib["dir"], src)
        if folder.startswith(".."):
            continue  # tools and tests sit above every layer
        sources = set()
        for s in lib["sources"]:
            full = s if os.path.isabs(s) else os.path.join(lib["dir"], s)
            rel = os.path.relpath(os.path.normpath(full), src)
            if not rel.startswith(".."):
                sources.add(rel)
        out[lib["name"]] = {"dir": folder, "sources": sources,
                            "link": set(lib["link"]), "interface": set(lib["interface"])}
    return out


def owners(libs, src):
    """Maps every .h/.cpp under src/ to the library it belongs to."""
    owner = {}
    for name, lib in libs.items():
        for s in lib["sources"]:
            owner[s] = name
    by_stem = {os.path.splitext(s)[0]: name for s, name in owner.items()}
    by_dir = {}
    for name, lib in libs.items():
        by_dir.setdefault(lib["dir"], []).append(name)
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith((".h", ".cpp")):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)
            if rel in owner:
                continue
            if os.path.splitext(rel)[0] in by_stem:
                owner[rel] = by_stem[os.path.splitext(rel)[0]]
                continue
            d = os.path.dirname(rel)
            while d not in by_dir and d:
                d = os.path.dirname(d)
            candidates = by_dir.get(d, [])
            if not candidates:
                continue
            named = [c for c in candidates if c == "hearth_" + os.path.basename(d)]
            owner[rel] = (named or sorted(candidates))[0]
    return owner


def allowed(libs, name):
    """The library itself, what it links, and what those pass on (transitively)."""
    seen = {name}
    todo = [d for d in libs[name]["link"] if d in libs]
    while todo:
        d = todo.pop()
        if d in seen:
            continue
        seen.add(d)
        todo.extend(x for x in libs[d]["interface"] if x in libs)
    return seen


def main():
    layer_map, root = sys.argv[1], sys.argv[2]
    src = os.path.join(root, "src")
    libs = load_map(layer_map, root)
    owner = owners(libs, src)
    reach = {name: allowed(libs, name) for name in libs}
    problems = []
    for rel, name in sorted(owner.items()):
        with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            beside = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
            target = beside if os.path.exists(os.path.join(src, beside)) else os.path.normpath(inc)
            other = owner.get(target)
            if other is None or other in reach[name]:
                continue
            problems.append(f"src/{rel} ({name}) includes \"{inc}\" of {other}, "
                            f"which {name} does not depend on")
    if problems:
        print("layering: a library includes a header of a layer it does not link:")
        for p in problems:
            print("  " + p)
        print("Move the code down a layer, or link the library if the dependency is meant.")
        return 1
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w", encoding="utf-8") as f:
            f.write(f"{len(owner)} files, {len(libs)} libraries\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
