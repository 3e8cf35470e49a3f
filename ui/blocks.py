"""Assembling the app: four tabs around one module-level :class:`SessionManager`, and launching it.

:func:`build_app` returns the ``gr.Blocks``; :func:`launch_options` the keyword arguments
of ``launch`` that keep file serving to the runs folder (``allowed_paths=[runs_dir]``,
the project's ``.env`` blocked), put :class:`ui.host_guard.HostGuard` in front of every route
(foreign ``Host``, another ``Origin``, uploads and bodies over 1 MB refused, logins throttled), the CSS and
the lightbox script, and no run-history recording. ``app.py`` parses the command line and calls both.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import gradio as gr
from starlette.middleware import Middleware

from bracket import settings as app_settings
from bracket.app.manager import SessionManager
from ui import compare_tab, results_tab, search_tab, setup_tab
from ui.assets import CSS, HEAD
from ui.common import PRIVATE
from ui.host_guard import HostGuard, HostPolicy

TITLE = "Bracket — hyperparameter search for fine-tunes"


def build_app(manager: SessionManager) -> gr.Blocks:
    """The Blocks of the app; every listener is private (no public API)."""
    with gr.Blocks(title=TITLE, analytics_enabled=False) as demo:
        gr.Markdown("## Bracket\nShort real training runs · side-by-side samples · your scores · Optuna TPE")
        with gr.Tabs(selected="setup", elem_id="bk-tabs") as tabs:
            # the Search tab's message line: Setup's Start, Open and Resume, which bring that tab up, say there
            # what they did (said only on Setup, it was out of sight)
            control_md = gr.Markdown(elem_id="bk-control-status", render=False)
            with gr.Tab("Setup", id="setup", elem_id="bk-tab-setup"):
                setup = setup_tab.build(manager, tabs, control_md)
            with gr.Tab("Search", id="search", elem_id="bk-tab-search"):
                search_tab.build(manager, control_md)
            with gr.Tab("Compare", id="compare", elem_id="bk-tab-compare") as compare:
                compare_parts = compare_tab.build(manager)
            with gr.Tab("Results", id="results", elem_id="bk-tab-results") as results:
                results_parts = results_tab.build(manager)
        # the load chain fills the form in the one ordered path of preset switches (FORM_ORDER): a
        # person's switch sent meanwhile is answered after the step before it, never before
        order = {**PRIVATE, **setup_tab.FORM_ORDER}
        demo.load(setup["load"], [setup["preset"], setup["budget"]], setup["load_outputs"], **order).then(
            setup["reflect_on_load"], setup["preset"], setup["form_outputs"], js=setup_tab.UNLESS_PICKED_JS,
            **order).then(  # the form shows the open session, unless a person picked a preset meanwhile
            setup["space_preview"], setup["space_inputs"], setup["space_outputs"], **order).then(
            functools.partial(setup_tab.load_lists, manager), [setup["preset"], setup["loaded"]],
            [setup["sessions"], setup["warm_from"]], **order)  # last: they open every past session
        compare.select(compare_parts["refresh"], None, compare_parts["runs"], **PRIVATE)
        results.select(results_parts["refresh"], None, results_parts["outputs"], **PRIVATE).then(
            results_parts["refresh_report"], None, results_parts["report_outputs"], **PRIVATE)  # the board first
        results.select(results_parts["refresh_more"], None, results_parts["more"], **PRIVATE)
    for function in demo.fns.values():
        # gr.render registers its own re-render trigger as "undocumented" (callable by name); no
        # endpoint of this app is an API, so make those private too.
        function.api_visibility = "private"
    return demo


def launch_options(runs_dir: Path, policy: HostPolicy | None = None) -> dict[str, Any]:
    """``launch`` arguments: serve the runs folder and nothing else, behind the host guard; our CSS."""
    # secrets never go out, even if someone points the runs folder at a folder holding them
    blocked = [str(app_settings.PROJECT_ROOT / ".env"), str(Path(runs_dir).resolve() / ".env")]
    return {
        "allowed_paths": [str(Path(runs_dir).resolve())],
        "blocked_paths": blocked,
        "css": CSS,
        "head": HEAD,
        "footer_links": ["gradio", "settings"],
        "run_history": False,
        "show_error": False,
        # FastAPI(middleware=...): the guard runs before any route of Gradio's
        "app_kwargs": {"middleware": [Middleware(HostGuard, policy=policy or HostPolicy())]},
        "max_file_size": "1mb",
    }
