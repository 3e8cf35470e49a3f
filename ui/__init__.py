"""The Gradio user interface: one module per tab, assembled in :mod:`ui.blocks`.

The UI holds no business logic. It calls the engine (``bracket.session.manager``) and renders
what comes back (``ui.render``); errors a person can cause arrive as ``BracketError`` and are
shown with ``gr.Error`` (``ui.common.user_errors``). ``app.py`` launches it.
"""
