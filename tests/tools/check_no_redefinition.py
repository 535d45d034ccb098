#!/usr/bin/env python3
"""Fails when the controller package holds a copy of a name the collection defines.

The controller takes what an order, a label or a resource is from the collection (controller/c5c3_orders_controller/
collection.py); a copy of it would drift the day the collection changes. So no module of the controller package may
contain a string literal equal to:

- a ``c5c3.io/...`` string the collection defines (label and annotation keys, finalizers, the API group version):
  every such literal in plugins/, and every such value the collection's module_utils hold at import time (so keys
  built at run time, ``LabelKeys.for_kind(...)``, count too);
- a resource plural of ``k8s/resources.py`` (every ``Resource`` there).

Prints one line per copy (``file:line: 'literal' is defined by the collection (where)``) and exits 1 when there is
any. Run by ``make no-redefinition`` (mk/typecheck.mk) with the test venv's Python, from the checkout's link
``.collections/ansible_collections/c5c3/orders`` (``make collection-link``).
"""
import ast
import dataclasses
import importlib
import pkgutil
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Set, Tuple

REPO = Path(__file__).resolve().parents[2]
COLLECTIONS = REPO / ".collections"
CONTROLLER = REPO / "controller" / "c5c3_orders_controller"
PLUGINS = REPO / "plugins"
PREFIX = "c5c3.io/"
MODULE_UTILS = "ansible_collections.c5c3.orders.plugins.module_utils"
RESOURCES = MODULE_UTILS + ".k8s.resources"


def _literals(path: Path) -> Iterator[Tuple[int, str]]:
    """(line, text) of every plain string literal of a file (the constant parts of f-strings are not whole
    literals: a key built from parts is not equal to any of them)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    in_fstring: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            in_fstring.update(id(value) for value in node.values)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in in_fstring:
            yield node.lineno, node.value


def _strings(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string a module-level value holds: itself, the items of a collection, the fields of a dataclass or
    a named tuple (a few levels deep)."""
    if depth > 3:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key, depth + 1)
            yield from _strings(item, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _strings(item, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from _strings(getattr(value, field.name, None), depth + 1)


def defined() -> Tuple[Dict[str, str], List[str]]:
    """literal -> where the collection defines it; and the modules that could not be imported (reported)."""
    found: Dict[str, str] = {}
    for path in sorted(PLUGINS.rglob("*.py")):
        for line, text in _literals(path):
            if text.startswith(PREFIX) and len(text) > len(PREFIX):
                found.setdefault(text, f"{path.relative_to(REPO)}:{line}")
    if str(COLLECTIONS) not in sys.path:
        sys.path.insert(0, str(COLLECTIONS))
    problems = []
    root = importlib.import_module(MODULE_UTILS)
    for info in pkgutil.walk_packages(root.__path__, MODULE_UTILS + "."):
        try:
            module = importlib.import_module(info.name)
        except Exception as exc:  # noqa: BLE001 - reported, the rest is still checked
            problems.append(f"{info.name}: {type(exc).__name__}: {exc}")
            continue
        where = info.name[len(MODULE_UTILS) + 1:].replace(".", "/") + ".py"
        for attr, value in vars(module).items():
            if attr.startswith("__"):
                continue
            for text in _strings(value):
                if text.startswith(PREFIX) and len(text) > len(PREFIX):
                    found.setdefault(text, f"plugins/module_utils/{where} ({attr})")
    resources = importlib.import_module(RESOURCES)
    for attr, value in vars(resources).items():
        if isinstance(value, resources.Resource):
            found.setdefault(value.plural, f"plugins/module_utils/k8s/resources.py ({attr}.plural)")
    return found, problems


def copies(found: Dict[str, str]) -> List[str]:
    lines = []
    for path in sorted(CONTROLLER.rglob("*.py")):
        for line, text in _literals(path):
            if text in found:
                lines.append(f"{path.relative_to(REPO)}:{line}: {text!r} is defined by the collection ({found[text]})")
    return lines


def main() -> int:
    found, problems = defined()
    for problem in problems:
        print(f"note: not imported, its run-time values not read: {problem}", file=sys.stderr)
    lines = copies(found)
    for line in lines:
        print(line)
    print(f"{len(lines)} copies of the collection's {len(found)} label keys, names and plurals in "
          f"{CONTROLLER.relative_to(REPO)}", file=sys.stderr)
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
