"""The halving settings: validation, the budget in full-run equivalents, the plan sentence, the CLI."""

from __future__ import annotations

import pytest

from bracket.cli import main
from bracket.session.search_settings import HalvingSettings, SearchSettings, SettingsError, halving_cost


def test_the_budget_counts_full_runs_and_the_plan_says_how_they_are_spent():
    settings = SearchSettings(budget=8, steps=90, halving=HalvingSettings(smallest_rung=1 / 9))
    assert settings.plan() == "budget 8 full runs = 26 configs to 1/9 → 8 to 1/3 → 2 to full + confirm 2"
    # the default smallest rung is 1/3 (docs/BENCHMARKS.md, successive halving)
    assert SearchSettings(budget=8, steps=90, halving=HalvingSettings()).plan() == (
        "budget 8 full runs = 11 configs to 1/3 → 3 to full + confirm 2")
    assert halving_cost(26, settings.rungs().fractions(), 3) <= settings.search_runs < halving_cost(
        27, settings.rungs().fractions(), 3)
    assert SearchSettings(budget=3, halving=HalvingSettings(smallest_rung=1 / 9), seeds=2, confirm=0).plan() == (
        "budget 3 full runs = 5 configs to 1/9 → 1 to 1/3 → 1 to full × 2 seeds")
    off = SearchSettings(budget=8, steps=90)  # off by default: a full run per config, as before
    assert not off.halving and off.n_configs == 6 and off.plan().startswith("budget 8 = search 6")


@pytest.mark.parametrize("values, words", [
    ({"eta": 1}, "reduction factor (--eta) must be a whole number from 2 to 10, got 1"),
    ({"eta": 2.5}, "got 2.5"),
    ({"smallest_rung": 0}, "smallest rung (--smallest-rung) must be a share of the steps in (0, 1)"),
    ({"smallest_rung": 1.0}, "got 1.0"),
])
def test_bad_halving_settings_are_refused_with_what_to_do(values, words):
    with pytest.raises(SettingsError, match=words.replace("(", r"\(").replace(")", r"\)")):
        SearchSettings(halving=HalvingSettings(**values)).validate()


def test_the_cli_refuses_a_bad_reduction_factor_in_one_line_and_creates_nothing(runs_dir, capsys):
    out = runs_dir
    assert main(["run", "--preset", "demo-cpu", "--halving", "--eta", "1", "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("error: the reduction factor (--eta)")
    assert list(out.iterdir()) == []


def test_the_cli_takes_the_measured_smallest_rung_unless_given(runs_dir, monkeypatch, capsys):
    from bracket.errors import BracketError
    from bracket.search.halving import DEFAULT_SMALLEST
    from bracket.session import Session

    seen = []

    def create(preset_id, fields, settings, **_):
        seen.append(settings)
        raise BracketError("stop here")  # nothing is trained: only the settings matter

    monkeypatch.setattr(Session, "create", create)
    for extra, smallest in (([], DEFAULT_SMALLEST), (["--smallest-rung", "0.25"], 0.25)):
        assert main(["run", "--preset", "demo-cpu", "--halving", *extra, "--out", str(runs_dir)]) == 2
        assert seen[-1].halving and seen[-1].halving.smallest_rung == smallest
        assert seen[-1].halving.launch_share is None  # the start-up is measured
    assert main(["run", "--preset", "demo-cpu", "--halving", "--launch-cost", "10%", "--out", str(runs_dir)]) == 2
    assert seen[-1].halving.launch_share == pytest.approx(0.1)
    assert capsys.readouterr().err.count("error: stop here") == 3


def test_each_launch_start_up_counts_against_the_budget_as_the_session_measures_compute():
    from bracket.search.halving import cost

    # 3 configs to 1/3, 1 to full: 5/3 full lengths trained in 4 launches, each ``share`` of a full run
    for share in (0.0, 0.1, 0.5):
        expected = cost(round(5 / 3 * 900), 4, 900, launch_steps=share * 900)
        assert halving_cost(3, (1 / 3, 1.0), 3, launch_share=share) == pytest.approx(expected, rel=1e-3)
    assert halving_cost(1, (1.0,), 3, launch_share=0.3) == pytest.approx(1.0)  # a full run costs one
    settings = SearchSettings(budget=4, halving=HalvingSettings(), confirm=0)
    assert settings.configs_within(0.0) == settings.n_configs == 8
    assert settings.configs_within(0.05) == 7  # a 30 s start-up of a 10-minute run: one config fewer
    assert settings.configs_within(1.0) < settings.configs_within(0.1) < 7
