"""The layout's rules (docs/layout.md), read from the code's own imports, those made inside functions
too: the rooms stand on the floors the doc's picture draws and import only rooms below them (so no
cycle among them), no module imports another at load time in a cycle, every room enters the split
search by its face, Dask is imported only where the doc says, production code never imports the
tests' helpers."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dasktree"
LAYOUT = ROOT / "docs" / "layout.md"


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
                names = {f"{module}.{a.name}" for a in node.names}
                found.update(names)
                if node.module or names - set(MODULES):  # ``from . import x`` of a submodule uses x alone
                    found.add(module)
            if not loading or isinstance(node, (ast.If, ast.Try, ast.With)):  # these run on loading
                visit(ast.iter_child_nodes(node))

    visit(ast.parse(path.read_text()).body)
    return found


def _edges(loading: bool) -> dict[str, set[str]]:
    """Module -> the package's modules it imports. At load time a module's own packages are left out
    (Python has begun loading them before it); among every import, ``from dasktree import
    __version__`` is a use of the package's ``__init__.py``, a room of its own."""
    def kept(name: str, m: str) -> bool:
        return m in MODULES and m != name and (not name.startswith(m + ".") or (not loading and m == "dasktree"))

    return {name: {m for m in _imports(name, loading) if kept(name, m)} for name in MODULES}


GRAPH = _edges(loading=True)  # at load time: a cycle here is an ImportError waiting for an order
ALL = _edges(loading=False)  # every import, those inside functions too: the rooms' real uses


def _room(module: str) -> str:
    """A module's room as the picture names it: ``engine/``, ``fit.py``, ``__init__.py`` (the package's)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__.py"
    return parts[1] + ("/" if (PACKAGE / parts[1]).is_dir() else ".py")


def _floors() -> list[list[str]]:
    """The picture of docs/layout.md's "The house": its floors, the top one first, each its rooms."""
    text = LAYOUT.read_text()
    block = re.search(r"^## The house\n.*?^```text\n(.*?)^```", text, re.M | re.S)
    assert block, "docs/layout.md has no picture under '## The house'"
    floors = []
    for line in block.group(1).splitlines():
        rooms = re.split(r"\s{2,}", line.strip())[0]
        floors.append([r.strip() for r in rooms.split(",")])
    return floors


FLOORS = _floors()
FLOOR = {room: len(FLOORS) - i for i, floor in enumerate(FLOORS) for room in floor}  # 1: the ground floor

ALLOWED: dict = {
    # Upward imports a rewrite still has to remove, each with its reason: delete each entry when its
    # import is gone (test_every_allowance_is_still_needed says which).
}
"""(module, imported module) -> why the import may break the floors' rule, for now."""


def _crossings() -> dict[tuple[str, str], tuple[str, str]]:
    """Every import from one room into another: (module, imported) -> (its room, the imported's room)."""
    return {(a, b): (_room(a), _room(b)) for a in ALL for b in ALL[a] if _room(a) != _room(b)}


def test_the_picture_names_every_room_once():
    named = [room for floor in FLOORS for room in floor]
    assert len(named) == len(set(named)), f"named twice: {sorted({r for r in named if named.count(r) > 1})}"
    rooms = {_room(m) for m in MODULES}
    assert rooms - set(named) == set(), f"rooms the picture lacks: {sorted(rooms - set(named))}"
    assert set(named) - rooms == set(), f"the picture names what is not there: {sorted(set(named) - rooms)}"


def test_no_room_imports_a_room_on_its_floor_or_above():
    upward = sorted(f"{a} -> {b} ({ra} on floor {FLOOR[ra]}, {rb} on floor {FLOOR[rb]})"
                    for (a, b), (ra, rb) in _crossings().items()
                    if FLOOR[rb] >= FLOOR[ra] and (a, b) not in ALLOWED)
    assert not upward, "\n".join(upward)


