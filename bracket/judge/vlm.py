"""The VLM judge: a vision-language model on the user's own machine scores each sample image.

Any server that speaks the OpenAI chat-completions protocol works: LM Studio
(``http://localhost:1234/v1``), Ollama (``http://localhost:11434/v1``), vLLM
(``http://localhost:8000/v1``), llama.cpp's server (``http://localhost:8080/v1``).
``base_url`` is that ``.../v1`` address; requests go to ``{base_url}/chat/completions``.

For every sample (image path, prompt) the judge sends the image as a base64 data URL in an
``image_url`` content part, with the prompt and a fixed rubric, and asks for strict JSON
``{"prompt_adherence": 0-10, "quality": 0-10, "artifacts": 0-10}`` (10 is best for all three;
for ``artifacts`` 10 means none visible). A reply inside a ```json fence is accepted. Each
image is asked ``repeats`` times; the image's goodness is the mean of the three criteria over
the repeats / 10, and the run's score is ``1 - mean goodness`` over its images (lower is better).
When the repeats disagree (a criterion's standard deviation above ``disagreement_std``) the
image is listed in ``details["disagreements"]``; the score still counts.

Network errors, timeouts, HTTP 429/5xx and malformed replies are retried with exponential
backoff. If any image still cannot be scored, the whole run is left **unscored by this judge**
(score None and the reason), never raised, so runs are not compared on different prompt subsets.
The API key is sent as ``Authorization: Bearer ...`` and never appears in a repr, a result, or
a log line. The judge holds no mutable state: one instance can score runs from several
threads at once (the session uses a ThreadPoolExecutor beside training).
"""

from __future__ import annotations

import base64
import json
import logging
import re
import socket
import statistics
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from bracket.judge.base import JudgeResult

log = logging.getLogger(__name__)

CRITERIA = ("prompt_adherence", "quality", "artifacts")
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}
RUBRIC = (
    "You are a strict judge of images made by a fine-tuned image model. You are given the text "
    "prompt and the image made from it. Score three things from 0 to 10, where 10 is always best:\n"
    "- prompt_adherence: how completely and exactly the image shows what the prompt asks for.\n"
    "- quality: overall visual quality: composition, detail, lighting, coherent anatomy and objects.\n"
    "- artifacts: absence of defects (noise, smears, extra limbs, garbled text, banding); "
    "10 = no visible artifacts, 0 = the image is ruined by them.\n"
    'Reply with only one JSON object and nothing else, e.g. {"prompt_adherence": 7, "quality": 6, '
    '"artifacts": 8}.'
)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class VlmReplyError(Exception):
    """A reply that is not the JSON the rubric asks for (retried, then reported as the reason)."""


@dataclass(frozen=True)
class VlmConfig:
    """Where the VLM server is and how to ask it. ``api_key`` is hidden from repr/str."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 120.0
    repeats: int = 3
    temperature: float = 0.7
    max_tokens: int = 200
    max_retries: int = 2
    backoff_s: float = 1.0
    disagreement_std: float = 2.0

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def public_dict(self) -> dict[str, Any]:
        """The settings safe to show or store: everything but the key (only whether one is set)."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "api_key_set": bool(self.api_key),
            "timeout_s": self.timeout_s,
            "repeats": self.repeats,
            "temperature": self.temperature,
        }


def parse_reply(text: str) -> dict[str, float]:
    """The three criteria from a model reply: plain JSON, or JSON inside a ```json fence."""
    fenced = _FENCE.search(text)
    candidate = (fenced.group(1) if fenced else text).strip()
    try:
        data = json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise VlmReplyError(f"the model's reply is not valid JSON: {text[:120]!r}") from exc
    if not isinstance(data, dict):
        raise VlmReplyError(f"the model's reply is not a JSON object: {text[:120]!r}")
    scores: dict[str, float] = {}
    for key in CRITERIA:
        value = data.get(key)
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                value = None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 10:
            raise VlmReplyError(f"the model's reply lacks a 0-10 number for {key!r}: {text[:120]!r}")
        scores[key] = float(value)
    return scores


def image_data_url(path: Path) -> str:
    """A ``data:<mime>;base64,...`` URL of an image file."""
    mime = IMAGE_TYPES.get(path.suffix.lower())
    if mime is None:
        raise ValueError(f"{path.name}: the VLM judge reads {', '.join(IMAGE_TYPES)} images only")
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


