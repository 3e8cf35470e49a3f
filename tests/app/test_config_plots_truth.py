"""The Results tab's config plots over the real SDXL LoRA space (issue 43, seen in review): a knob
that does not apply to a config (another optimizer family's) read "None" on the parallel-coordinate
plot, and a locked knob (``lr_warmup_steps`` bound to 0) was drawn on the slice plot against a
meaningless −1…1 axis."""

from __future__ import annotations

from bracket.app.config_plots import NOT_APPLICABLE, parallel_coordinate, slice_plot
from bracket.fields import merge_with_defaults
from bracket.registry import get_preset
from bracket.standings.rows import ConfigRow


def _space():
    preset = get_preset("sdxl-lora")
    trainer = preset.trainer_factory(merge_with_defaults(preset.fields, {}))
    return trainer.session_space({"lr_warmup_steps": (0, 0)})  # Setup's lock cell


def _row(cid: int, rank: int, **params) -> ConfigRow:
    return ConfigRow(rank=rank, config_id=cid, trial_number=cid, name=f"c{cid}", kind="search", stage="search",
                     mean=0.1, ci_low=None, ci_high=None, seeds=2, disqualified=0, params=params, runs=[])


ROWS = [_row(1, 1, optimizer_type="AdamW", learning_rate=1e-4, lr_scheduler="cosine", lr_warmup_steps=0,
             network_dim=16, network_alpha=8),
        _row(2, 2, optimizer_type="Prodigy", adaptive_learning_rate=1.0, prodigy_d_coef=1.5, lr_scheduler="constant",
             network_dim=32, network_alpha=16),
        _row(3, 3, optimizer_type="Prodigy", adaptive_learning_rate=1.0, prodigy_d_coef=0.7, lr_scheduler="linear",
             lr_warmup_steps=0, network_dim=8, network_alpha=4),
        _row(4, 4, optimizer_type="AdamW8bit", learning_rate=5e-4, lr_scheduler="constant", network_dim=4,
             network_alpha=1)]


def _ticks(figure) -> dict[str, list[str]]:
    names = list(figure.layout.xaxis.ticktext)
    ticks: dict[str, list[str]] = {name: [] for name in names}
    for note in figure.layout.annotations:
        ticks[names[note.x]].append(note.text)
    return ticks


def test_a_knob_that_does_not_apply_reads_n_a_never_none_on_axis_and_hover():
    figure = parallel_coordinate(ROWS, _space())
    ticks = _ticks(figure)
    assert all("None" not in texts for texts in ticks.values()), ticks
    for knob in ("learning_rate", "prodigy_d_coef", "lr_warmup_steps"):  # each absent from some config
        assert ticks[knob][0] == NOT_APPLICABLE, (knob, ticks[knob])
    assert NOT_APPLICABLE not in ticks["optimizer_type"] + ticks["network_dim"]  # every config has these
    hover = {name: text for trace in figure.data if trace.mode == "lines"
             for name, text in trace.customdata if trace.customdata[0][1] == "2"}  # the Prodigy config
    assert hover["learning_rate"] == NOT_APPLICABLE and hover["lr_warmup_steps"] == NOT_APPLICABLE
    assert hover["prodigy_d_coef"] == "1.5" and "None" not in hover.values()


def test_the_slice_plot_leaves_out_knobs_that_never_varied_and_says_so():
    figure = slice_plot(ROWS, _space())
    drawn = {figure.layout[key].title.text for key in figure.layout if key.startswith("xaxis")}
    assert drawn == {"optimizer_type", "learning_rate", "prodigy_d_coef", "lr_scheduler", "network_dim",
                     "network_alpha"}
    assert "lr_warmup_steps" not in drawn
    assert "lr_warmup_steps" in figure.layout.title.text
    # no knob varied: nothing to draw
    same = [_row(i, i, optimizer_type="AdamW", learning_rate=1e-4, lr_scheduler="constant", network_dim=4,
                 network_alpha=1) for i in (1, 2)]
    assert slice_plot(same, _space()) is None
