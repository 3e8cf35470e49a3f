"""The imports of the ``bracket`` package point one way: no circle, and the package rules hold.

The graph is read from the source with :mod:`ast`, not by importing anything: every ``import``
and ``from ... import`` statement of every module counts, wherever it stands — at module level,
inside a function (a lazy import is still a dependency), or under ``if TYPE_CHECKING:`` (a type
named from another module ties the two together just the same). Relative imports are resolved
against the importing module's package, and ``from pkg import name`` points at ``pkg.name``
when that is a module of the package, else at ``pkg``. Importing ``pkg.mod`` also runs
``pkg/__init__``, but that implied edge is not drawn: a package whose ``__init__`` imports its
own modules is not a circle.

The intended direction (docs/ARCHITECTURE.md): ui, cli → app services → {standings, status, report}
→ session → {search, trainer, judge, dataset}; trainer → {search, fields}.
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "bracket"
#: the house's packages the graph walks: the engine, the Gradio front end, the benchmarks
PACKAGES = tuple(PACKAGE.parent / name for name in ("bracket", "ui", "bench"))

#: (modules the rule is about, modules they must never import, why). Patterns are fnmatch
#: patterns over dotted module names; ``bracket.report*`` covers the report package.
RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("bracket*", ("ui", "ui.*", "gradio", "gradio.*"), "the engine never imports the Gradio front end"),
    ("bracket.session*", ("bracket.report*", "bracket.standings*", "bracket.status*", "bracket.app*"),
     "session is below the app services, standings, status and report"),
    ("bracket.search*", ("bracket.trainer*", "bracket.session*"), "search knows nothing of trainers or sessions"),
    ("bracket.standings*", ("bracket.app*",), "the standings are below the app services"),
    ("bracket.report*", ("bracket.app*",), "the report, the export and redaction are below the app services"),
    ("bracket.optuna_access.quiet", ("bracket", "bracket.*"), "the Optuna import sits below everything in bracket"),
    ("bracket.optuna_access.private", ("bracket", "bracket.*"),
     "Optuna's private names sit below everything in bracket"),
    ("bench*", ("ui", "ui.*", "gradio", "gradio.*"), "the engine's benchmarks never import the front end"),
    ("ui*", ("bench", "bench.*"), "the front end never imports the benchmarks"),
    ("bracket.trainer*", ("bracket.registry", "bracket.session*", "bracket.app*", "bracket.cli*"),
     "trainers are below the registry, sessions and the app services"),
    ("bracket.fields", ("bracket.trainer*", "bracket.registry", "bracket.session*", "bracket.app*"),
     "field specs sit below trainers and presets"),
    ("bracket.judge*", ("bracket.session*",), "judges are pure: they score what they are given"),
    ("bracket.dataset*", ("bracket.session*",), "dataset checks are below sessions"),
    ("bracket.report.charts", ("bracket", "bracket.*"), "charts are pure drawing of plain data"),
    ("bracket.report.render", ("bracket", "bracket.*"), "the report's layout is pure drawing of plain data"),
    ("bracket.status*", ("bracket.app*", "bracket.cli*"),
     "the status view is below the app services and the command line that both use it"),
    ("bracket.cli.args", ("bracket.session*", "bracket.app*", "bracket.trainer*"),
     "the argument parser is light, so --help and a mistyped flag answer at once"),
)

#: modules a rule of the same ``who`` pattern does not cover, and why
EXEMPT: dict[str, tuple[str, ...]] = {
    "bench*": ("bench.ui_latency", "bench.ui_poll", "bench.ui_restart", "bench.ui_startup", "bench.why_column"),
}  # the UI benchmarks measure the front end itself

#: what ``ui`` may import of the engine (docs/ARCHITECTURE.md: ui -> bracket.app)
UI_MAY_IMPORT = ("bracket.app", "bracket.app.*", "bracket.errors")
#: ``ui.x imports bracket.y`` the front end still does past the app services: debt, to be moved
#: behind ``bracket.app`` (a new one fails; one that is gone must leave this list)
UI_DEBT = frozenset({
    "ui.blocks imports bracket",  # the version string
    "ui.render imports bracket.session.loop.plan",
    "ui.setup_preset imports bracket.dataset.preflight", "ui.setup_preset imports bracket.fields",
    "ui.setup_preset imports bracket.registry", "ui.setup_preset imports bracket.session.search_settings",
    "ui.setup_space imports bracket.session.search_settings",
    "ui.setup_tab imports bracket.registry",
})
#: import circles kept, and why (a new one fails)
KNOWN_CIRCLES = (
    # the fake trainer looks up a taste's surface
    ["bench.landscape_trainer", "bench.oracle", "bench.landscape_trainer"],
)


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (packages by their ``__init__``)."""
    return {module_name(path, root): path for path in sorted(root.rglob("*.py"))}


