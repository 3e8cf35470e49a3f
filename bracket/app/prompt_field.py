"""The sample prompts of a search: proposed from the preset's dataset, and how the field reads.

The Setup form and ``bracket run`` without ``--prompts`` both start from :func:`proposed_prompts`
(``bracket.trainer.sample_proposal``: a few captions, held-out instructions, the demo's shapes)
and say where they came from; the field's label, syntax help and validation-loss note follow
what the preset's samples are (:func:`prompt_label`, :func:`prompt_help`).
"""

from __future__ import annotations

from bracket.errors import BracketError
from bracket.trainer.sample_proposal import KIND_WORDS, ProposedPrompts, propose_prompts


def _trainer(preset_id: str, fields: dict[str, str] | None):
    from bracket.fields import merge_with_defaults
    from bracket.registry import get_preset

    preset = get_preset(preset_id)
    return preset.trainer_factory(merge_with_defaults(preset.fields, fields or {}))


def sample_kind(preset_id: str, fields: dict[str, str] | None = None) -> str:
    """``image``, ``video`` or ``text``: what ``preset_id``'s samples are (``image`` when unknown)."""
    try:
        return str(_trainer(preset_id, fields).sample_kind) if preset_id else "image"
    except (BracketError, ValueError, TypeError, KeyError):
        return "image"


def proposed_prompts(preset_id: str, fields: dict[str, str] | None = None) -> ProposedPrompts | None:
    """The prompts proposed for ``preset_id`` with these field values, or None (nothing to
    propose them from yet: the dataset is not set or has no captions)."""
    if not preset_id:
        return None
    try:
        return propose_prompts(_trainer(preset_id, fields))
    except (BracketError, ValueError, TypeError, KeyError):
        return None


def prompt_label(kind: str) -> str:
    """The prompt field's label for samples of ``kind``."""
    if kind == "text":
        return "Sample prompts: instructions the model answers after each run (one per line; --d seed)"
    return f"Sample prompts: what each run renders as {KIND_WORDS.get(kind, kind)} (one per line; --d seed per prompt)"


def proposal_source(proposal: ProposedPrompts | None) -> str:
    """Where proposed prompts came from, in one sentence (or that there is nothing to propose them from)."""
    return (f"Proposed from {proposal.source}; edit them freely." if proposal is not None else
            "Nothing to propose them from yet (set a captioned dataset); type them: Start refuses an empty list.")


def prompt_help(kind: str, proposal: ProposedPrompts | None, source: str | None = None) -> str:
    """Where the prompts came from (``source``, else where ``proposal`` came from), their syntax,
    and what the validation loss means for ``kind``."""
    source = source or proposal_source(proposal)
    if kind == "text":
        syntax = "Each line is one instruction (use held-out questions, not training rows); `--d N` fixes its seed."
        loss = "Validation loss: the eval split's loss the trainer logs (eval/loss), not these answers."
    else:
        frames = " --f frames" if kind == "video" else ""
        syntax = (f"Trainer line syntax: `text --d seed --w width --h height{frames} --s steps`; "
                  "edit and image-to-video presets add their control or start image themselves.")
        loss = ("Validation loss: held-out images of the dataset, at fixed timesteps, where the trainer has it; "
                "these prompts are only what you rate.")
    return f"{source} {syntax} {loss}"


def validation_note(preset_id: str, fields: dict[str, str] | None = None) -> str:
    """The validation checkbox's note for ``preset_id``: what its held-out loss is, or that it has none."""
    try:
        trainer = _trainer(preset_id, fields) if preset_id else None
    except (BracketError, ValueError, TypeError, KeyError):
        trainer = None
    if trainer is None:
        return ""
    if trainer.sample_kind == "text":
        if getattr(trainer, "eval_loss_tags", ()):
            return "the loss on the fixed eval split (its Eval split field), the same rows for every run"
        return "this trainer logs no eval loss: runs are scored by training loss"
    if not trainer.validation_tags:
        return "this trainer logs no validation loss: runs are scored by training loss"
    return "holds out 10 % of a dataset of 20+ images (at most 6), same split for every run"
