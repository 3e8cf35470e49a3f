"""The report's judge sections from plain standings: the front's chart, table and why; the trust
table and its chance verdict; and what each says when there is nothing to show."""

from __future__ import annotations

from bracket.report.judges import judge_sections
from bracket.session.scoring import RunScore
from bracket.standings import build_standings, with_judges


def _table(image: bool, ratings=()):
    points = {1: (0.5, 0.5), 2: (0.9, 0.1), 3: (0.1, 0.9), 4: (0.2, 0.2)}
    configs = [{"id": c, "name": f"c{c}", "stage": "search", "kind": "search", "trial_number": c, "params": {}}
               for c in points]
    runs = [{"id": c, "config_id": c, "stage": "search", "kind": "search", "seed": 42, "max_steps": 20,
             "status": "done",
             "judges": {"image": {"steps": {"20": {"likeness": x, "prompt_following": y, "image_quality": 5.0,
                                                   "n_images": 1}}}} if image else {}}
            for c, (x, y) in points.items()]
    scores = {c: RunScore(value=0.1 * c, judges={"loss": 0.1 * c}, used=["loss"], weights_used={"loss": 1.0},
                          details={"loss": {"final_ema": 0.1 * c}}) for c in points}
    table = build_standings(runs, configs, scores, list(ratings))
    return with_judges(table, runs, list(ratings), [], {"loss": 1.0}, None)


def _text(blocks) -> str:
    return " ".join(str(b[1]) for b in blocks if b[0] in ("p", "quote")) + " " + " ".join(
        " ".join(" ".join(row) for row in b[2]) for b in blocks if b[0] == "table")


def test_front_and_trust_sections_with_data():
    # ratings that reverse the loss's order: the loss is no better than chance
    table = _table(True, [{"run_id": r, "value": v} for r, v in ((1, 2), (2, 4), (3, 6), (4, 8))])
    (front_title, front), (trust_title, trust), pictures = *judge_sections(table)[0], judge_sections(table)[1]
    assert front_title == "Fidelity against flexibility" and trust_title == "How far each judge agrees with you"
    assert [p.stem for p in pictures] == ["report-front"] and pictures[0].png.startswith(b"\x89PNG")
    assert "The winner 'c1'" in _text(front) and any(b[0] == "img" for b in front)
    rows = {row[0]: row for b in front if b[0] == "table" for row in b[2]}
    assert rows["c4"][5] == "no" and rows["c4"][6] == "c1" and rows["c2"][5] == "yes"
    loss = next(row for b in trust if b[0] == "table" for row in b[2] if row[0] == "loss")
    assert loss[3].startswith("0 of 6") and "no better than chance" in loss[4] and "loss=0" in loss[4]


def test_sections_without_image_scores_or_ratings_say_so():
    (_, front), (_, trust) = judge_sections(_table(False))[0]
    assert "No config has likeness and prompt-following scores" in _text(front)
    assert "No agreement is known" in _text(trust) and judge_sections(_table(False))[1] == []
    assert "nobody rated" in _text(trust)


def test_one_rating_is_not_called_nobody_rated():
    """Seen in review (issue 43): with one run rated, the report and the app said "nobody rated or compared
    runs yet"; one rating orders nothing, and the note says so and what would."""
    _, (_, trust) = judge_sections(_table(False, [{"run_id": 2, "value": 4}]))[0]
    said = _text(trust)
    assert "nobody rated" not in said and "1 run rated" in said and "two runs you rated differently" in said


def test_the_image_table_heads_each_judge_column_with_the_name_every_screen_gives_its_figure():
    """The per-step table's headers are the standings' figure names (``raw_figures``), column by column."""
    from bracket.report.image_table import IMAGE_HEADERS, JUDGES, image_rows, image_section
    from bracket.standings.parts import raw_figures

    assert IMAGE_HEADERS[:2] == ["config", "step"] and len(IMAGE_HEADERS) == 2 + len(JUDGES)
    for header, judge in zip(IMAGE_HEADERS[2:], JUDGES):
        assert list(raw_figures(judge, {"raw": 0.5})) == [header]
    row = type("Row", (), {"name": "c1", "best_step": 4, "step_images": {4: {"likeness": 0.5, "preference": 0.25}}})
    (_, [(_, headers, rows), _]), = image_section(image_rows([row()]))
    assert headers == ["config", "step", "likeness", "preference"] and rows == [["c1", "4 ★", "0.500", "0.250"]]
