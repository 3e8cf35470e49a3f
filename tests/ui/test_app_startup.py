"""What ``python app.py`` does before its page is served and right after (issue 24; the
figures are in docs/BENCHMARKS.md §3, measured by ``bench/ui_startup.py``)."""

from __future__ import annotations

import gc
import os

import pytest

from ui import setup_tab


@pytest.fixture
def app_main(monkeypatch, runs_dir):
    """``app.main`` with the Blocks replaced by a recorder of the collector's state."""
    import app
    import ui.blocks

    seen: dict[str, object] = {}

    class Recorder:
        def launch(self, **_kwargs):
            seen["launch"] = gc.isenabled()
            seen["backend"] = os.environ.get("MPLBACKEND")

        def block_thread(self):
            seen["serving"] = gc.isenabled()

    def build(_manager):
        if seen.get("fail"):
            raise RuntimeError("build failed")
        seen["build"] = gc.isenabled()
        return Recorder()

    monkeypatch.setattr(ui.blocks, "build_app", build)
    monkeypatch.setenv("BRACKET_RUNS_DIR", str(runs_dir))
    monkeypatch.delenv("BRACKET_AUTH", raising=False)
    monkeypatch.setenv("MPLBACKEND", "recorded")  # so that teardown restores what main sets
    monkeypatch.delenv("MPLBACKEND")
    frozen = gc.get_freeze_count()
    yield app, seen, frozen
    gc.unfreeze()  # leave the test process's collector as it was
    assert gc.isenabled()


def test_the_collector_pauses_while_the_app_builds_and_launches_then_freezes_what_startup_made(app_main):
    app, seen, frozen = app_main
    assert app.main(["--port", "7999"]) == 0
    assert seen == {"build": False, "launch": False, "backend": "Agg", "serving": True}
    assert gc.get_freeze_count() > frozen  # later full collections no longer walk startup's objects
    assert gc.isenabled()


def test_a_failed_start_leaves_the_collector_on_and_a_chosen_backend_alone(app_main, monkeypatch):
    app, seen, _ = app_main
    seen["fail"] = True
    with pytest.raises(RuntimeError, match="build failed"):
        app.main(["--port", "7999"])
    assert gc.isenabled()
    seen.clear()
    monkeypatch.setenv("MPLBACKEND", "svg")
    assert app.main(["--port", "7999"]) == 0
    assert seen["backend"] == "svg"


def test_the_page_fills_the_form_before_it_reads_the_past_sessions(runs_dir):
    """The page's load chain: the preset's notes, fields, pre-flight and estimate first; the
    past-session lists (which open every session in the runs folder) last."""
    from bracket.app.manager import SessionManager
    from ui.blocks import build_app

    demo = build_app(SessionManager(runs_dir))
    fns = list(demo.fns.values())
    loads = [f for f in fns if any(event == "load" for _, event in f.targets)]
    first = [f for f in loads if getattr(getattr(f.fn, "__wrapped__", None), "func", None) is setup_tab.on_load]
    assert len(first) == 1 and len(loads) == 1  # no gr.render of its own: the fields are slots on_load fills
    chain = [first[0]]
    while True:
        after = [f for f in fns if f.trigger_after is not None and demo.fns[f.trigger_after] is chain[-1]]
        if not after:
            break
        chain.extend(after)
    functions = [getattr(getattr(f.fn, "__wrapped__", f.fn), "func", f.fn) for f in chain]
    assert functions[0] is setup_tab.on_load and functions[-1] is setup_tab.load_lists
    ids = [[getattr(o, "elem_id", None) for o in f.outputs] for f in chain]
    assert "bk-preflight" in ids[0] and "bk-sessions" not in ids[0] and "bk-warm-from" not in ids[0]
    assert ids[-1] == ["bk-sessions", "bk-warm-from"]
