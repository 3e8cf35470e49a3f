"""A halving launch is charged per config: one whose command carries its own step limit at the rung (a kohya
run with a constant schedule: ``TrainerFacts.stops_when``) is charged, reserved and promised that rung; one
that may race past it keeps its full length; a new config, not proposed yet, is charged as the space allows
(its rung only where every config of the space stops itself: ``TrainerFacts.stops_at_rung``). Tables on
plain views (``Budget.pays``, the ``Halving`` scheduler's decisions); no process, no store."""

from __future__ import annotations

import dataclasses

import pytest

from bracket.search.knobs import CategoricalKnob, FixedKnob, FloatKnob
from bracket.session.loop.trainer_facts import TrainerFacts
from bracket.session.search_settings import HalvingSettings
from bracket.trainer.pause import KOHYA_SELF_STOP, space_stops_itself, stops_itself
from tests.fakes.plain_views import halving_on, view_of
from tests.session.test_scheduler_tables import HALVING, config, run

#: a kohya trainer's facts over a space that mixes schedules
KOHYA = TrainerFacts(stops_when=KOHYA_SELF_STOP)
#: budget 2 of 8-step runs, rungs at 2, 4 and 8 (eta 2 from 1/4)
THREE = dataclasses.replace(HALVING, halving=HalvingSettings(eta=2, smallest_rung=0.25, launch_share=0))
FLAT, WARM, DECAYING = ({"lr_scheduler": s} for s in ("constant", "constant_with_warmup", "cosine"))


@pytest.mark.parametrize(("params", "pays"), [(FLAT, True), (WARM, True), (DECAYING, False), ({}, False)])
def test_a_run_in_flight_is_reserved_to_its_rung_only_where_its_config_stops_itself(params, pays):
    scheduler = halving_on(HALVING, facts=KOHYA)  # rungs at 4 and 8, budget 16 steps
    rows = [run(1, 1, "done", last=8), run(2, 2, "running", last=1)]
    view = view_of(scheduler, rows, configs=[config(1, "done", params=DECAYING), config(2, params=params)])
    # 8 done + run 2 to its rung (4) or to its end (8) + one more launch of 4 steps
    assert scheduler.budget.pays(view, 1, 4) is pays


@pytest.mark.parametrize(("params", "promised"), [(FLAT, 4), (DECAYING, 8)])
def test_a_reserved_config_not_started_is_promised_its_rung_only_where_it_stops_itself(params, promised):
    scheduler = halving_on(HALVING, facts=KOHYA)
    view = view_of(scheduler, [run(1, 1, "done", last=8)], configs=[config(1, "done"), config(3, params=params)])
    assert scheduler.promised(view) == promised and scheduler.promised(view, but=3) == 0
    assert scheduler.unstarted(view) == 4  # the plan's count: to its rung either way


@pytest.mark.parametrize(("params", "reach"), [(FLAT, 4), (DECAYING, 8)])
def test_a_promotion_to_a_rung_before_the_last_is_charged_that_rung_where_its_config_stops_itself(params, reach):
    scheduler = halving_on(THREE, facts=KOHYA)
    view = view_of(scheduler, [run(2, 2, "paused", pause=2, last=2)], configs=[config(2, "paused", rung=0,
                                                                                      params=params)])
    assert scheduler.reach(1, view, 2) == reach
    assert scheduler.reach(0, view) == 8  # a new config: the space may propose a decaying schedule


@pytest.mark.parametrize(("params", "target"), [(FLAT, ([0], 4)), (DECAYING, None)])
def test_a_killed_seed_is_trained_again_where_its_rung_fits(params, target):
    """1 step trained by the killed launch and 8 by another config: its rung (4) fits beside them (13 of 16),
    a race to its end (17) does not — the constant config trains again, the decaying one is stopped."""
    scheduler = halving_on(HALVING, facts=KOHYA)
    rows = [run(1, 1, "interrupted", last=1), run(2, 2, "done", last=8)]
    view = view_of(scheduler, rows, configs=[config(1, params=params), config(2, "done", params=DECAYING)])
    assert scheduler.target(view.config(1), view) == target


def test_a_new_config_is_charged_its_rung_only_where_every_config_of_the_space_stops_itself():
    """Budget 16 steps, 12 spent: the next config's first rung (4) fits, a race to its end (8) does not."""
    rows = [run(1, 1, "done", last=8), run(2, 2, "paused", pause=4, last=4)]
    configs = [config(1, "done", params=FLAT), config(2, "paused", rung=0, params=FLAT)]
    mixed = halving_on(HALVING, facts=KOHYA)
    assert mixed.bought(view_of(mixed, rows, configs=configs))[0] == 2
    flat = halving_on(HALVING, facts=dataclasses.replace(KOHYA, stops_at_rung=True))
    assert flat.bought(view_of(flat, rows, configs=configs))[0] == 3


def test_the_facts_keep_the_configs_that_stop_themselves_through_the_store():
    stored = TrainerFacts.from_dict(KOHYA.to_dict())
    assert stored == KOHYA and stored.stops(FLAT) and stored.stops(WARM) and not stored.stops(DECAYING)
    assert not stored.stops(None) and not stored.stops({})  # a config not proposed yet: as the space allows
    assert TrainerFacts(stops_at_rung=True).stops(None)
    assert TrainerFacts.from_dict({"stops_when": "lr_scheduler"}).stops_when == ()  # damaged: none assumed
    assert TrainerFacts.from_dict({"stops_when": [["lr_scheduler", [1]]]}).stops_when == ()
    assert TrainerFacts.from_dict({"restarts": False}).stops_when == ()  # a store from before: none assumed


@pytest.mark.parametrize(("knob", "every"), [
    (CategoricalKnob(("constant", "constant_with_warmup")), True),
    (FixedKnob("constant"), True),
    (CategoricalKnob(("constant", "cosine")), False),
    (CategoricalKnob(("constant",), when={"optimizer_type": ("AdamW",)}), False),  # not every config has it
    (FloatKnob(1e-5, 1e-3), False),
    (None, False),
])
def test_a_space_stops_itself_only_where_every_config_of_it_does(knob, every):
    space = {"optimizer_type": CategoricalKnob(("AdamW", "Lion"))} | ({} if knob is None else {"lr_scheduler": knob})
    assert space_stops_itself(space, KOHYA_SELF_STOP) is every
    assert not space_stops_itself(space, ())
    assert stops_itself(FLAT, KOHYA_SELF_STOP) and not stops_itself(FLAT, ())
