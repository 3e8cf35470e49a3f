"""A halving search without ``--sample-every`` renders samples at each rung step (the launch's
sample interval is the rungs' own, ``bracket.session.loop.rung_steps.launch_sample_every``), a full-run
search keeps the trainer's default, and the notes of the configs waiting at a rung follow their
place there as other configs' scores land (``Halving.renote_paused``).

The pausing fake (``pausing_trainer.py``) renders samples only when it is given an interval, as
sd-scripts does (no sample at a pause step that is not a sample step)."""

from __future__ import annotations

from bracket.session import HalvingSettings, SearchSettings, Session
from bracket.session.scheduling import Halving
from tests.session.test_halving_search import halving_fields


def _recording(session: Session) -> list[list[str]]:
    """The trainer command of every launch the session prepares from now on."""
    commands: list[list[str]] = []
    prepare = session.trainer.prepare_run

    def prepared(request):  # noqa: ANN001, ANN202 - the trainer's own signature
        spec = prepare(request)
        commands.append(list(spec.cmd))
        return spec

    session.trainer.prepare_run = prepared
    return commands


def _flag(cmd: list[str], flag: str) -> str | None:
    return cmd[cmd.index(flag) + 1] if flag in cmd else None


def test_paused_runs_have_samples_at_their_rung_and_the_waiting_notes_count_every_config(tmp_path, runs_dir,
                                                                                         monkeypatch):
    # 4 configs to 1/3 → 1 to full; no --sample-every, no validation loss
    settings = SearchSettings(budget=2, steps=18,
                              halving=HalvingSettings(eta=3, smallest_rung=1 / 3, launch_share=0),
                              confirm=0,
                              sample_prompts="a red circle --d 1", validation_split=0)
    assert settings.plan() == "budget 2 full runs = 4 configs to 1/3 → 1 to full"
    notes_before_the_end: dict[str, str] = {}
    closing = Halving.closing

    def seen_then_stopped(scheduler: Halving, view) -> None:
        notes_before_the_end.update({c.name: c.rung_note for c in view.configs if c.rung_state == "paused"})
        closing(scheduler, view)

    monkeypatch.setattr(Halving, "closing", seen_then_stopped)
    session = Session.create("demo-cpu", halving_fields(tmp_path), settings, out_dir=runs_dir, name="rungsamples")
    commands = _recording(session)
    assert session.run() == "finished"
    assert commands and {_flag(cmd, "--sample_every_n_steps") for cmd in commands} == {"6"}  # the rung's step
    runs = [r for r in session.store.runs(session.name) if r["stage"] == "search"]
    configs = session.store.configs(session.name, stage="search")
    assert len(configs) == 4
    paused = [r for r in runs if r["status"] == "paused"]
    assert paused and all(r["pause_step"] == 6 for r in paused)
    for run in paused:  # something to rate (and for the judge) at the rung: the samples of step 6
        assert 6 in {s["step"] for s in run["samples"]}, (run["label"], run["samples"])
    full = next(r for r in runs if r["status"] == "done")
    assert {s["step"] for s in full["samples"]} >= {6, 18}

    # before the search stopped them, every config waiting at 1/3 said its place among all 4 there
    assert notes_before_the_end, "no config waited at the rung"
    for name, note in notes_before_the_end.items():
        assert note.startswith("paused at 1/3: ") and note.endswith(" of 4, top 1 goes on"), (name, note)
    session.close()


def test_a_full_run_search_samples_at_the_default_interval_not_the_rungs(tmp_path, runs_dir):
    """Without halving no rung sets the interval: an image run samples every steps/5 (issue 43:
    the best step is chosen among 5+ sampled steps; ``bracket.trainer.sample_steps``)."""
    from bracket.trainer.sample_steps import default_every

    settings = SearchSettings(budget=1, steps=18, confirm=0, sample_prompts="a red circle --d 1",
                              validation_split=0)
    session = Session.create("demo-cpu", halving_fields(tmp_path), settings, out_dir=runs_dir, name="fullsamples")
    commands = _recording(session)
    assert session.run() == "finished"
    assert commands and all(_flag(cmd, "--sample_every_n_steps") == str(default_every(18)) for cmd in commands), \
        commands
    session.close()
