"""Setup-form values become validated search settings."""

import pytest

from bracket.errors import BracketError
from bracket.session.forms import settings_from_form


def test_sample_every_zero_means_first_and_last_step_only():
    assert settings_from_form(budget=2, steps=10, seeds=1, sample_every=0).sample_every_n_steps is None
    assert settings_from_form(budget=2, steps=10, seeds=1, sample_every="5").sample_every_n_steps == 5
    with pytest.raises(BracketError, match="sample every N steps must be a positive"):
        settings_from_form(budget=2, steps=10, seeds=1, sample_every=-1)
