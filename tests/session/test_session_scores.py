"""Scores inside a session: late human ratings change the sampler's inputs; the VLM judge runs beside training."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bracket.session import SearchSettings, Session


def _session(demo_fields, runs_dir, **settings) -> Session:
    values = dict(budget=3, steps=10, seeds=1, sample_prompts="a red circle --d 5")
    values.update(settings)
    return Session.create("demo-cpu", demo_fields, SearchSettings(**values), out_dir=runs_dir)


def test_late_ratings_change_scores_and_the_next_suggestions_inputs(demo_fields, runs_dir):
    session = _session(demo_fields, runs_dir, weights={"loss": 1.0, "human": 3.0})
    assert session.run() == "finished"
    before_configs = session.scored_configs()
    before = {c.params["learning_rate"]: c.value for c in before_configs}
    runs = [r for r in session.snapshot().runs if r["status"] == "done"]
    worst_by_loss = max(runs, key=lambda r: r["score"])
    best_by_loss = min(runs, key=lambda r: r["score"])
    session.add_rating(worst_by_loss["id"], 10)
    session.add_rating(best_by_loss["id"], 1)
    after_runs = {r["id"]: r for r in session.snapshot().runs}
    assert after_runs[worst_by_loss["id"]]["score"] < after_runs[best_by_loss["id"]]["score"]
    assert "human" in after_runs[worst_by_loss["id"]]["judges_used"]
    after = {c.params["learning_rate"]: c.value for c in session.scored_configs()}
    assert after != before, "the sampler sees the ratings at the next suggestion"
    assert after[worst_by_loss["params"]["learning_rate"]] < before[worst_by_loss["params"]["learning_rate"]]
    # the sampler knows which configs a person rated (TPE widens its good set then, issue 25)
    assert not any(c.rated for c in before_configs)
    rated = {c.params["learning_rate"] for c in session.scored_configs() if c.rated}
    assert rated == {worst_by_loss["params"]["learning_rate"], best_by_loss["params"]["learning_rate"]}
    session.close()


def test_ratings_out_of_range_or_for_unknown_runs_are_refused(demo_fields, runs_dir):
    from bracket.errors import BracketError

    session = _session(demo_fields, runs_dir, budget=1)
    session.run()
    run_id = session.snapshot().runs[0]["id"]
    for bad in (0, 11, "x", float("nan")):
        with pytest.raises(BracketError, match="from 1 to 10"):
            session.add_rating(run_id, bad)
    with pytest.raises(BracketError, match="not part of session"):
        session.add_rating(999, 5)
    with pytest.raises(BracketError, match="left, right, tie"):
        session.add_comparison(run_id, run_id, "both")
    assert session.store.ratings(session.name) == []
    session.close()


class _Vlm(BaseHTTPRequestHandler):
    calls: list[dict] = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Vlm.calls.append({"auth": self.headers.get("Authorization"), "body": body})
        reply = {"prompt_adherence": 8, "quality": 7, "artifacts": 9}
        data = json.dumps({"choices": [{"message": {"content": json.dumps(reply)}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_vlm_judge_scores_runs_and_never_stores_the_key(demo_fields, runs_dir):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Vlm)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        vlm = {"base_url": f"http://127.0.0.1:{server.server_port}/v1", "model": "tiny-vlm", "repeats": 1,
               "api_key": "sk-secret-123"}
        session = _session(demo_fields, runs_dir, budget=2, vlm=vlm)
        assert session.run() == "finished"
        runs = [r for r in session.snapshot().runs if r["status"] == "done"]
        assert all("vlm" in r["judges_used"] for r in runs)
        assert all(r["judges"]["vlm"] == pytest.approx(1 - 8 / 10) for r in runs)
        assert _Vlm.calls and _Vlm.calls[0]["auth"] == "Bearer sk-secret-123"
        content = _Vlm.calls[0]["body"]["messages"][-1]["content"]
        assert any("a red circle" in json.dumps(part) for part in content)
        database = (session.folder / "bracket.db").read_bytes()
        assert b"sk-secret-123" not in database
        session.close()
    finally:
        server.shutdown()


def test_the_raw_loss_figure_is_the_loss_the_score_rests_on():
    """Validation basis: the part's raw figure is the validation loss, not the training loss."""
    from bracket.judge.base import JudgeResult
    from bracket.session.scoring.run_scores import raw_figure

    details = {"final_ema": 0.1416, "final_validation": 0.0801}
    assert raw_figure("loss", JudgeResult.scored(0.0, dict(details, basis="validation"))) == 0.0801
    assert raw_figure("loss", JudgeResult.scored(0.0, dict(details, basis="training"))) == 0.1416
