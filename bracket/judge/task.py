"""The task judge: an LLM run's answers to held-out prompts, measured against the reference answers.

Eval loss says how surprised a model is by the held-out text; it does not say whether the
model *answers* better. This judge reads what each run actually answered to the held-out rows
of the session's eval split (the same rows, prompts and seeds for every run, never trained
on; see :mod:`bracket.judge.references`) and compares each answer with the row's reference:

* **exact** -- the answer equals the reference after trimming whitespace;
* **normalised** -- equal after lower-casing, dropping punctuation and articles (a, an, the)
  and collapsing whitespace (the SQuAD rule), so ``"The answer: 7."`` matches ``"7"`` only
  when nothing else is said, and ``"Paris."`` matches ``"paris"``;
* **token_f1** -- unigram overlap F1 (ROUGE-1 F-measure of Google's ``rouge-score``);
* **rouge_l** -- ROUGE-L F-measure (longest common subsequence, ``rouge-score``).

Tokens are lower-cased runs of letters and digits of any script (``rouge-score``'s default
tokenizer keeps ASCII only, which would score every non-English answer 0).

**Structured output.** When the references are JSON (an object or list in every reference),
the dataset teaches structured output, and ``json_valid`` (the share of answers that parse as
JSON) and ``json_keys`` (the share that parse *and* carry every top-level key of their
reference object) are measured as well. An answer inside a ```json fence counts.

The run's score is ``1 - quality`` (lower is better, in [0, 1], absolute: another run never
moves it), where quality is the mean of ``normalised``, ``token_f1`` and ``rouge_l`` and, for
JSON datasets, ``json_keys`` too. ``exact`` is reported, not scored (it is ``normalised``'s
stricter twin). Details carry every metric and the per-answer figures.
"""

from __future__ import annotations

import functools
import json
import re
import statistics
import string
import unicodedata
from typing import Any, Mapping, Sequence

from bracket.judge.base import JudgeResult

METRICS = ("exact", "normalised", "token_f1", "rouge_l")
JSON_METRICS = ("json_valid", "json_keys")
#: the metrics the score is the mean of (plus ``json_keys`` for JSON datasets)
SCORED = ("normalised", "token_f1", "rouge_l")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_TOKEN = re.compile(r"\w+", re.UNICODE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class _UnicodeTokenizer:
    """Lower-cased word tokens of any script, for ``rouge-score`` (its own keeps ASCII only)."""

    def tokenize(self, text: str) -> list[str]:
        return _TOKEN.findall(text.lower())


@functools.lru_cache(maxsize=1)
def _scorer() -> Any:
    """The ROUGE scorer, made on first use: ``rouge-score`` imports nltk (seconds), which every
    ``bracket`` command that merely opens a session (``status``) would pay otherwise."""
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1", "rougeL"], tokenizer=_UnicodeTokenizer())


def normalise(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces (the SQuAD answer normalisation)."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if ch in string.punctuation or unicodedata.category(ch).startswith("P") else ch
                   for ch in text)
    return " ".join(_ARTICLES.sub(" ", text).split())


def parse_json_answer(text: str) -> Any:
    """The JSON value an answer holds (plain, or inside a ```json fence); raises ValueError."""
    fenced = _FENCE.search(text)
    return json.loads((fenced.group(1) if fenced else text).strip())


def is_json_reference(reference: str) -> bool:
    """Whether a reference answer is a JSON object or list (a structured-output dataset)."""
    try:
        return isinstance(parse_json_answer(reference), (dict, list))
    except ValueError:
        return False


def answer_metrics(answer: str, reference: str, *, structured: bool = False) -> dict[str, float]:
    """Every metric of one answer against its reference, each in [0, 1], higher is better."""
    rouge = _scorer().score(reference, answer)
    figures = {
        "exact": float(answer.strip() == reference.strip()),
        "normalised": float(normalise(answer) == normalise(reference)),
        "token_f1": rouge["rouge1"].fmeasure,
        "rouge_l": rouge["rougeL"].fmeasure,
    }
    if structured:
        try:
            parsed, valid = parse_json_answer(answer), 1.0
        except ValueError:
            parsed, valid = None, 0.0
        wanted = parse_json_answer(reference)
        if isinstance(wanted, dict):
            keys = float(isinstance(parsed, dict) and set(wanted) <= set(parsed))
        else:
            keys = float(isinstance(parsed, type(wanted)))
        figures.update(json_valid=valid, json_keys=keys)
    return figures


def score_task(answers: Sequence[Mapping[str, Any]]) -> JudgeResult:
    """Score one run from its held-out answers: ``[{prompt_index, reference, completion}, ...]``.

    No answers (the dataset format has no reference, the generation step failed) is no data;
    the judge never raises for a run it cannot score.
    """
    kept = [a for a in answers if a.get("reference") is not None and str(a["reference"]).strip()]
    pairs = [(str(a.get("completion") or ""), str(a["reference"])) for a in kept]
    if not pairs:
        return JudgeResult.no_data("no held-out answers with a reference to measure")
    structured = all(is_json_reference(reference) for _, reference in pairs)
    per_answer = [answer_metrics(answer, reference, structured=structured) for answer, reference in pairs]
    names = METRICS + (JSON_METRICS if structured else ())
    means = {name: statistics.fmean(figures[name] for figures in per_answer) for name in names}
    scored = SCORED + (("json_keys",) if structured else ())
    quality = statistics.fmean(means[name] for name in scored)
    details: dict[str, Any] = {
        "answers": len(pairs),
        "structured": structured,
        "quality": quality,
        **means,
        "per_answer": [{"prompt_index": a.get("prompt_index"), **{k: round(v, 4) for k, v in f.items()}}
                       for a, f in zip(kept, per_answer)],
    }
    return JudgeResult.scored(1.0 - quality, details)
