"""The judge model server: one OpenAI-compatible chat-completions endpoint on the user's machine.

The VLM judge (images, video frames) and the LLM-as-judge (text answers) talk to the same
kind of server with the same settings: LM Studio (``http://localhost:1234/v1``), Ollama
(``http://localhost:11434/v1``), vLLM (``http://localhost:8000/v1``), llama.cpp's server
(``http://localhost:8080/v1``). ``base_url`` is that ``.../v1`` address; requests go to
``{base_url}/chat/completions``.

:meth:`JudgeServer.ask` sends one conversation and parses the reply with the caller's
``parse`` (which raises :class:`ReplyError` for a reply that is not the asked-for JSON).
Network errors, timeouts, HTTP 408/429/5xx and malformed replies are retried with
exponential backoff; other HTTP errors (401/403: the key; 404: the model or URL) are not.
What still fails raises ``RuntimeError`` with a message that is safe to show and log: the API
key is sent as ``Authorization: Bearer ...`` and is redacted from every message, and hidden
from every repr. The client holds no mutable state: one instance serves several threads.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")
_URL_CREDENTIALS = re.compile(r"://[^/@\s]+@")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class ReplyError(Exception):
    """A reply that is not the JSON the rubric asks for (retried, then reported as the reason)."""


@dataclass(frozen=True)
class JudgeServerConfig:
    """Where the judge server is and how to ask it. ``api_key`` is hidden from repr/str."""

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


def json_object(text: str) -> dict[str, Any]:
    """The JSON object of a model reply: plain, or inside a ```json fence; raises ReplyError."""
    fenced = _FENCE.search(text)
    candidate = (fenced.group(1) if fenced else text).strip()
    try:
        data = json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the model's reply is not valid JSON: {text[:120]!r}") from exc
    if not isinstance(data, dict):
        raise ReplyError(f"the model's reply is not a JSON object: {text[:120]!r}")
    return data


def number_0_10(data: dict[str, Any], key: str, text: str) -> float:
    """``data[key]`` as a number in 0..10 (a numeric string counts); raises ReplyError."""
    value = data.get(key)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 10:
        raise ReplyError(f"the model's reply lacks a 0-10 number for {key!r}: {text[:120]!r}")
    return float(value)


class JudgeServer:
    """Asks an OpenAI-compatible chat server, with retries (see the module docstring)."""

    def __init__(self, config: JudgeServerConfig, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config!r})"

    def redact(self, text: str) -> str:
        """``text`` with the API key, and any ``user:password@`` of a URL, replaced by ``***``."""
        key = self.config.api_key
        text = _URL_CREDENTIALS.sub("://***@", text)
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

    def ask(self, messages: list[dict[str, Any]], parse: Callable[[str], T]) -> T:
        """One judgement: ``parse`` of the reply to ``messages``, with retries; raises
        RuntimeError with a safe message."""
        payload = {"model": self.config.model, "temperature": self.config.temperature,
                   "max_tokens": self.config.max_tokens, "messages": messages}
        endpoint = self.config.endpoint
        last_error = "no attempt made"
        for attempt in range(self.config.max_retries + 1):
            if attempt:
                self._sleep(self.config.backoff_s * 2 ** (attempt - 1))
            try:
                body = self._post(payload)
                return parse(str(body["choices"][0]["message"]["content"]))
            except urllib.error.HTTPError as exc:
                last_error = f"HTTP {exc.code} from {endpoint}"
                if exc.code not in (408, 429) and exc.code < 500:
                    hint = " (check the API key)" if exc.code in (401, 403) else " (check the model name and URL)"
                    raise RuntimeError(self.redact(last_error + hint)) from None
            except (socket.timeout, TimeoutError):
                last_error = f"no reply from {endpoint} within {self.config.timeout_s:g} s"
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                    last_error = f"no reply from {endpoint} within {self.config.timeout_s:g} s"
                else:
                    last_error = f"cannot reach {endpoint}: {exc.reason} (is the server running?)"
            except OSError as exc:
                last_error = f"connection to {endpoint} failed: {type(exc).__name__}"
            except ReplyError as exc:
                last_error = str(exc)
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                last_error = f"unexpected reply shape from {endpoint}: {type(exc).__name__}"
            last_error = self.redact(last_error)
            log.warning("judge server attempt %d failed: %s", attempt + 1, last_error)
        raise RuntimeError(last_error)
