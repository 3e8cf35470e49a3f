"""The command line's parsers: the argument parser of every command and the CLI's own value
syntax (``--set FIELD=VALUE``, ``--prompts FILE|TEXT``).

Light on purpose: it imports nothing of the engine, so ``--help`` and a mistyped argument
answer at once. Every path argument is made absolute here (``settings.absolute_path``), so
nothing later depends on the folder the command was started from. Bounds and weights are
parsed later, in :mod:`bracket.cli.commands`, by the one bounds parser and the one weights
parser the app's Setup form uses.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from bracket.errors import BracketError
from bracket.judge.combine import JUDGE_NAMES
from bracket.safe_text import one_line
from bracket.search.halving import DEFAULT_ETA, DEFAULT_SMALLEST, parse_share, share_label
from bracket.settings import absolute_path


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one clear line, exit 2
        self.exit(2, f"error: {one_line(message)} (see `{help_command(self.prog)}`)\n")



def add_image_model_options(parser: argparse.ArgumentParser) -> None:
    """``--judge-text-image/--judge-likeness/--judge-preference``: the image judges' models of ``run``
    (stored with the session) and of ``doctor`` (checked as ``run`` would use them); blank: ``.env``'s."""
    parser.add_argument("--judge-text-image", metavar="MODEL", default="",
                        help="image judges' CLIP or SigLIP: a model folder or a Hugging Face name in the local cache "
                             "(default: BRACKET_JUDGE_TEXT_IMAGE)")
    parser.add_argument("--judge-likeness", metavar="MODEL", default="",
                        help="likeness model (DINOv2, CLIP or SigLIP; default: BRACKET_JUDGE_LIKENESS)")
    parser.add_argument("--judge-preference", metavar="MODEL", default="",
                        help="preference model for the optional preference judge (default: BRACKET_JUDGE_PREFERENCE)")

def help_command(prog: str) -> str:
    """The help command of the parser named ``prog``: ``bracket run`` → ``python -m bracket run --help``,
    the top-level ``bracket`` → ``python -m bracket --help``."""
    return " ".join(["python -m bracket", *prog.split()[1:], "--help"])


#: how each ``NAME=VALUE`` flag is written, for the message when one is malformed
_ASSIGNMENT_FORMS = {"--set": ("FIELD=VALUE", "dataset=/data/set"),
                     "--bound": ("KNOB=MIN:MAX or KNOB=A,B", "learning_rate=1e-5:1e-3")}


def parse_assignments(pairs: Sequence[str], what: str = "--set") -> dict[str, str]:
    """``["a=1", "b=x=y"]`` → ``{"a": "1", "b": "x=y"}``; a pair without ``=`` raises."""
    form, example = _ASSIGNMENT_FORMS.get(what, _ASSIGNMENT_FORMS["--set"])
    values: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise BracketError(f"{what} {pair!r} is malformed; write {form} (e.g. {what} {example}).")
        values[name.strip()] = value
    return values


def _share(text: str, *, smallest_rung: bool = False) -> float:
    try:
        return parse_share(text, smallest_rung=smallest_rung)
    except ValueError as error:  # argparse shows the message of an ArgumentTypeError
        raise argparse.ArgumentTypeError(str(error)) from None


def _smallest_rung(text: str) -> float:
    return _share(text, smallest_rung=True)


