"""The LLM-as-judge: a language model on the user's machine grades each run's held-out answers.

It talks to the same judge model server as the VLM judge (:mod:`bracket.judge.server`, one
OpenAI-compatible endpoint and settings; the key is never logged). It has two parts, merged
into one score per run the way the human judge merges ratings and pairwise choices:

**Rubric.** For every held-out answer (:mod:`bracket.judge.references`) the model gets the
fixed :data:`RUBRIC`, the question, the reference answer and the run's answer, and replies
with strict JSON ``{"correctness": 0-10, "completeness": 0-10, "format": 0-10}`` (10 best).
Each answer is asked ``repeats`` times; the answer's goodness is the mean of the criteria
over the repeats / 10, and the rubric score is ``1 - mean goodness`` (absolute). Repeats
whose spread exceeds ``disagreement_std`` are flagged in ``details["disagreements"]``. If
any answer cannot be judged after the server's retries, the run is left **unscored** by the
rubric (None and the reason) -- never raised, so runs are not judged on different subsets.

**Pairwise.** :meth:`LlmJudge.compare` shows the model the question, the reference and two
runs' answers to it as "Answer A" and "Answer B" in a random order (a judge model prefers
one position; shuffling spreads that bias evenly) and asks for ``{"winner": "A" | "B" |
"tie"}``. Each verdict becomes a :class:`bracket.judge.human.Comparison` of the two runs, and
:func:`score_llm_judge` fits **the same Bradley-Terry model** as the human pairwise choices
(:func:`bracket.judge.human.bradley_terry`): pairwise score = ``1 - mean P(beats another
compared run)``, reported with its strength and standard error.

The run's LLM-judge score is the weighted mean of whichever parts it has (rubric and
pairwise, ``rubric_weight`` / ``pairwise_weight``); a run with neither has no data.
"""

from __future__ import annotations

import logging
import random
import statistics
import time
from typing import Any, Iterable, Mapping, Sequence

from bracket.judge.base import JudgeResult
from bracket.judge.human import Comparison, bradley_terry
from bracket.judge.server import JudgeServer, JudgeServerConfig, ReplyError, json_object, number_0_10

log = logging.getLogger(__name__)

CRITERIA = ("correctness", "completeness", "format")
RUBRIC = (
    "You are a strict judge of answers written by a fine-tuned language model. You are given a "
    "question, a reference answer known to be good, and the model's answer. Score three things "
    "from 0 to 10, where 10 is always best:\n"
    "- correctness: the answer states the same facts, result or decision as the reference; "
    "0 = wrong or contradicts it.\n"
    "- completeness: it answers everything the question asks, as fully as the reference, "
    "without rambling or repeating itself.\n"
    "- format: it uses the form of the reference (length, structure, JSON keys, code, language).\n"
    "Judge the content, not the wording: a different phrasing of a correct answer is correct.\n"
    'Reply with only one JSON object and nothing else, e.g. {"correctness": 7, "completeness": 6, '
    '"format": 9}.'
)
PAIR_RUBRIC = (
    "You are a strict judge comparing two answers written by two fine-tuned language models. "
    "You are given a question, a reference answer known to be good, Answer A and Answer B. "
    "Decide which answer is better: more correct first (agrees with the reference), then more "
    "complete, then closer to the reference's form. The order in which they are shown means "
    "nothing. Answer \"tie\" only when they are equally good.\n"
    'Reply with only one JSON object and nothing else: {"winner": "A"} or {"winner": "B"} or '
    '{"winner": "tie"}.'
)


def parse_rubric(text: str) -> dict[str, float]:
    """The three criteria from a rubric reply (strict JSON, or JSON in a ```json fence)."""
    data = json_object(text)
    return {key: number_0_10(data, key, text) for key in CRITERIA}


def parse_winner(text: str) -> str:
    """``"A"``, ``"B"`` or ``"tie"`` from a pairwise reply; raises ReplyError otherwise."""
    winner = str(json_object(text).get("winner", "")).strip().lower()
    if winner in ("a", "b"):
        return winner.upper()
    if winner == "tie":
        return "tie"
    raise ReplyError(f"the model's reply names no winner A, B or tie: {text[:120]!r}")


def _question(answer: Mapping[str, Any]) -> str:
    text = str(answer.get("prompt", ""))
    if answer.get("input"):
        text += "\n\nInput:\n" + str(answer["input"])
    return text


