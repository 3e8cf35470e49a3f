"""App services: what the Gradio UI and the CLI call on top of the search engine (Gradio-free).

:class:`~bracket.app.manager.SessionManager` holds the app's current session; the Compare
grid (``grid``, ``thumbs``), the Setup form's parser (``forms``), background finals and
promotion (``jobs``, ``stages``), the snapshot cache and the Results tab's data (``results``)
live beside it. Direction of imports: ``ui`` -> ``bracket.app`` -> ``bracket.standings``,
``bracket.report.document``, ``bracket.report.export`` -> ``bracket.session``; nothing here imports ``ui``.
"""
