"""Configs against their scores: Optuna's parallel-coordinate and slice plots.

The stored study holds each trial's value from when it finished; ratings given later move
the scores. So these plots are drawn from the **current** standings (the search board's
ranks): :func:`scored_study` builds an
in-memory Optuna study with one complete trial per scored config (its searched knobs, the
session space's distributions), and :func:`parallel_coordinate` / :func:`slice_plot` hand
it to ``optuna.visualization`` (plotly figures). They show each config's rank among the scored
configs (1 = best: the leaderboard's rank), a number whose differences mean places; what a
config achieved is its headline on the leaderboard. The study minimises the rank.

A knob that does not apply to a config (one of another optimizer family, say) is drawn on the
parallel-coordinate plot at its own bottom tick labelled ``n/a`` (:data:`NOT_APPLICABLE`), never
Optuna's ``None``. The slice plot leaves out knobs whose value never varied among the drawn
configs (a locked knob, say: one point on a meaningless axis) and names them in its caption.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import optuna

from bracket.optuna_access.quiet import optuna_module
from bracket.search.space import SearchSpace

#: the plots' name for the value they draw
TARGET = "rank among the scored configs (1 = best)"

optuna_module()  # its INFO lines off

#: how a knob that does not apply to a config reads on the plots
NOT_APPLICABLE = "n/a"
#: Optuna's label for a param a trial lacks (its own None value reads "None (value)")
_OPTUNA_MISSING = "None"

#: the plots need at least this many scored configs to say anything
MIN_CONFIGS = 2


def scored_study(rows: Sequence[Any], space: SearchSpace) -> optuna.Study:
    """An in-memory study of the scored configs in ``rows`` (standings ``ConfigRow``s)."""
    study = optuna.create_study(direction="minimize")
    trials = []
    for row in rows:
        if row.rank is None:  # not scored
            continue
        place = float(row.rank)  # the leaderboard's rank, ratings and blind choices above estimates
        params = {k: v for k, v in space.searched_params(row.params).items() if k in space.searched()}
        try:
            distributions = space.distributions(row.params)
            params = {k: v for k, v in params.items() if k in distributions}
            trials.append(optuna.trial.create_trial(params=params, distributions={k: distributions[k] for k in params},
                                                    value=place, user_attrs={"name": row.name}))
        except (ValueError, KeyError):
            continue  # a value outside today's (narrowed) space: not drawn
    study.add_trials(trials)
    return study


def _ready(study: optuna.Study) -> bool:
    return len(study.trials) >= MIN_CONFIGS


def parallel_coordinate(rows: Sequence[Any], space: SearchSpace) -> Any | None:
    """Optuna's parallel-coordinate plot of the scored configs (None below two)."""
    study = scored_study(rows, space)
    if not _ready(study):
        return None
    figure = optuna.visualization.plot_parallel_coordinate(study, target_name=TARGET)
    # the axes' names slanted under them and room for them, so long names and ticks do not overlap
    figure.update_layout(title="Configs vs their rank (parallel coordinates; 1 = best)", height=460,
                         margin={"l": 60, "r": 40, "t": 50, "b": 110}, font={"size": 11})
    figure.update_xaxes(tickangle=-25)
    _label_not_applicable(figure, study)
    return figure


def _label_not_applicable(figure: Any, study: optuna.Study) -> None:
    """Optuna's "None" tick and hover text of a knob some configs lack, as :data:`NOT_APPLICABLE`."""
    names = sorted({name for trial in study.trials for name in trial.params})  # Optuna's axis order
    lacking = {index for index, name in enumerate(names, start=1)  # axis 0 is the rank
               if any(name not in trial.params for trial in study.trials)}
    for note in figure.layout.annotations:
        if note.x in lacking and note.text == _OPTUNA_MISSING:
            note.text = NOT_APPLICABLE
    for trace in figure.data:
        if trace.mode == "lines" and trace.customdata is not None:
            trace.customdata = [[label, NOT_APPLICABLE if axis in lacking and text == _OPTUNA_MISSING else text]
                                for axis, (label, text) in enumerate(trace.customdata)]


def varied(study: optuna.Study) -> tuple[list[str], list[str]]:
    """(knobs whose value differs between the study's configs, knobs with one value in all of them)."""
    values: dict[str, set[str]] = {}
    for trial in study.trials:
        for name, value in trial.params.items():
            values.setdefault(name, set()).add(repr(value))
    names = sorted(values)
    return [n for n in names if len(values[n]) > 1], [n for n in names if len(values[n]) == 1]


def slice_plot(rows: Sequence[Any], space: SearchSpace) -> Any | None:
    """Optuna's slice plot: each knob that varied against the score (None below two configs or when
    no knob varied); the knobs that kept one value are named in the title instead."""
    study = scored_study(rows, space)
    if not _ready(study):
        return None
    drawn, constant = varied(study)
    if not drawn:
        return None
    figure = optuna.visualization.plot_slice(study, params=drawn, target_name=TARGET)
    title = "Each knob vs the config's rank (slice; 1 = best)"
    if constant:
        title += f"<br><sub>not drawn (one value in every config it applies to): {', '.join(constant)}</sub>"
    # few slanted ticks per knob: a log axis's and a choice's labels ran into each other
    # as wide as the tab: Optuna makes it 300 px per knob, cut off past four knobs in a 1280-px window
    figure.update_layout(title=title, height=420, width=None,
                         autosize=True, margin={"l": 60, "r": 40, "t": 60, "b": 120}, font={"size": 11})
    figure.update_xaxes(tickangle=-45, nticks=4, tickfont={"size": 10})
    return figure
