"""VLM judge against a real local HTTP server that speaks the chat-completions protocol."""

from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bracket.judge.server import ReplyError
from bracket.judge.vlm import VlmConfig, VlmJudge, parse_reply

API_KEY = "sk-test-SECRET-4242"
GOOD = {"prompt_adherence": 8, "quality": 6, "artifacts": 10}


class FakeVlmHandler(BaseHTTPRequestHandler):
    """The first path segment picks the behaviour: /good/v1, /fenced/v1, /bad/v1, /slow/v1, /err/v1, ..."""

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        mode = self.path.strip("/").split("/")[0]
        server.requests.append({"mode": mode, "auth": self.headers.get("Authorization"), "body": body})
        if mode == "slow":
            time.sleep(1.0)
        if mode == "err" or (mode == "flaky" and sum(r["mode"] == "flaky" for r in server.requests) == 1):
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"internal error")
            return
        if mode == "auth":
            self.send_response(401)
            self.end_headers()
            return
        if mode == "vary":
            count = sum(r["mode"] == "vary" for r in server.requests)
            content = json.dumps({"prompt_adherence": 0 if count % 2 else 10, "quality": 5, "artifacts": 5})
        else:
            content = {
                "good": json.dumps(GOOD), "flaky": json.dumps(GOOD), "slow": json.dumps(GOOD),
                "fenced": "Here you go:\n```json\n" + json.dumps(GOOD) + "\n```",
                "bad": '{"prompt_adherence": 8, "quality":',
            }[mode]
        reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeVlmHandler)
    httpd.daemon_threads = True
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def samples(tmp_path) -> list[tuple[Path, str]]:
    paths = []
    for i, prompt in enumerate(["a red fox in snow", "a castle at dusk"]):
        path = tmp_path / f"sample_{i:02d}.png"
        path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes([i]) * 16)
        paths.append((path, prompt))
    return paths


def judge_for(server, mode: str, **overrides) -> VlmJudge:
    port = server.server_address[1]
    options = dict(api_key=API_KEY, timeout_s=0.3, repeats=2, max_retries=1, backoff_s=0.01)
    options.update(overrides)
    return VlmJudge(VlmConfig(base_url=f"http://127.0.0.1:{port}/{mode}/v1/", model="test-vlm", **options))


def assert_no_key(result, caplog):
    assert API_KEY not in repr(result) and API_KEY not in json.dumps(result.details, default=str)
    assert API_KEY not in caplog.text


def test_good_reply_scores_and_sends_image_prompt_and_bearer_key(server, samples, caplog):
    caplog.set_level(logging.DEBUG)
    server.requests.clear()
    result = judge_for(server, "good").score_run(samples)
    assert result.score == pytest.approx(1.0 - (8 + 6 + 10) / 30)
    assert result.details["disagreements"] == [] and len(result.details["images"]) == 2
    assert len(server.requests) == 4  # 2 images x 2 repeats
    request = server.requests[0]
    assert request["auth"] == f"Bearer {API_KEY}"
    user = request["body"]["messages"][1]["content"]
    assert user[0]["type"] == "text" and "a red fox in snow" in user[0]["text"]
    assert user[1]["type"] == "image_url" and user[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert request["body"]["model"] == "test-vlm"
    assert_no_key(result, caplog)


def test_fenced_json_is_accepted(server, samples):
    assert judge_for(server, "fenced").score_run(samples).score == pytest.approx(0.2)


def test_malformed_json_leaves_run_unscored(server, samples, caplog):
    result = judge_for(server, "bad").score_run(samples)
    assert result.score is None and not result.disqualified
    assert "not valid JSON" in result.reason
    assert_no_key(result, caplog)


def test_timeout_leaves_run_unscored_quickly(server, samples, caplog):
    started = time.monotonic()
    result = judge_for(server, "slow").score_run(samples)
    assert result.score is None and "within 0.3 s" in result.reason
    assert time.monotonic() - started < 3.0
    assert_no_key(result, caplog)


def test_server_error_is_retried_then_reported(server, samples, caplog):
    server.requests.clear()
    result = judge_for(server, "err", max_retries=2).score_run(samples)
    assert result.score is None and "HTTP 500" in result.reason
    assert len(server.requests) == 3  # first attempt + 2 retries, then give up on the run
    assert_no_key(result, caplog)
    flaky = judge_for(server, "flaky", repeats=1).score_run(samples)
    assert flaky.score == pytest.approx(0.2)  # one 500, then a good reply


def test_unauthorised_is_not_retried_and_says_what_to_check(server, samples, caplog):
    server.requests.clear()
    result = judge_for(server, "auth", max_retries=3).score_run(samples)
    assert result.score is None and "401" in result.reason and "API key" in result.reason
    assert len(server.requests) == 1
    assert_no_key(result, caplog)


def test_disagreeing_repeats_are_flagged(server, samples):
    result = judge_for(server, "vary", repeats=2, disagreement_std=2.0).score_run(samples[:1])
    assert result.details["disagreements"] == ["sample_00.png"]
    assert result.score == pytest.approx(1.0 - (5 + 5 + 5) / 30)


def test_unreachable_server_and_bad_samples_do_not_raise(tmp_path, samples):
    closed = VlmJudge(VlmConfig("http://127.0.0.1:9/v1", "m", timeout_s=0.3, max_retries=0))
    assert closed.score_run(samples).score is None
    assert closed.score_run([]).reason == "no sample images to judge"
    video = tmp_path / "clip.mp4"
    video.write_bytes(b"x")
    assert "clip.mp4: cannot read the video" in closed.score_run([(video, "p")]).reason
    assert "images only" in closed.score_run([(tmp_path / "notes.txt", "p")]).reason
    assert "missing.png" in closed.score_run([(tmp_path / "missing.png", "p")]).reason


def test_key_hidden_from_repr_and_public_dict():
    config = VlmConfig("http://127.0.0.1:1/v1", "m", api_key=API_KEY)
    for text in (repr(config), str(config), repr(VlmJudge(config)), json.dumps(config.public_dict())):
        assert API_KEY not in text
    assert config.public_dict()["api_key_set"] is True


def test_parse_reply_rules():
    assert parse_reply('{"prompt_adherence": "7", "quality": 6.5, "artifacts": 0}')["prompt_adherence"] == 7.0
    for text in ('{"prompt_adherence": 11, "quality": 1, "artifacts": 1}', "[1, 2, 3]", '{"quality": 5}'):
        with pytest.raises(ReplyError):
            parse_reply(text)


def test_one_judge_scores_runs_from_several_threads(server, samples):
    from concurrent.futures import ThreadPoolExecutor

    judge = judge_for(server, "good", repeats=1)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(judge.score_run, [samples] * 4))
    assert all(r.score == pytest.approx(0.2) for r in results)