def imported(name: str, path: Path, known: Iterable[str]) -> set[str]:
    """The modules ``name`` (at ``path``) imports, absolute, anywhere in its source."""
    known = set(known)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                child = f"{target}.{alias.name}"
                found.add(child if child in known else target)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the modules it imports (all of them, inside the package or not)."""
    every = modules(root)
    return {name: imported(name, path, every) for name, path in every.items()}


def tangles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of the graph (Tarjan): modules that all reach each other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    parts: list[list[str]] = []

    def visit(start: str) -> None:  # iterative, so a deep graph cannot hit the recursion limit
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        part.append(member)
                        if member == node:
                            break
                    if len(part) > 1 or node in graph.get(node, ()):
                        parts.append(sorted(part))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return parts


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle per tangle, as ``[a, b, ..., a]``."""
    return [_circle(part, graph) for part in tangles(graph)]


def _circle(part: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest circle through the first module of a strongly connected part (breadth-first)."""
    members, start = set(part), part[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & members):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if nxt not in came_from:
                    came_from[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no circle through {start}")  # pragma: no cover - a part always has one


def violations(graph: dict[str, set[str]]) -> list[str]:
    """``a imports b: why`` for every import that breaks a rule of :data:`RULES`."""
    found = []
    for who, forbidden, why in RULES:
        for name in sorted(n for n in graph if fnmatch.fnmatchcase(n, who) and n not in EXEMPT.get(who, ())):
            for target in sorted(graph[name]):
                if any(fnmatch.fnmatchcase(target, pattern) for pattern in forbidden):
                    found.append(f"{name} imports {target} ({why})")
    return found


def house_graph(roots: Iterable[Path] = PACKAGES) -> dict[str, set[str]]:
    """The graphs of every package of the house, in one."""
    graph: dict[str, set[str]] = {}
    for root in roots:
        graph.update(import_graph(root))
    return graph


def ui_reach(graph: dict[str, set[str]]) -> set[str]:
    """``ui.x imports bracket.y`` for every import of the engine the front end makes past the app services."""
    return {f"{name} imports {target}" for name, targets in graph.items() if name == "ui" or name.startswith("ui.")
            for target in targets if (target == "bracket" or target.startswith("bracket."))
            and not any(fnmatch.fnmatchcase(target, pattern) for pattern in UI_MAY_IMPORT)}


def study_makers_without_quiet(roots: Iterable[Path] = (PACKAGE,)) -> list[str]:
    """Modules that make or load a study (``.create_study`` / ``.load_study``) but do not import
    ``bracket.optuna_access.quiet`` (the one way Optuna is imported there, its INFO lines off)."""
    found = []
    for root in roots:
        every = modules(root)
        for name, path in every.items():
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            makes = any(isinstance(n, ast.Attribute) and n.attr in ("create_study", "load_study")
                        for n in ast.walk(tree))
            quiet = "bracket.optuna_access.quiet"
            if makes and name != quiet and quiet not in imported(name, path, every):
                found.append(name)
    return sorted(found)


GRAPH = house_graph()


def test_the_graph_reads_every_kind_of_import(tmp_path):
    """The walker sees imports inside functions, under TYPE_CHECKING and relative ones, and
    finds a planted circle — so the two tests below could fail."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("from . import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import x\n")
    (pkg / "c.py").write_text("import pkg.a\nimport gradio as gr\nx = 1\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"typing", "pkg.sub.b"}
    assert graph["pkg.sub"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.c"}
    assert graph["pkg.c"] == {"pkg.a", "gradio"}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]]
    assert cycles({"x": {"x"}}) == [["x", "x"]]


def test_the_package_graph_is_the_real_one():
    assert len(GRAPH) > 50
    assert "bracket.cli.commands" in GRAPH["bracket.cli"]


def test_no_import_circle_in_the_house():
    found = [f"{' -> '.join(_circle(part, GRAPH))}" + (f"  (tangle of {len(part)}: {', '.join(part)})"
                                                       if len(part) > 2 else "") for part in tangles(GRAPH)
             if _circle(part, GRAPH) not in KNOWN_CIRCLES]
    assert not found, "import circles (each module imports the next):\n" + "\n".join(found)


def package_of(module: str) -> str:
    """The package a module belongs to for the package-level graph: ``bracket.<sub>`` for the
    engine's subpackages (``bracket.session.store.records`` → ``bracket.session``), ``ui`` and
    ``bench`` whole, and each root module of ``bracket`` on its own."""
    parts = module.split(".")
    if parts[0] in ("ui", "bench"):
        return parts[0]
    return ".".join(parts[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph folded onto packages (imports inside one package dropped)."""
    folded: dict[str, set[str]] = {}
    for name, targets in graph.items():
        here = package_of(name)
        folded.setdefault(here, set()).update(package_of(t) for t in targets if t in graph and package_of(t) != here)
    return folded


def test_no_circle_between_packages():
    """Two packages that import each other (``standings`` ↔ ``status``) are one layer in two
    folders, even when no two modules form a circle."""
    found = [" -> ".join(_circle(part, package_graph(GRAPH))) for part in tangles(package_graph(GRAPH))]
    assert not found, "packages that import each other:\n" + "\n".join(found)


def test_the_package_graph_catches_a_planted_circle():
    graph = {"bracket.standings": {"bracket.standings.board"}, "bracket.standings.board": set(),
             "bracket.status.text": {"bracket.standings.board"},
             "bracket.standings.past": {"bracket.status.view"}, "bracket.status.view": set()}
    assert not tangles(graph)  # no circle between modules ...
    assert tangles(package_graph(graph)) == [["bracket.standings", "bracket.status"]]  # ... but between packages


def test_imports_follow_the_package_rules():
    found = violations(GRAPH)
    assert not found, "imports against the package direction:\n" + "\n".join(found)


def test_a_rule_catches_a_wrong_import():
    assert violations({"bracket.judge.loss": {"bracket.session.store.database"}, "bracket.ui_free": {"gradio"},
                       "bracket.search.space": {"bracket.trainer.base"}}) == [
        "bracket.ui_free imports gradio (the engine never imports the Gradio front end)",
        "bracket.search.space imports bracket.trainer.base (search knows nothing of trainers or sessions)",
        "bracket.judge.loss imports bracket.session.store.database (judges are pure: they score what they are given)"]


def test_the_graph_walks_ui_and_bench_too():
    assert {"ui.blocks", "ui.render", "bench.steering", "bench.common"} <= set(GRAPH)
    assert "ui.render" in GRAPH["bench.why_column"]


def test_the_front_end_imports_the_engine_only_through_the_app_services():
    found = ui_reach(GRAPH)
    assert not found - UI_DEBT, "ui imports past bracket.app:\n" + "\n".join(sorted(found - UI_DEBT))
    assert not UI_DEBT - found, "gone from ui, drop from UI_DEBT:\n" + "\n".join(sorted(UI_DEBT - found))


def test_a_study_is_made_only_where_optuna_comes_through_the_quiet_import():
    assert not study_makers_without_quiet(), study_makers_without_quiet()


def test_the_new_rules_catch_planted_violations(tmp_path):
    pkg = tmp_path / "bracket"
    (pkg / "standings").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "standings" / "__init__.py").write_text("from bracket.app import manager\n")
    (pkg / "optuna_access").mkdir()
    (pkg / "optuna_access" / "quiet.py").write_text("import bracket.errors\n")
    (pkg / "maker.py").write_text("import optuna\nstudy = optuna.create_study()\n")
    (pkg / "quiet.py").write_text("from bracket.optuna_access.quiet import optuna_module\n"
                                  "optuna_module().load_study()\n")
    ui = tmp_path / "ui"
    ui.mkdir()
    (ui / "tab.py").write_text("from bracket.app.manager import SessionManager\nfrom bracket.session import store\n"
                               "import bench.tables\n")
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "ui_poll.py").write_text("import ui.tab\n")
    (bench / "search.py").write_text("def f():\n    import gradio\n")
    graph = house_graph((pkg, ui, bench))
    assert violations(graph) == [
        "bracket.standings imports bracket.app (the standings are below the app services)",
        "bracket.optuna_access.quiet imports bracket.errors (the Optuna import sits below everything in bracket)",
        "bench.search imports gradio (the engine's benchmarks never import the front end)",
        "ui.tab imports bench.tables (the front end never imports the benchmarks)"]
    assert ui_reach(graph) == {"ui.tab imports bracket.session"}
    assert study_makers_without_quiet((pkg,)) == ["bracket.maker"]
