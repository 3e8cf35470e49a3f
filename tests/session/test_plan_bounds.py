"""The plan under a person's bounds: Setup plans what Start will do, and the Search tab counts
what happened when the bounds take a learning-rate bracket side away (demo-cpu preset)."""

from __future__ import annotations

from bracket.app.forms import plan_text
from bracket.session import SearchSettings, Session
from bracket.session.loop.plan import progress_text
from bracket.session.snapshot import phase_label

#: the reviewer's table: rate 1e-4…3e-3 (the baseline sits on the floor), cosine locked, AdamW or Adam
BOUNDS = {"learning_rate": (1e-4, 3e-3), "lr_scheduler": ["cosine"], "optimizer_type": ["AdamW", "Adam"]}


def test_setup_plan_fits_the_warm_start_to_the_tables_bounds():
    assert plan_text(8, 1, 0, "demo-cpu").endswith("plan: baseline, 3 curated, 2 LR bracket, 2 shape draws")
    # every curated config leaves the cosine/AdamW-or-Adam space: Start drops them, so the plan does
    assert plan_text(8, 1, 0, "demo-cpu", bounds=BOUNDS).endswith(
        "plan: baseline, 2 LR bracket, 4 shape draws, 1 TPE")


def test_a_bracket_side_the_bounds_skip_is_one_more_tpe_trial_in_the_plan_and_the_notes(demo_fields, runs_dir):
    settings = SearchSettings(budget=4, steps=5, seeds=1, confirm=0, bounds=BOUNDS,
                              sample_prompts="a red circle --d 7")
    session = Session.create("demo-cpu", demo_fields, settings, out_dir=runs_dir, name="skip")
    assert session.run() == "finished"
    configs = session.store.configs("skip", stage="search")
    # ÷√10 of the baseline's 1e-4 clamps back onto 1e-4: only the higher side trains
    assert [c["kind"] for c in configs] == ["baseline", "bracket", "search", "search"]
    snapshot = session.snapshot()
    # the bracket's skipped side went to the sampler, whose first proposals are shape draws
    assert progress_text(snapshot.phases) == "baseline ✓ · LR bracket 1/1 ✓ · shape draws 2/2 ✓"
    assert phase_label(session, configs[-1]) == "search 2/2"
    notes = snapshot.notes
    assert notes.count("LR bracket: the lower side 3.2e-05 is outside the bounds; one more shape draw or TPE "
                       "trial instead") == 1
    # a dropped config gets one note, saying why it was dropped (not the clamps before it)
    sgd = [n for n in notes if n.startswith("curated 'sgd'")]
    assert len(sgd) == 1 and "dropped" in sgd[0]
    session.close()
