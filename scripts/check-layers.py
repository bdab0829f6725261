#!/usr/bin/env python3
"""Checks gpufed's layering (layers.txt) against its includes and CMake links.

  scripts/check-layers.py [ROOT]

For every module layers.txt lists, each `#include "..."` of a header in another module,
and each gpufed library another module defines that the module's own libraries name in
their DEPS (gpufed_library) or target_link_libraries, must be among the modules
layers.txt allows it. Test code (*_test.cc, testing/ folders, *_test_fixture.h, and the
gpufed_test targets) is not checked. Prints one line per violation (file:line: what,
and the rule it breaks) and exits 1; exits 0 with a summary when there is none; exits 2
when layers.txt itself is malformed.
"""
import os
import re
import sys


def read_layers(root):
    path = os.path.join(root, "layers.txt")
    allowed = {}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                sys.exit(f"layers.txt:{number}: expected 'module: allowed modules...', got '{raw.strip()}'")
            module, rest = line.split(":", 1)
            module = module.strip()
            if module in allowed:
                sys.exit(f"layers.txt:{number}: module {module} is listed twice")
            allowed[module] = set(rest.split())
    for module, uses in allowed.items():
        for used in uses:
            if used not in allowed:
                sys.exit(f"layers.txt: {module} may use {used}, which is not a listed module")
            if used == module:
                sys.exit(f"layers.txt: {module} lists itself")
    return allowed


def module_of(path, modules):
    """The longest listed module that contains `path` (relative, '/'-separated)."""
    best = None
    for m in modules:
        if (path == m or path.startswith(m + "/")) and (best is None or len(m) > len(best)):
            best = m
    return best


def is_test_file(path):
    name = os.path.basename(path)
    parts = path.split("/")
    return "_test" in name or "testing" in parts[:-1]


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def check_includes(root, modules, allowed, out):
    files = 0
    for module in sorted(modules):
        base = os.path.join(root, module)
        if not os.path.isdir(base):
            out.append(f"layers.txt: module {module} has no folder")
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith((".cc", ".h")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                if module_of(rel, modules) != module or is_test_file(rel):
                    continue
                files += 1
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = module_of(m.group(1), modules)
                        if target is None or target == module or target in allowed[module]:
                            continue
                        out.append(f"{rel}:{number}: includes {m.group(1)} ({target}), "
                                   f"but layers.txt lets {module} use only: {' '.join(sorted(allowed[module])) or 'nothing'}")
    return files


CALL = re.compile(r"\b(gpufed_library|add_library|gpufed_test|target_link_libraries|add_executable)\s*\(", re.S)


def cmake_calls(text):
    """(command, first argument, argument words, line) of each call, comments removed."""
    text = re.sub(r"#[^\n]*", "", text)
    for m in CALL.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        words = text[m.end():i - 1].split()
        if words:
            yield m.group(1), words[0], words[1:], text.count("\n", 0, m.start()) + 1


def check_links(root, modules, allowed, out):
    defined = {}  # gpufed library -> module
    lists = []
    for module in sorted(modules):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, module)):
            if "CMakeLists.txt" not in filenames:
                continue
            rel = os.path.relpath(os.path.join(dirpath, "CMakeLists.txt"), root).replace(os.sep, "/")
            if module_of(os.path.dirname(rel), modules) != module:
                continue
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                lists.append((module, rel, f.read()))
    for module, rel, text in lists:
        for command, name, words, line in cmake_calls(text):
            if command in ("gpufed_library", "add_library"):
                defined[name] = module
    for module, rel, text in lists:
        for command, name, words, line in cmake_calls(text):
            if command == "gpufed_library":
                deps = words[words.index("DEPS") + 1:] if "DEPS" in words else []
            elif command == "target_link_libraries" and defined.get(name) == module:
                deps = words
            else:
                continue  # tests and executables may link further
            for dep in deps:
                target = defined.get(dep)
                if target is None or target == module or target in allowed[module]:
                    continue
                out.append(f"{rel}:{line}: {name} links {dep} ({target}), "
                           f"but layers.txt lets {module} use only: {' '.join(sorted(allowed[module])) or 'nothing'}")
    return len(defined)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    allowed = read_layers(root)
    modules = set(allowed)
    violations = []
    files = check_includes(root, modules, allowed, violations)
    libraries = check_links(root, modules, allowed, violations)
    for v in violations:
        print(v)
    if violations:
        print(f"check-layers: {len(violations)} violation(s) of layers.txt")
        return 1
    print(f"check-layers: {len(modules)} modules, {files} source files, {libraries} libraries: no violation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
