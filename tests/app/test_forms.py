"""Setup-form values become validated search settings."""

import pytest

from bracket.app.forms import settings_from_form
from bracket.errors import BracketError


def test_sample_every_zero_means_first_and_last_step_only():
    assert settings_from_form(budget=2, steps=10, seeds=1, sample_every=0).sample_every_n_steps is None
    assert settings_from_form(budget=2, steps=10, seeds=1, sample_every="5").sample_every_n_steps == 5
    with pytest.raises(BracketError, match="sample every N steps must be a positive"):
        settings_from_form(budget=2, steps=10, seeds=1, sample_every=-1)


def test_one_bounds_parser_and_one_weights_parser_serve_the_form_and_the_command_line():
    from bracket.app.forms import parse_bounds
    from bracket.judge.combine import DEFAULT_WEIGHTS, WeightsError, parse_weights
    from bracket.session import SettingsError

    assert parse_bounds(1e-5, None, "4,1", {"network_dim": "4:16", "optimizer_type": "AdamW,RAdam"}) == {
        "learning_rate": (1e-5, 1e9), "batch_size": [1, 4], "network_dim": (4.0, 16.0),
        "optimizer_type": ["AdamW", "RAdam"]}
    with pytest.raises(SettingsError, match="MIN:MAX"):
        parse_bounds(knobs={"network_dim": "4:x"})
    # the CLI's text and the form's numbers give the same weights, with the same rules
    assert parse_weights("human=3, vlm=0") == parse_weights({"human": 3.0, "vlm": "0"}) == {
        **DEFAULT_WEIGHTS, "human": 3.0, "vlm": 0.0}
    assert parse_weights(None) == parse_weights("") == DEFAULT_WEIGHTS
    for bad in ("beauty=2", {"beauty": 2}):
        with pytest.raises(WeightsError, match="cannot read judge weight 'beauty'"):
            parse_weights(bad)
    with pytest.raises(WeightsError, match="must be a number"):
        parse_weights({"loss": "lots"})
