"""The message after a rating ranks configs by what TPE sees (issue 43, item 9).

On main it ranked them by the combined score, in which an unrated config with a good loss and an
estimated rating stood above a config the person rated 9; TPE now sees the person's verdict
(``bracket.session.scoring.sampler_values``), and the message says where the config stands there.
"""

from __future__ import annotations

from bracket.app.rating_effect import rate_and_explain, search_standings
from bracket.judge.human import rating_score
from bracket.session import SearchSettings, Session


def test_a_config_rated_above_every_other_rating_is_first_among_the_configs_tpe_builds_on(demo_fields, runs_dir):
    session = Session.create("demo-cpu", demo_fields, SearchSettings(budget=4, steps=10, seeds=1, sample_prompts=""),
                             out_dir=runs_dir)
    try:
        assert session.run() == "finished"
        runs = sorted((r for r in session.snapshot().runs if r["status"] == "done"), key=lambda r: r["score"])
        session.add_rating(runs[0]["id"], 1)  # the best loss, disliked
        text = rate_and_explain(session, runs[-1]["id"], 9)  # the worst loss, liked
        assert text.startswith(f"Run #{runs[-1]['id']} rated 9: its config") and f"1st of {len(runs)}" in text
        assert "outside" not in text and "TPE builds its next proposals on" in text
        values = search_standings(session)
        assert values[runs[-1]["config_id"]] == min(values.values()) == rating_score(9)
        # the message ranks by the very values the sampler's history gives TPE (one reading of them)
        configs = {c["id"]: session.space.searched_params(c["params"]) for c in session.store.configs(session.name)}
        seen = {tuple(sorted(c.params.items())): c.value for c in session.scored_configs() if c.value is not None}
        assert seen == {tuple(sorted(configs[cid].items())): value for cid, value in values.items()}
    finally:
        session.close()
