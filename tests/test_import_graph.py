"""The server's modules import each other one way: down the layers, never in a circle,
not even through an import behind ``TYPE_CHECKING`` or inside a function.

The layers, highest first. A module may import modules of its own group and of lower
layers only; two groups of one layer do not import each other.

===== ====================== =========================================================
layer group                  modules
===== ====================== =========================================================
7     ``app``                ``server/app.py``: the composition root
6     ``api``, ``socket``    ``server/api/`` (the HTTP edge), ``server/socket/`` (the
                             WebSocket edge); neither imports the other
5     ``hub``                ``server/hub.py``, ``server/policy.py``, ``server/rated_seats.py``
                             and ``server/tournaments/`` (the tournaments' runner)
4     ``cluster``            ``server/cluster/``
3     ``table``              ``server/table/``
2     ``base``               every other module of ``server/`` (``addresses``, ``auth``,
                             ``edge``, ``errors``, ``limits``, ``logs``, ``metrics``,
                             ``migrate``, ``assets`` ...) and the package itself
1     ``outside``            what the server is built on: ``store/``, ``rules/``,
                             ``bots/``, ``ratings/``, ``tournaments/``, ``analysis/``,
                             ``settings``, ``names``
===== ====================== =========================================================

So nothing imports ``api/`` but ``app``; ``table/`` never imports the hub, the policy,
the cluster or an edge, directly or through another module. The rest of the package
(the command line, the terminal client, the tools beside them) stands over the server
and is not layered here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "sahrat"
SERVER = "sahrat.server"

# group -> layer (higher imports lower)
LAYERS = {
    "app": 7,
    "api": 6,
    "socket": 6,
    "hub": 5,
    "cluster": 4,
    "table": 3,
    "base": 2,
    "outside": 1,
}
FOLDERS = {"api", "socket", "cluster", "table"}  # server/<folder>/: the folder's group
# server/<module>.py outside base
TOP = {"app": "app", "hub": "hub", "policy": "hub", "rated_seats": "hub", "tournaments": "hub"}
OUTSIDE = {"store", "rules", "bots", "ratings", "settings", "names", "tournaments", "analysis"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(folder: Path) -> dict[str, set[str]]:
    """Every module under ``folder`` and the modules of the same package it imports,
    wherever the import statement stands."""
    modules = {_module_name(path): path for path in folder.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base]) if base else ".".join(anchor)
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def group_of(module: str) -> str | None:
    """The layer group of a module of the package, or None if it is not layered."""
    parts = module.split(".")
    if parts[:2] != ["sahrat", "server"]:
        return "outside" if len(parts) > 1 and parts[1] in OUTSIDE else None
    if len(parts) == 2:
        return "base"
    if parts[2] in FOLDERS:
        return parts[2]
    return TOP.get(parts[2], "base")


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that goes up a layer or across to another group of the same layer."""
    found = []
    for module, imported in sorted(graph.items()):
        group = group_of(module)
        if group is None:
            continue
        for target in sorted(imported):
            other = group_of(target)
            if other is None or other == group or LAYERS[other] < LAYERS[group]:
                continue
            found.append(f"{module} ({group}) imports {target} ({other})")
    return found


def reachable(graph: dict[str, set[str]], starts: Iterable[str]) -> dict[str, list[str]]:
    """Every module the ``starts`` import, directly or not, with one chain of imports
    that leads to it from a start."""
    chains: dict[str, list[str]] = {start: [start] for start in starts}
    todo = list(chains)
    while todo:
        module = todo.pop()
        for nxt in sorted(graph[module]):
            if nxt not in chains:
                chains[nxt] = [*chains[module], nxt]
                todo.append(nxt)
    return chains


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that returns to its start, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


@pytest.fixture(scope="module")
def package_graph() -> dict[str, set[str]]:
    found = import_graph(PACKAGE)
    # the graph is read: the HTTP edge's dependencies name the hub and the tables' refusal
    assert {f"{SERVER}.hub", f"{SERVER}.table.errors"} <= found[f"{SERVER}.api.deps"]
    return found


