"""The package's layout: sub-packages that say what they are, and no import cycles.

Each import between two modules of ``spacy_mimick`` (at the top of a module or inside a
function: both make the modules depend on each other) and between the project's scripts is an
edge; a cycle means neither module can be understood, tested or replaced without the other.
"""
import ast
from pathlib import Path
from typing import Dict, List, Set

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "spacy_mimick"
SCRIPTS = ROOT / "scripts" / "project"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_imports() -> Dict[str, Set[str]]:
    """spacy_mimick's modules -> the modules of spacy_mimick each imports."""
    modules = {_module_name(p, PACKAGE): p for p in PACKAGE.rglob("*.py")}
    graph: Dict[str, Set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: Set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
            targets: List[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base_name = ".".join(base + ([node.module] if node.module else []))
                else:
                    base_name = node.module or ""
                targets = [f"{base_name}.{alias.name}" for alias in node.names] + [base_name]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            for target in targets:
                # the longest module that the name is or lies in
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    edges.add(target)
        graph[name] = edges
    return graph


def script_imports() -> Dict[str, Set[str]]:
    """scripts/project's scripts -> the scripts each imports (they import each other by name)."""
    names = {p.stem for p in SCRIPTS.glob("*.py")}
    graph: Dict[str, Set[str]] = {}
    for path in SCRIPTS.glob("*.py"):
        edges: Set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module in names:
                edges.add(node.module)
            elif isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names if alias.name in names)
        edges.discard(path.stem)
        graph[path.stem] = edges
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> List[str]:
    """One import cycle of ``graph`` as a list of names (first repeated last), or []."""
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(node: str) -> List[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"b"}}) == []


@pytest.mark.parametrize("graph", [package_imports, script_imports], ids=["spacy_mimick", "scripts/project"])
def test_no_import_cycles(graph):
    cycle = find_cycle(graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_graph_sees_relative_imports():
    graph = package_imports()
    assert "spacy_mimick.vectors.features" in graph["spacy_mimick.vectors.mimick_model"]
    assert "spacy_mimick.atomic" in graph["spacy_mimick.vectors.mimick_model"]


@pytest.mark.parametrize("sub", ["vectors", "tagger", "ud", "cli"])
def test_each_subpackage_says_what_it_is(sub):
    init = PACKAGE / sub / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf8")))
    assert doc and len(doc.split()) >= 20, f"{init} needs a paragraph saying what the sub-package is"
    # every module the paragraph names exists
    for word in doc.replace("(", " ").replace(")", " ").replace(",", " ").split():
        if word.startswith("``") and word.endswith("``") and word.strip("`").isidentifier() and "_" in word:
            module = word.strip("`")
            if module not in ("mimick_vectors", "mimick_tagger"):  # component names, not modules
                assert (PACKAGE / sub / f"{module}.py").exists(), f"{init} names {module}, which is not there"
