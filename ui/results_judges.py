"""Results: fidelity against flexibility, the answer picked on its front, and trust in each judge.

* **Fidelity against flexibility** — every config of the winner's stage at its best step
  (x: likeness, y: prompt-following; ``SessionManager.results.front``, from the standings), the
  front joined by a line, the answer starred, the best combined score ringed, and the sentence
  that says which point is the winner and why. *Answer* lists the configs on the front: **Use as
  the answer** stores the pick in the session (``results.pick``), so the leaderboard's winner,
  ``status``, the report and the export follow it.
* **How far each judge agrees with you** — per automatic judge, the share of the person's blind
  choices and of the pairs of their rated runs it agrees with, n and the 95 % interval
  (``results.trust``). A judge no better than chance says so in its row, and gets a button
  that sets its weight to 0 (``results.set_weight``, the path of ``python -m bracket weights``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import gradio as gr
import pandas as pd
import plotly.graph_objects as go

from bracket.app.judge_text import NO_AGREEMENT, point_label, settable
from bracket.app.manager import SessionManager
from ui.common import PRIVATE, QUIET, inline_errors

NO_FRONT = ("*No config has likeness and prompt-following scores yet (the image judges), so there is no front of "
            "fidelity against flexibility.*")
WINNER = "the winner (best combined score)"
TRUST_COLUMNS = ["judge", "weight", "blind choices it agrees with", "pairs of ratings it orders alike", "verdict"]


def front_figure(front: Any) -> go.Figure | None:
    """The scatter of ``front`` (``bracket.standings.front.Front``); None without one."""
    if front is None:
        return None
    figure = go.Figure()
    off = [p for p in front.points if not p.on_front]
    on = sorted(front.on_front, key=lambda p: p.fidelity)
    for points, name, mode in ((off, "beaten on both", "markers"), (on, "front", "lines+markers")):
        if points:
            figure.add_trace(go.Scatter(
                x=[p.fidelity for p in points], y=[p.flexibility for p in points], mode=mode, name=name,
                text=[point_label(p, front.points) for p in points],
                hoverinfo="text"))
    for config_id, name, marker in ((front.answer_id, "the answer", {"symbol": "star", "size": 18}),
                                    (front.best_id, "best combined score",
                                     {"symbol": "circle-open", "size": 20, "line": {"width": 2}})):
        point = front.point(config_id)
        if point is not None:
            figure.add_trace(go.Scatter(x=[point.fidelity], y=[point.flexibility], mode="markers+text", name=name,
                                        text=[point.name], textposition="top center", marker=marker))
    figure.update_layout(title="Fidelity against flexibility (each config at its best step)", height=380,
                         xaxis_title="likeness (fidelity)", yaxis_title="prompt-following (flexibility)",
                         margin={"l": 50, "r": 10, "t": 40, "b": 40})
    return figure


def trust_frame(trust: Sequence[Any]) -> pd.DataFrame:
    return pd.DataFrame([[t.judge, "-" if t.weight is None else f"{t.weight:g}", t.choices.text(), t.ratings.text(),
                          t.verdict] for t in trust], columns=TRUST_COLUMNS)


def can_zero(trust: Sequence[Any]) -> list[str]:
    """The judges no better than chance whose weight can be set to 0 here (weighted now)."""
    return [t.judge for t in trust if t.chance and settable(t.judge) and (t.weight or 0) > 0]


def trust_note(trust: Sequence[Any], unknown: str = "") -> str:
    """The note under the trust table; ``unknown``: why no agreement is known (``Results.no_agreement``)."""
    if not any(t.known for t in trust):
        why = unknown or f"No agreement is known: {NO_AGREEMENT.split(': ')[0]}."
        return f"*{why} Rate runs or compare pairs on Compare.*"
    chance = [t.judge for t in trust if t.chance]
    text = ("Blind choices: Wilson 95 % interval; ratings: the wider of a bootstrap over the rated runs and Wilson's. "
            "*No better than chance*: no interval lies above 50 %.")
    if chance:
        text += (f"\n\n**No better than chance: {', '.join(chance)}** — a weight on such a judge is a guess; "
                 "a button below sets a weighted one's to 0.")
    return text


def refresh(manager: SessionManager) -> tuple[Any, str, Any, Any, str, list[str]]:
    """(plot, why, answer list, trust table, trust note, judges that can be set to 0)."""
    if manager.session is None:
        return None, NO_FRONT, gr.Dropdown(choices=[], value=None), None, "", []
    front, trust = manager.results.front(), manager.results.trust()
    if front is None:
        answer = gr.Dropdown(choices=[], value=None)
        why = NO_FRONT
    else:
        choices = [(WINNER, "")] + [(p.name, p.name) for p in front.on_front if p.config_id != front.best_id]
        picked = front.point(front.pick_id)
        answer = gr.Dropdown(choices=choices, value=picked.name if picked else "")
        why = front.why + (f"\n\n*Note: {front.note}.*" if front.note else "")
    return front_figure(front), why, answer, trust_frame(trust), \
        trust_note(trust, manager.results.no_agreement()), can_zero(trust)


@inline_errors(1)
def pick(manager: SessionManager, choice: Any) -> str:
    return manager.results.pick(choice or None) + " Press Refresh for the leaderboard."


@inline_errors(1)
def zero(manager: SessionManager, judge: str) -> str:
    manager.results.set_weight(judge, 0.0)
    return f"{judge}'s weight is 0 now: the scores no longer count it. Press Refresh for the leaderboard."


def build() -> dict[str, Any]:
    """The section's components (their listeners: :func:`wire`, once the rest of the tab exists)."""
    gr.Markdown("### Fidelity against flexibility")
    plot = gr.Plot(label="Likeness against prompt-following", elem_id="bk-front")
    why = gr.Markdown(NO_FRONT, elem_id="bk-front-why")
    with gr.Row():
        answer = gr.Dropdown(choices=[], label="Answer: a point on the front", elem_id="bk-answer", scale=3,
                             interactive=True)
        answer_btn = gr.Button("Use as the answer", elem_id="bk-answer-use", scale=1)
    gr.Markdown("### How far each judge agrees with you")
    table = gr.Dataframe(label="Agreement with your blind choices and the order of your ratings (95 % interval)",
                         interactive=False, wrap=True, elem_id="bk-trust")
    note = gr.Markdown(elem_id="bk-trust-note")
    chance = gr.State([])
    zero_row = gr.Column()
    message = gr.Markdown(elem_id="bk-judges-msg")
    return {"outputs": [plot, why, answer, table, note, chance], "answer": answer, "use": answer_btn,
            "chance": chance, "message": message, "zero_row": zero_row}