def _launch_share(text: str) -> float:
    return 0.0 if str(text).strip() in ("0", "0.0", "0%") else _share(text)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command; a mistake in the arguments exits 2 with one ``error:`` line."""
    parser = _Parser(prog="bracket", description="Find the best hyperparameters for a fine-tune.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("presets", help="list the presets")

    run = sub.add_parser("run", help="run a search")
    run.add_argument("--preset", required=True)
    run.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="a preset field value")
    run.add_argument("--budget", type=int, default=None,
                     help="number of training runs (configs x seeds; with --halving, full-run equivalents); default: "
                          "the smallest whose plan runs the "
                          "warm start, the LR bracket, the shape draws and two TPE proposals")
    run.add_argument("--steps", type=int, default=None, help="training steps per run (default: the preset's, else 100)")
    run.add_argument("--seeds", type=int, default=1, help="seeds per configuration")
    run.add_argument("--out", type=absolute_path, help="runs folder (default: BRACKET_RUNS_DIR or runs/)")
    run.add_argument("--name", help="session name (default: preset and time)")
    run.add_argument("--storage", help="database URL shared by several machines")
    run.add_argument("--search", choices=("tpe", "random"), default="tpe")
    run.add_argument("--no-warm-start", action="store_true",
                     help="skip the trainer's baseline and curated configs: the sampler from the first run")
    run.add_argument("--no-lr-bracket", action="store_true",
                     help="skip the learning-rate bracket (the best warm-start config at a lower and a higher rate)")
    run.add_argument("--no-hedge", action="store_true",
                     help="always train the whole warm start and bracket, even when its first configs score alike "
                          "(default: a flat warm start is cut short and the sampler explores the whole space)")
    run.add_argument("--confirm", type=int, default=None, metavar="RUNS",
                     help="runs of the budget for the confirmation round: the top configs re-run with fresh seeds "
                          "(default: a quarter of the budget from 8 configs on; 0: off)")
    run.add_argument("--halving", action=argparse.BooleanOptionalAction, default=False,
                     help="successive halving: every config pauses at rungs (from --smallest-rung of the steps, "
                          "times ETA each) and only the top 1/eta resume; the budget counts full runs (default: off, "
                          "full runs for every config)")
    run.add_argument("--eta", type=int, default=DEFAULT_ETA,
                     help=f"with --halving: the top 1/ETA of a rung go on (default {DEFAULT_ETA})")
    run.add_argument("--smallest-rung", type=_smallest_rung, default=DEFAULT_SMALLEST, metavar="SHARE",
                     help=f"with --halving: the first rung as a share of the steps, in (0, 1) (default "
                          f"{share_label(DEFAULT_SMALLEST)} = {DEFAULT_SMALLEST:.3f}, measured)")
    run.add_argument("--launch-cost", type=_launch_share, default=None, metavar="SHARE",
                     help="with --halving: a launch's start-up (model load, caches) as a share of a full run, counted "
                          "against the budget for every pause and resume (default: measured from the session's own "
                          "launches; 0: not counted)")
    run.add_argument("--no-validation", action="store_true",
                     help="score by training loss even where the trainer can hold out a validation split")
    run.add_argument("--prompts", help="sample prompt lines (a file path, or text with \\n); default: proposed from "
                     "the dataset's captions (held-out ones first) or, for LLM presets, its held-out instructions")
    run.add_argument("--sample-every", type=int, help="render samples every N steps")
    run.add_argument("--lr-min", type=float)
    run.add_argument("--lr-max", type=float)
    run.add_argument("--batch-sizes", help="batch-size choices, e.g. 1,2,4")
    run.add_argument("--bound", action="append", metavar="KNOB=MIN:MAX|A,B", help="narrow any knob")
    run.add_argument("--weights", help=f"score weights, e.g. loss=1,human=2 (judges: {', '.join(JUDGE_NAMES)})")
    run.add_argument("--judge-url", metavar="URL",
                     help="judge model server, OpenAI-compatible (e.g. http://localhost:1234/v1): the VLM judge of "
                          "image and video presets, the LLM-as-judge of LLM presets; BRACKET_VLM_API_KEY is sent "
                          "only when URL is BRACKET_VLM_BASE_URL")
    run.add_argument("--judge-model", metavar="NAME", help="the model the judge server should use")
    run.add_argument("--judge-repeats", type=int, metavar="N", help="judgements per sample or answer (default 3)")
    add_image_model_options(run)
    run.add_argument("--timeout", type=float, help="seconds a single run may take")
    run.add_argument("--seed", type=int, default=42, help="base seed of the runs")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--warm-start-from", nargs="+", default=[], metavar="SESSION", type=absolute_path,
                     help="folders of earlier sessions of this preset: their best configs join the warm start")

    status = sub.add_parser("status", help="show a session")
    status.add_argument("path", type=absolute_path)
    status.add_argument("--storage")
    status.add_argument("--json", action="store_true",
                        help="print the standings and the winner as JSON (the same answer as the app and the report)")
    resume = sub.add_parser("resume", help="resume a session")
    resume.add_argument("path", type=absolute_path)
    resume.add_argument("--storage")
    resume.add_argument("--quiet", action="store_true")
    resume.add_argument("--more-runs", type=int, default=None, metavar="N",
                        help="give a stopped or finished search N more runs of the search, then resume it")

    doctor = sub.add_parser("doctor", help="check a preset's trainer, models and command before spending GPU time")
    doctor.add_argument("--preset", required=True)
    doctor.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    add_image_model_options(doctor)

    finals = sub.add_parser("finals", help="re-run the best configs longer with fresh seeds")
    finals.add_argument("path", type=absolute_path)
    finals.add_argument("--top", type=int, default=3, help="how many configs")
    finals.add_argument("--steps", type=int, help="steps per final run (default 4x the search's)")
    finals.add_argument("--seeds", type=int, default=2, help="fresh seeds per config")
    finals.add_argument("--storage")

    report = sub.add_parser("report", help="write report.md and report.html into <session>/report, as the app does")
    report.add_argument("path", type=absolute_path)
    report.add_argument("--out", type=absolute_path, help="folder to write into (default: <session>/report)")
    report.add_argument("--storage")
    export = sub.add_parser("export", help="write the winner (or a run) as a ready-to-run script and config")
    export.add_argument("path", type=absolute_path)
    export.add_argument("--run", type=int, help="run id to export (default: the winner's best run)")
    export.add_argument("--steps", type=int, help="training steps (default: the winner's (or the run's) own)")
    export.add_argument("--out", type=absolute_path,
                        help="folder (default: <session>/export/<config>-run<ID>-<steps>steps)")
    export.add_argument("--cache-dir", type=absolute_path,
                        help="where the script makes the latent and text-encoder caches a trainer needs "
                        "(musubi-tuner presets; default: <out>/cache)")
    export.add_argument("--storage")

    weights = sub.add_parser("weights", help="change a session's judge weights (e.g. vlm=0 for a judge that agrees "
                             "with you no better than chance); scores follow at once")
    weights.add_argument("path", type=absolute_path)
    weights.add_argument("weights", help="judge=weight pairs laid over the session's, e.g. vlm=0,loss=1")
    weights.add_argument("--storage")
    pick = sub.add_parser("pick", help="make a config on the front of fidelity against flexibility the answer "
                          "(status, report, export and promote follow it)")
    pick.add_argument("path", type=absolute_path)
    pick.add_argument("config", nargs="?", default="",
                      help="the config's name (or id), as status --json's front names it")
    pick.add_argument("--winner", action="store_true", help="the winner by combined score is the answer again")
    pick.add_argument("--storage")

    winner = sub.add_parser("train-winner", aliases=["promote"],  # promote: the name it had, still taken
                            help="train the winner for the full length with periodic saves")
    winner.add_argument("path", type=absolute_path)
    winner.add_argument("--steps", type=int, help="full training length (default: the winner's best step, "
                        "scaled by the dataset sizes when --dataset is given)")
    winner.add_argument("--run", type=int, help="train this run's config instead of the winner")
    winner.add_argument("--save-every", type=int, help="save a checkpoint and state every N steps")
    winner.add_argument("--dataset", type=absolute_path, help="the full dataset (default: the search's)")
    winner.add_argument("--storage")

    worker = sub.add_parser("worker", help="join a search shared through PostgreSQL and train its configs here")
    worker.add_argument("--storage", help="database URL without the password (default: BRACKET_STORAGE_URL); "
                        "the password goes in PGPASSWORD")
    worker.add_argument("--session", required=True, help="name of the search to join")
    worker.add_argument("--gpu", help="GPU index for this worker's trainer processes (sets CUDA_VISIBLE_DEVICES)")
    worker.add_argument("--runs-dir", type=absolute_path, help="runs folder, shared by all machines at the same path "
                        "(default: BRACKET_RUNS_DIR or runs/)")
    worker.add_argument("--grace", type=float, default=60.0,
                        help="seconds without a heartbeat after which another worker's run is re-run")
    worker.add_argument("--quiet", action="store_true", help="no progress lines")
    worker.add_argument("--allow-custom-executables", action="store_true",
                        help="run the trainer programs and judge server the shared session names even when they are "
                        "not the ones configured on this machine (anyone who can write the database then runs code "
                        "here)")

    demo = sub.add_parser("demo-data", help="write the demo dataset")
    demo.add_argument("path", type=absolute_path)
    demo.add_argument("--count", type=int, default=64)
    return parser



def prompts_argument(value: str) -> str:
    """``--prompts``: a file's text, or prompt text (``\\n`` between lines); a path that names no
    file is refused rather than taken as a prompt."""
    looks_like_path = "\n" not in value and "\\n" not in value and " --" not in value and (
        value.startswith(("/", "./", "../", "~/")) or value.lower().endswith(".txt"))
    path = Path(value).expanduser()
    try:
        is_file = len(value) < 4096 and path.is_file()
    except OSError:
        is_file = False
    if is_file:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise BracketError(f"--prompts {value}: cannot read it ({type(error).__name__}); give a UTF-8 text file.") \
                from None
        if "\0" in text:  # a trainer's argv or prompt file cannot carry it: refused, not passed on
            raise BracketError(f"--prompts {value}: the file holds a NUL byte; give a UTF-8 text file of prompt "
                               "lines.")
        return text
    if looks_like_path:
        raise BracketError(f"--prompts {value}: no such file. Give an existing prompt file, or the prompt text itself "
                           "(lines separated by \\n).")
    return value.replace("\\n", "\n")
