"""A session's default name (the preset and the time) is made unique: two searches started
within the same second get two folders, the second never refused as already existing."""

import bracket.session.create as create
from bracket.session import SearchSettings, Session


def test_two_sessions_started_within_a_second_get_two_names(monkeypatch, demo_fields, runs_dir):
    monkeypatch.setattr(create.time, "strftime", lambda fmt, *when: "20261202-101500")
    settings = SearchSettings(budget=1, steps=4, sample_prompts="a red circle --d 1")
    names = []
    for _ in range(3):
        session = Session.create("demo-cpu", demo_fields, settings, out_dir=runs_dir)
        names.append(session.name)
        session.close()
    assert names == ["demo-cpu-20261202-101500", "demo-cpu-20261202-101500-2", "demo-cpu-20261202-101500-3"]