def test_every_group_has_modules(package_graph: dict[str, set[str]]) -> None:
    graph = package_graph
    """The layer table names the package as it is (a renamed folder fails here)."""
    groups = {group_of(module) for module in graph}
    assert set(LAYERS) <= groups, set(LAYERS) - groups


def test_the_server_imports_one_way(package_graph: dict[str, set[str]]) -> None:
    graph = package_graph
    server = {name: deps for name, deps in graph.items() if name.startswith(SERVER)}
    server = {name: {t for t in deps if t in server} for name, deps in server.items()}
    cycle = find_cycle(server)
    assert cycle is None, " → ".join(cycle or [])


def test_imports_go_down_the_layers(package_graph: dict[str, set[str]]) -> None:
    graph = package_graph
    violations = layer_violations(graph)
    assert not violations, "\n".join(violations)


def test_nothing_but_the_app_imports_the_http_edge(package_graph: dict[str, set[str]]) -> None:
    graph = package_graph
    api = f"{SERVER}.api"
    importers = sorted(
        module
        for module, imported in graph.items()
        if group_of(module) != "api" and any(t == api or t.startswith(f"{api}.") for t in imported)
    )
    assert importers in ([], [f"{SERVER}.app"]), importers


def test_a_table_never_imports_the_hub_or_a_transport(package_graph: dict[str, set[str]]) -> None:
    graph = package_graph
    tables = [module for module in graph if group_of(module) == "table"]
    assert f"{SERVER}.table.table" in tables
    outer = {"app", "api", "socket", "hub", "cluster"}
    chains = reachable(graph, tables)
    found = [" → ".join(chain) for module, chain in chains.items() if group_of(module) in outer]
    assert not found, "\n".join(sorted(found))


@pytest.mark.parametrize(
    ("module", "group"),
    [
        ("sahrat.server.app", "app"),
        ("sahrat.server.api.deps", "api"),
        ("sahrat.server.socket", "socket"),
        ("sahrat.server.policy", "hub"),
        ("sahrat.server.cluster.bus", "cluster"),
        ("sahrat.server.table.table", "table"),
        ("sahrat.server.errors", "base"),
        ("sahrat.server", "base"),
        ("sahrat.store.tickets", "outside"),
        ("sahrat.settings", "outside"),
        ("sahrat.ratings", "outside"),
        ("sahrat.cli", None),
    ],
)
def test_the_layer_table(module: str, group: str | None) -> None:
    assert group_of(module) == group


def test_the_layer_rule_finds_what_goes_up_or_across() -> None:
    graph = {
        "sahrat.server.table.a": {"sahrat.server.errors", "sahrat.server.table.b"},
        "sahrat.server.table.b": {"sahrat.store.models"},
        "sahrat.server.cluster.c": {"sahrat.server.socket.dispatch"},
        "sahrat.server.socket.dispatch": {"sahrat.server.api.deps", "sahrat.server.hub"},
        "sahrat.store.models": {"sahrat.server.errors"},
        "sahrat.cli": {"sahrat.server.app"},
    }
    assert layer_violations(graph) == [
        "sahrat.server.cluster.c (cluster) imports sahrat.server.socket.dispatch (socket)",
        "sahrat.server.socket.dispatch (socket) imports sahrat.server.api.deps (api)",
        "sahrat.store.models (outside) imports sahrat.server.errors (base)",
    ]


@pytest.mark.parametrize(
    ("graph", "cycle"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
        ({"a": {"a2"}, "a2": set(), "b": {"b"}}, ["b", "b"]),
    ],
)
def test_the_cycle_finder_finds_cycles(graph: dict[str, set[str]], cycle: list[str] | None) -> None:
    assert find_cycle(graph) == cycle
