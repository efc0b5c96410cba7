#!/usr/bin/env python3
"""Fails when a target imports a module its Package.swift entry does not declare.

SwiftPM lets a target import any module that happens to be built before it (a dependency's
dependency), so an undeclared import compiles today and breaks when the graph changes. Products are
matched by name: every product this package uses is named after its module.
"""
import json
import os
import re
import subprocess
import sys

# Modules of the toolchain and the platforms, never declared in Package.swift.
SYSTEM = {
    "Foundation", "FoundationEssentials", "FoundationNetworking", "Dispatch", "Observation",
    "Testing", "XCTest", "Glibc", "Musl", "Darwin", "os", "_Concurrency", "UIKit",
}
# Modules newer than the package's platform floor (iOS 17, macOS 14): `Synchronization` needs iOS 18.
ABOVE_FLOOR = {"Synchronization"}
IMPORT = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?"
    r"import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)",
    re.MULTILINE,
)


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, MONORAIL_FUZZ="1")  # the fuzz targets are checked too
    manifest = json.loads(subprocess.check_output(["swift", "package", "dump-package"], cwd=root, env=env))
    failures = []
    for target in manifest["targets"]:
        if target["type"] in ("system", "binary", "plugin"):
            continue
        default = "Tests" if target["type"] == "test" else "Sources"
        path = os.path.join(root, target.get("path") or os.path.join(default, target["name"]))
        declared = {target["name"]}
        for dependency in target["dependencies"]:
            for kind in ("byName", "target", "product"):
                if kind in dependency:
                    declared.add(dependency[kind][0])
        for directory, _, files in os.walk(path):
            for name in files:
                if not name.endswith(".swift"):
                    continue
                file = os.path.join(directory, name)
                with open(file, encoding="utf-8") as source:
                    for module in IMPORT.findall(source.read()):
                        if module in ABOVE_FLOOR:
                            failures.append(f"{os.path.relpath(file, root)}: imports {module}, "
                                            "which the package's platforms do not all have")
                        elif module not in declared and module not in SYSTEM:
                            failures.append(f"{os.path.relpath(file, root)}: imports {module}, "
                                            f"which target {target['name']} does not declare")
    for failure in sorted(set(failures)):
        print(failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
