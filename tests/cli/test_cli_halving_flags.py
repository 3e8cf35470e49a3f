"""`bracket run`'s halving flags default to what a halving search uses (the measured rungs), and say so."""

from __future__ import annotations

import pytest

from bracket.cli.args import build_parser
from bracket.session.search_settings import HalvingSettings, SearchSettings, SettingsError


def test_halving_flag_defaults_are_the_search_settings_defaults():
    args = build_parser().parse_args(["run", "--preset", "demo-cpu", "--halving"])
    defaults = HalvingSettings()
    assert args.smallest_rung == defaults.smallest_rung
    assert args.eta == defaults.eta
    assert SearchSettings().rungs().fractions()[0] == args.smallest_rung


def test_halving_help_names_the_default_smallest_rung(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    share = HalvingSettings().smallest_rung
    assert f"(default 1/3 = {share:.3f}, measured)" in text


@pytest.mark.parametrize("written, share", [("1/3", 1 / 3), ("0.5", 0.5), ("25%", 0.25), ("99%", 0.99)])
def test_smallest_rung_is_read_as_people_write_a_share(written, share):
    args = build_parser().parse_args(["run", "--preset", "demo-cpu", "--halving", "--smallest-rung", written])
    assert args.smallest_rung == pytest.approx(share)


@pytest.mark.parametrize("written", ["2/1", "0", "1", "100%", "1/0", "third", "150%"])
def test_a_share_outside_the_steps_is_one_error_line(written, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["run", "--preset", "demo-cpu", "--smallest-rung", written])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2
    assert err.startswith("error: argument --smallest-rung:") and len(err.splitlines()) == 1, err
    assert "1/3" in err


@pytest.mark.parametrize("written, share", [(None, None), ("0", 0.0), ("5%", 0.05), ("1/10", 0.1)])
def test_launch_cost_is_measured_unless_given(written, share):
    extra = [] if written is None else ["--launch-cost", written]
    args = build_parser().parse_args(["run", "--preset", "demo-cpu", "--halving", *extra])
    assert args.launch_cost == share


@pytest.mark.parametrize("written, share", [("0", 0.0), ("1", 1.0)])
def test_the_cli_and_the_settings_refuse_a_smallest_rung_in_the_same_words(written, share, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--preset", "demo-cpu", "--halving", "--smallest-rung", written])
    said = capsys.readouterr().err
    with pytest.raises(SettingsError) as refused:
        SearchSettings(halving=HalvingSettings(smallest_rung=share)).validate()
    words = "the smallest rung (--smallest-rung) must be a share of the steps in (0, 1) such as 1/3"
    assert words in said and words in str(refused.value), (said, str(refused.value))
    assert ("(1: no halving)" in said) == (share == 1) == ("(1: no halving)" in str(refused.value))
