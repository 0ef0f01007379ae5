#!/usr/bin/env python3
"""No module of tools/ imports, directly or through others, a module that imports it back.

A module that needs what another defines imports it; when both need something of each other,
what they share belongs in a third module that both import (tools/browser/browser_session.py holds
what the browser check and the accessibility audit share). A circle of imports makes each
module half-defined while the other loads, and a reader cannot read either alone.

The check reads every .py file under tools/ (skipping node_modules) with Python's own parser:
`import name`, `from name import ...`, `from package.name import ...` and the package's relative
`from .name import ...` and `from . import name`, wherever they stand in the file (an import
inside a function counts: it only delays the circle). It names every circle it finds.

    check_import_cycles.py --tools tools [--self-test]
"""
import argparse
import ast
import pathlib
import sys
import tempfile


def module_names(tools):
    """{module name: path} of every Python file under tools/: "name" for tools/name.py,
    "package.name" for tools/package/name.py, "package" for its __init__.py."""
    modules = {}
    for path in sorted(tools.rglob("*.py")):
        parts = path.relative_to(tools).with_suffix("").parts
        if "node_modules" in parts:
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imports_of(name, path, modules):
    """The modules of tools/ that the module `name` (at `path`) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    folder = name.rpartition(".")[0] if path.name != "__init__.py" else ""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, one level up for each dot after the first
                anchor = package.split(".") if package else []
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # `from package import name` may name a module of the package, or something it defines
            targets = [f"{base}.{alias.name}" if base else alias.name for alias in node.names] + [base]
        for target in targets:
            # a script's own folder comes first on its path: `import name` in tools/folder/x.py
            # is tools/folder/name.py where there is one
            if not node_level(node) and folder and f"{folder}.{target}" in modules:
                target = f"{folder}.{target}"
            while target and target not in modules:
                target = target.rpartition(".")[0]  # package.module.thing: the module
            if target and target != name:
                found.add(target)
    return found


def node_level(node):
    """How many dots a `from ... import` starts with (0 for a plain `import`)."""
    return getattr(node, "level", 0) or 0


def circles(graph):
    """Each circle of the import graph once, as a list of module names that starts at its smallest."""
    found = set()

    def walk(start, node, path):
        for following in sorted(graph.get(node, ())):
            if following == start:
                circle = path[:]
                smallest = circle.index(min(circle))
                found.add(tuple(circle[smallest:] + circle[:smallest]))
            elif following not in path and following > start:  # each circle from its smallest module only
                walk(start, following, path + [following])

    for module in sorted(graph):
        walk(module, module, [module])
    return [list(circle) for circle in sorted(found)]


def check(tools):
    """(number of modules, [description of each circle])."""
    modules = module_names(tools)
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    return len(modules), [" imports ".join(circle + [circle[0]]) for circle in circles(graph)]


def self_test():
    """The check finds a circle of two through a delayed import, a circle of three in a
    package's relative imports and a circle of two scripts of one folder that import each other
    by their bare names, and passes a chain without one."""
    with tempfile.TemporaryDirectory() as folder:
        root = pathlib.Path(folder)
        (root / "pkg").mkdir()
        (root / "browser").mkdir()
        files = {
            "a.py": "import b\n",
            "b.py": "def later():\n    import a\n",
            "c.py": "from pkg.x import thing\n",
            "pkg/__init__.py": "",
            "pkg/x.py": "from .y import other\nthing = 1\n",
            "pkg/y.py": "from . import z\nother = 2\n",
            "pkg/z.py": "from pkg import x\n",
            "browser/s.py": "import t\n",
            "browser/t.py": "from s import thing\n",
        }
        for name, text in files.items():
            (root / name).write_text(text, encoding="utf-8")
        _, found = check(root)
        expected = ["a imports b imports a", "browser.s imports browser.t imports browser.s",
                    "pkg.x imports pkg.y imports pkg.z imports pkg.x"]
        if found != expected:
            return f"self-test: expected {expected}, found {found}"
        (root / "b.py").write_text("import c\n", encoding="utf-8")
        (root / "pkg/z.py").write_text("", encoding="utf-8")
        (root / "browser/t.py").write_text("import a\n", encoding="utf-8")
        _, found = check(root)
        if found:
            return f"self-test: a chain without a circle gave {found}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", required=True, type=pathlib.Path, help="the tools/ folder")
    parser.add_argument("--self-test", action="store_true", help="first check the check on made-up modules")
    args = parser.parse_args()
    if args.self_test:
        problem = self_test()
        if problem:
            print(problem)
            return 1
    count, found = check(args.tools)
    for circle in found:
        print(f"import circle: {circle}; move what they share into a module both import")
    if found:
        return 1
    print(f"{count} modules of {args.tools.name}/, no circle of imports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
