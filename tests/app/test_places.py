"""Issue 43 item 1: where the app compares configs without their headline it says places
(``bracket.app.places``), never the session-relative 1–10 quality."""

from __future__ import annotations

from types import SimpleNamespace

from bracket.app.judge_text import point_label
from bracket.app.places import ordinal, rank


def test_places_rank_by_the_leaderboard_order_and_ties_share_one():
    scores = [0.4, 0.1, 0.4, 0.9]
    assert [rank(s, scores) for s in scores] == [2, 1, 2, 4]
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 111)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "111th"]


def test_a_front_point_reads_as_its_place_not_a_quality():
    points = [SimpleNamespace(name=f"search-{i}", score=score, step=20) for i, score in enumerate((0.3, 0.1, None))]
    labels = [point_label(p, points) for p in points]
    assert labels == ["search-0 · 2nd of 2 by combined score · step 20",
                      "search-1 · 1st of 2 by combined score · step 20", "search-2 · not scored · step 20"]
    assert not any("quality" in label for label in labels)