class VlmJudge:
    """Scores a run's samples with an OpenAI-compatible vision model (see the module docstring)."""

    def __init__(self, config: VlmConfig, *, sleep=time.sleep) -> None:
        self.config = config
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"VlmJudge({self.config!r})"

    # -- one request ---------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        key = self.config.api_key
        return text.replace(key, "***") if key else text

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        request = urllib.request.Request(
            self.config.endpoint, data=json.dumps(payload).encode("utf-8"), headers=headers, method="POST"
        )
        with urllib.request.urlopen(request, timeout=self.config.timeout_s) as response:
            return json.loads(response.read().decode("utf-8"))

    def ask(self, data_url: str, prompt: str) -> dict[str, float]:
        """One judgement of one image, with retries; raises RuntimeError with a safe message."""
        payload = {
            "model": self.config.model,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "messages": [
                {"role": "system", "content": RUBRIC},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": f"Prompt: {prompt}"},
                        {"type": "image_url", "image_url": {"url": data_url}},
                    ],
                },
            ],
        }
        last_error = "no attempt made"
        for attempt in range(self.config.max_retries + 1):
            if attempt:
                self._sleep(self.config.backoff_s * 2 ** (attempt - 1))
            try:
                body = self._post(payload)
                return parse_reply(str(body["choices"][0]["message"]["content"]))
            except urllib.error.HTTPError as exc:
                last_error = f"HTTP {exc.code} from {self.config.endpoint}"
                if exc.code not in (408, 429) and exc.code < 500:
                    auth = exc.code in (401, 403)
                    hint = " (check the API key)" if auth else " (check the model name and URL)"
                    raise RuntimeError(last_error + hint) from None
            except (socket.timeout, TimeoutError):
                last_error = f"no reply from {self.config.endpoint} within {self.config.timeout_s:g} s"
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                    last_error = f"no reply from {self.config.endpoint} within {self.config.timeout_s:g} s"
                else:
                    last_error = f"cannot reach {self.config.endpoint}: {exc.reason} (is the server running?)"
            except OSError as exc:
                last_error = f"connection to {self.config.endpoint} failed: {type(exc).__name__}"
            except VlmReplyError as exc:
                last_error = str(exc)
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                last_error = f"unexpected reply shape from {self.config.endpoint}: {type(exc).__name__}"
            last_error = self._redact(last_error)
            log.warning("VLM judge attempt %d failed: %s", attempt + 1, last_error)
        raise RuntimeError(last_error)

    # -- one run -------------------------------------------------------------------------

    def score_image(self, path: Path, prompt: str) -> dict[str, Any]:
        """Mean and spread of the criteria over ``repeats`` judgements of one image."""
        data_url = image_data_url(path)
        replies = [self.ask(data_url, prompt) for _ in range(max(1, self.config.repeats))]
        means = {k: statistics.fmean(r[k] for r in replies) for k in CRITERIA}
        stds = {k: statistics.pstdev([r[k] for r in replies]) for k in CRITERIA}
        return {
            "image": path.name,
            "means": means,
            "stds": stds,
            "goodness": statistics.fmean(means.values()) / 10.0,
            "disagreement": any(s > self.config.disagreement_std for s in stds.values()),
        }

    def score_run(self, samples: Sequence[tuple[Path, str]]) -> JudgeResult:
        """Score one run's (image path, prompt) samples; never raises for server or file trouble."""
        if not samples:
            return JudgeResult.no_data("no sample images to judge")
        images = []
        for path, prompt in samples:
            try:
                images.append(self.score_image(Path(path), prompt))
            except (RuntimeError, OSError, ValueError) as exc:
                reason = self._redact(f"VLM judge could not score {Path(path).name}: {exc}")
                log.warning("%s", reason)
                return JudgeResult.no_data(reason, {"model": self.config.model, "images_scored": len(images)})
        goodness = statistics.fmean(image["goodness"] for image in images)
        details = {
            "model": self.config.model,
            "repeats": self.config.repeats,
            "images": images,
            "criteria_means": {k: statistics.fmean(i["means"][k] for i in images) for k in CRITERIA},
            "disagreements": [i["image"] for i in images if i["disagreement"]],
        }
        note = "the VLM's repeats disagree on some images" if details["disagreements"] else ""
        return JudgeResult.scored(1.0 - goodness, details, reason=note)