def test_every_allowance_is_still_needed():
    crossings = _crossings()
    stale = [edge for edge in ALLOWED
             if edge not in crossings or FLOOR[crossings[edge][1]] < FLOOR[crossings[edge][0]]]
    assert not stale, f"allowed imports that are gone or no longer upward: {stale}"


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (its nodes in order), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def walk(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state and (found := walk(n)):
                return found
        state[m] = 2
        path.pop()
        return None

    for m in sorted(graph):
        if m not in state and (found := walk(m)):
            return found
    return None


def _rooms_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {_room(m): set() for m in MODULES}
    for (a, b), (ra, rb) in _crossings().items():
        if (a, b) not in ALLOWED:
            graph[ra].add(rb)
    return graph


def test_no_cycle_among_the_rooms():
    cycle = _cycle(_rooms_graph())
    assert cycle is None, " -> ".join(cycle)


def test_no_import_cycle_at_load_time():
    cycle = _cycle(GRAPH)
    assert cycle is None, " -> ".join(cycle)


def test_the_checkers_find_a_cycle_and_an_upward_import():
    GRAPH["dasktree.split.types"].add("dasktree.levels.grow")  # grow -> split.api -> ... -> types
    try:
        cycle = _cycle(GRAPH)
    finally:
        GRAPH["dasktree.split.types"].discard("dasktree.levels.grow")
    assert cycle is not None and cycle[0] == cycle[-1]
    ALL["dasktree.kernels.histogram"].add("dasktree.engine.part_tasks")  # inside a function is enough
    try:
        rooms = _rooms_graph()
        crossings = _crossings()
    finally:
        ALL["dasktree.kernels.histogram"].discard("dasktree.engine.part_tasks")
    assert "engine/" in rooms["kernels/"] and _cycle(rooms) is not None
    assert crossings[("dasktree.kernels.histogram", "dasktree.engine.part_tasks")] == ("kernels/", "engine/")


FACE_ALLOWED = {
    # Imports past split's face in files the task object's rewrite (issue #51, item 1) replaces or
    # removes; split/api.py already holds every name they take: delete each entry when its import is gone.
    ("dasktree.params", "dasktree.split.search"): "task: the parameters' SplitParams",
    ("dasktree.params.regression", "dasktree.split.regression"): "task: the regression criteria",
    ("dasktree.regress.prune", "dasktree.split.regression"): "task: regression's pruning",
}
"""(module, split's internal module) -> why it may pass by the face, for now."""


@pytest.mark.parametrize("name", sorted(m for m in MODULES if not m.startswith("dasktree.split")))
def test_every_room_reaches_the_split_search_through_its_face(name):
    split = {m for m in ALL[name] if m.startswith("dasktree.split")}
    allowed = {b for (a, b) in FACE_ALLOWED if a == name}
    assert split - allowed <= {"dasktree.split", "dasktree.split.api"}, f"{name} imports {sorted(split)}"


def test_every_allowance_past_the_face_is_still_needed():
    stale = [edge for edge in FACE_ALLOWED if edge[1] not in ALL[edge[0]]]
    assert not stale, f"allowed imports past split's face that are gone: {stale}"


DASK = ("dask", "distributed", "dask_expr")  # dask_expr: the DataFrame's engine, once a package of its own
DASK_ROOMS = ("dasktree.engine", "dasktree.estimator_input", "dasktree.testing")
"""Where docs/layout.md says Dask may be imported."""


@pytest.mark.parametrize("name", sorted(m for m in MODULES if not m.startswith(DASK_ROOMS)))
def test_dask_is_imported_only_in_the_engine_and_the_input_adapter(name):
    dask = sorted(m for m in _imports(name, loading=False) if m.split(".")[0] in DASK)
    assert not dask, f"{name} imports {dask}"


def test_no_private_module_of_dask_is_imported():
    """A module of Dask's whose name begins with ``_`` is its inside, free to change in any release."""
    for name in MODULES:
        private = sorted(m for m in _imports(name, loading=False)
                         if m.split(".")[0] in DASK and any(p.startswith("_") for p in m.split(".")))
        assert not private, f"{name} imports {private}"


def test_the_layout_names_where_dask_is_imported():
    text = " ".join(LAYOUT.read_text().split())
    assert "Dask is imported in `engine/`, in the one input adapter `estimator_input.py`" in text
    assert "and in `testing/`; nowhere else" in text


def test_production_code_never_imports_the_tests_helpers():
    """Tests' and benchmarks' hooks reach production code through :mod:`dasktree.hook_points`
    (looked up in ``sys.modules``), never by an import of :mod:`dasktree.testing`."""
    for name in MODULES:
        if not name.startswith("dasktree.testing"):
            testing = sorted(m for m in _imports(name, loading=False) if m.startswith("dasktree.testing"))
            assert not testing, f"{name} imports {testing}"