class LlmJudge:
    """Grades held-out answers and compares two runs' answers (see the module docstring)."""

    def __init__(self, config: JudgeServerConfig, *, sleep=time.sleep) -> None:
        self.config = config
        self.server = JudgeServer(config, sleep=sleep)

    def __repr__(self) -> str:
        return f"LlmJudge({self.config!r})"

    # -- rubric ----------------------------------------------------------------------------

    def grade(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        """Mean and spread of the criteria over ``repeats`` judgements of one answer."""
        content = (f"Question:\n{_question(answer)}\n\nReference answer:\n{answer.get('reference', '')}\n\n"
                   f"Model's answer:\n{answer.get('completion', '')}")
        messages = [{"role": "system", "content": RUBRIC}, {"role": "user", "content": content}]
        replies = [self.server.ask(messages, parse_rubric) for _ in range(max(1, self.config.repeats))]
        means = {k: statistics.fmean(r[k] for r in replies) for k in CRITERIA}
        stds = {k: statistics.pstdev([r[k] for r in replies]) for k in CRITERIA}
        return {"prompt_index": answer.get("prompt_index"), "means": means, "stds": stds,
                "goodness": statistics.fmean(means.values()) / 10.0,
                "disagreement": any(s > self.config.disagreement_std for s in stds.values())}

    def score_answers(self, answers: Sequence[Mapping[str, Any]]) -> JudgeResult:
        """The rubric score of one run's held-out answers; never raises for server trouble."""
        answers = [a for a in answers if str(a.get("reference") or "").strip()]
        if not answers:
            return JudgeResult.no_data("no held-out answers to judge")
        graded = []
        for answer in answers:
            try:
                graded.append(self.grade(answer))
            except RuntimeError as exc:
                reason = self.server.redact(f"LLM judge could not grade held-out answer "
                                            f"{answer.get('prompt_index')}: {exc}")
                log.warning("%s", reason)
                return JudgeResult.no_data(reason, {"model": self.config.model, "answers_graded": len(graded)})
        details = {
            "model": self.config.model,
            "repeats": self.config.repeats,
            "answers": graded,
            "criteria_means": {k: statistics.fmean(g["means"][k] for g in graded) for k in CRITERIA},
            "disagreements": [g["prompt_index"] for g in graded if g["disagreement"]],
        }
        note = "the LLM judge's repeats disagree on some answers" if details["disagreements"] else ""
        return JudgeResult.scored(1.0 - statistics.fmean(g["goodness"] for g in graded), details, reason=note)

    # -- pairwise --------------------------------------------------------------------------

    def compare(self, left_run_id: int, left: Sequence[Mapping[str, Any]], right_run_id: int,
                right: Sequence[Mapping[str, Any]], *, rng: random.Random | None = None) -> list[dict[str, Any]]:
        """One verdict per held-out prompt both runs answered, order shown randomised.

        Returns ``[{left_run_id, right_run_id, winner: left|right|tie, prompt_index,
        shown_first: left|right}]``; raises RuntimeError (a safe message) when the server fails.
        """
        rng = rng or random.Random()
        by_index = {a.get("prompt_index"): a for a in right}
        verdicts = []
        for answer in left:
            other = by_index.get(answer.get("prompt_index"))
            if other is None or not str(answer.get("reference") or "").strip():
                continue
            left_first = rng.random() < 0.5
            first, second = (answer, other) if left_first else (other, answer)
            content = (f"Question:\n{_question(answer)}\n\nReference answer:\n{answer.get('reference', '')}\n\n"
                       f"Answer A:\n{first.get('completion', '')}\n\nAnswer B:\n{second.get('completion', '')}")
            winner = self.server.ask([{"role": "system", "content": PAIR_RUBRIC},
                                      {"role": "user", "content": content}], parse_winner)
            if winner != "tie":
                winner = "left" if (winner == "A") == left_first else "right"
            verdicts.append({"left_run_id": int(left_run_id), "right_run_id": int(right_run_id), "winner": winner,
                             "prompt_index": answer.get("prompt_index"),
                             "shown_first": "left" if left_first else "right"})
        return verdicts


def score_llm_judge(run_ids: Iterable[int], rubric: Mapping[int, JudgeResult | None],
                    comparisons: Iterable[Any] = (), *, rubric_weight: float = 1.0,
                    pairwise_weight: float = 1.0) -> dict[int, JudgeResult]:
    """One LLM-judge result per run: its rubric score merged with its Bradley-Terry pairwise score.

    ``rubric`` holds each run's rubric result (as :meth:`LlmJudge.score_answers` made it);
    ``comparisons`` every pairwise verdict of the session (dicts or Comparisons).
    """
    strengths = bradley_terry([c if isinstance(c, Comparison) else Comparison(
        int(c["left_run_id"]), int(c["right_run_id"]), str(c["winner"])) for c in comparisons])
    results: dict[int, JudgeResult] = {}
    for run_id in run_ids:
        found = rubric.get(run_id)
        details: dict[str, Any] = {}
        parts: list[tuple[float, float]] = []
        reasons = []
        if found is not None:
            details.update(found.details)
            if found.has_score and found.score is not None:
                details["rubric_score"] = found.score
                parts.append((rubric_weight, found.score))
            if found.reason:
                reasons.append(found.reason)
        if run_id in strengths:
            s = strengths[run_id]
            details.update(bt_strength=s.strength, bt_std_error=s.std_error, win_probability=s.win_probability,
                           comparisons=s.comparisons, wins=s.wins, losses=s.losses, ties=s.ties,
                           pairwise_score=1.0 - s.win_probability)
            parts.append((pairwise_weight, 1.0 - s.win_probability))
        total = sum(w for w, _ in parts)
        if not parts or total <= 0:
            results[run_id] = JudgeResult.no_data("; ".join(reasons) or "the LLM judge has not judged this run",
                                                  details)
        else:
            results[run_id] = JudgeResult.scored(sum(w * v for w, v in parts) / total, details,
                                                 reason="; ".join(reasons))
    return results