def wire(manager: SessionManager, parts: dict[str, Any],
         after: tuple[Callable[..., Any], list[Any]] | None = None) -> Callable[[], tuple[Any, ...]]:
    """The section's listeners; ``after``: (function, outputs) run once a pick or a weight changed
    the answer (the leaderboard). Returns the section's refresh (outputs: ``parts["outputs"]``)."""
    outputs, message = parts["outputs"], parts["message"]
    refresh_fn = functools.partial(refresh, manager)

    def then(event: Any) -> None:
        event = event.then(refresh_fn, None, outputs, **PRIVATE)
        if after is not None:
            event.then(after[0], None, after[1], **PRIVATE)

    then(parts["use"].click(functools.partial(pick, manager), parts["answer"], message,
                            concurrency_id="session-control", **QUIET))
    with parts["zero_row"]:
        @gr.render(inputs=[parts["chance"]], triggers=[parts["chance"].change])
        def zero_buttons(judges: list[str]) -> None:
            with gr.Row():
                for judge in judges or []:
                    button = gr.Button(f"Set {judge}'s weight to 0", elem_id=f"bk-zero-{judge}", size="sm",
                                       key=f"zero-{judge}")
                    then(button.click(functools.partial(zero, manager, judge), None, message,
                                      concurrency_id="session-control", key=f"zero-click-{judge}", **QUIET))

    return refresh_fn
