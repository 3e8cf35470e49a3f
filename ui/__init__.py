"""The Gradio user interface: one module per tab, assembled in :mod:`ui.blocks`.

The UI holds no business logic. It calls the engine (``bracket.app.manager``) and renders
what comes back (``ui.render``); errors a person can cause arrive as ``BracketError`` and are
shown inline, as a ``⚠`` line in the message box of the action (``ui.common.inline_errors``),
never as an overlay on other components. ``app.py`` launches it.
"""
