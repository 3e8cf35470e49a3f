"""A stand-in judge model: a real OpenAI-compatible HTTP server on localhost (stdlib, one thread).

The judge *model* cannot run here; everything else (the HTTP client, retries, parsing, the
session's scoring) runs for real against this server. Its verdicts follow simple, checkable
rules, so a test fails when the judge sends the wrong things or reads the reply wrongly:

* **rubric** (the system prompt asks for correctness/completeness/format): 9 on every
  criterion when the model's answer equals the reference (case and spaces aside), else 2;
* **pairwise** (asks for a winner): the answer equal to the reference wins, "tie" when both
  or neither are;
* **VLM** (image/video rubric): each image part's mean colour is read; quality is 8 (under
  ``/red/v1``: the mean red of the images / 25.5, so the reddest sample is the best);
  ``temporal_consistency`` is 10 when all frames have the same colour, else 1.

The first path segment picks a failure mode: ``/ok/v1`` answers, ``/down/v1`` answers HTTP
500, ``/auth/v1`` 401, ``/bad/v1`` malformed JSON, ``/vary/v1`` alternates rubric scores (repeats
disagree). Every request is recorded in ``server.requests``; ``server.delay_s`` (0) is waited
before each reply (a judge slower than the trainer).
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_SECTION = re.compile(r"^(Question|Reference answer|Model's answer|Answer A|Answer B):\n", re.MULTILINE)


def sections(text: str) -> dict[str, str]:
    """The labelled blocks of a judge prompt (``Question:``, ``Reference answer:``, ...)."""
    parts = _SECTION.split(text)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def _mean_colour(url: str) -> tuple[int, int, int]:
    from PIL import Image, ImageStat

    data = base64.b64decode(url.split(",", 1)[1])
    with Image.open(io.BytesIO(data)) as image:
        return tuple(int(round(v)) for v in ImageStat.Stat(image.convert("RGB")).mean)


def verdict(body: dict, mode: str, count: int) -> str:
    system = body["messages"][0]["content"]
    user = body["messages"][1]["content"]
    if isinstance(user, list):  # the VLM judge: text + image parts
        colours = [_mean_colour(p["image_url"]["url"]) for p in user if p.get("type") == "image_url"]
        reply = {"prompt_adherence": 7, "quality": 8, "artifacts": 9}
        if mode == "red":
            reply["quality"] = round(sum(c[0] for c in colours) / len(colours) / 25.5)
        if "temporal_consistency" in system:
            steady = all(max(abs(a - b) for a, b in zip(c, colours[0])) < 16 for c in colours)
            reply["temporal_consistency"] = 10 if steady else 1
        return json.dumps(reply)
    found = sections(user)
    reference = found.get("Reference answer", "")
    if "winner" in system:
        a, b = _same(found.get("Answer A", ""), reference), _same(found.get("Answer B", ""), reference)
        return json.dumps({"winner": "A" if a and not b else "B" if b and not a else "tie"})
    if mode == "vary":
        score = 0 if count % 2 else 10
        return json.dumps({"correctness": score, "completeness": score, "format": score})
    score = 9 if _same(found.get("Model's answer", ""), reference) else 2
    return "```json\n" + json.dumps({"correctness": score, "completeness": score, "format": score}) + "\n```"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output quiet
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        mode = self.path.strip("/").split("/")[0]
        with server.lock:
            server.requests.append({"mode": mode, "auth": self.headers.get("Authorization"), "body": body,
                                    "path": self.path})
            count = len(server.requests)
        time.sleep(server.delay_s)
        if mode in ("down", "auth"):
            self.send_response(500 if mode == "down" else 401)
            self.end_headers()
            return
        content = '{"correctness": 8, "completeness":' if mode == "bad" else verdict(body, mode, count)
        reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


def start() -> ThreadingHTTPServer:
    """Start the stand-in on a free localhost port; ``server.url(mode)`` is its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.requests = []
    server.delay_s = 0.0
    server.lock = threading.Lock()
    server.url = lambda mode="ok": f"http://127.0.0.1:{server.server_address[1]}/{mode}/v1"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
