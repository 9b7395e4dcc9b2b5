"""The layout's rules (docs/layout.md), read from the code's own imports: no import cycle, the
forest reaches the split search through its one face, production code never imports the tests'
hooks, no file over 450 lines."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dasktree"


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, loading: bool = True) -> set[str]:
    """What module ``name`` imports, as absolute names (``from a import b`` gives ``a`` and ``a.b``);
    with ``loading``, only the imports run when it is loaded (not those inside functions, which
    run later, once every module is loaded)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(nodes) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")
                base = base[:len(base) - node.level + 1] if node.level else []
                module = ".".join([*base, *([node.module] if node.module else [])])
                found.update({module, *(f"{module}.{a.name}" for a in node.names)})
            if not loading or isinstance(node, (ast.If, ast.Try, ast.With)):  # these run on loading
                visit(ast.iter_child_nodes(node))

    visit(ast.parse(path.read_text()).body)
    return found


# a module's own packages are left out: Python has begun loading them before it
GRAPH = {name: {m for m in _imports(name) if m in MODULES and m != name and not name.startswith(m + ".")}
         for name in MODULES}


def _cycle() -> list[str] | None:
    """One cycle of the import graph (its modules in order), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def walk(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(GRAPH[m]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state and (found := walk(n)):
                return found
        state[m] = 2
        path.pop()
        return None

    for m in sorted(GRAPH):
        if m not in state and (found := walk(m)):
            return found
    return None


def test_no_import_cycle():
    assert _cycle() is None, " -> ".join(_cycle())


def test_the_checker_finds_a_cycle():
    GRAPH["dasktree.split.types"].add("dasktree.forest.grow")  # grow -> split.api -> ... -> types
    try:
        cycle = _cycle()
    finally:
        GRAPH["dasktree.split.types"].discard("dasktree.forest.grow")
    assert cycle is not None and cycle[0] == cycle[-1]


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("dasktree.forest")))
def test_the_forest_reaches_the_split_search_through_its_face(name):
    split = {m for m in GRAPH[name] if m.startswith("dasktree.split")}
    assert split <= {"dasktree.split", "dasktree.split.api"}, f"{name} imports {sorted(split)}"


def test_production_code_never_imports_the_hooks():
    """Tests' and benchmarks' hooks reach production code through :mod:`dasktree.hook_points`
    (looked up in ``sys.modules``), never by an import of :mod:`dasktree.testing.hooks`."""
    for name in MODULES:
        if not name.startswith("dasktree.testing"):
            assert "dasktree.testing.hooks" not in _imports(name, loading=False), name
