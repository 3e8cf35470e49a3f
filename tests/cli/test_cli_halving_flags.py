"""`bracket run`'s halving flags default to what a halving search uses (the measured rungs), and say so."""

from __future__ import annotations

import pytest

from bracket.cli.args import build_parser
from bracket.session.search_settings import SearchSettings


def test_halving_flag_defaults_are_the_search_settings_defaults():
    args = build_parser().parse_args(["run", "--preset", "demo-cpu", "--halving"])
    defaults = SearchSettings()
    assert args.smallest_rung == defaults.smallest_rung
    assert args.eta == defaults.eta
    assert defaults.rungs().fractions()[0] == args.smallest_rung


def test_halving_help_names_the_default_smallest_rung(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    share = SearchSettings().smallest_rung
    assert f"(default 1/3 = {share:.3f}, measured)" in text
