"""A relaunched run's series: true steps, whatever step the trainer counts from after a resume."""

from __future__ import annotations

from bracket.session.launches import Launch, up_to


def _points(first: int, last: int) -> list[tuple[int, float]]:
    return [(step, 1.0 / step) for step in range(first, last + 1)]


def test_a_trainer_that_counts_from_one_again_is_moved_on_to_true_steps(tmp_path):
    # sd-scripts' --resume without --skip_until_initial_step: logged steps 1…135 for true steps 67…201
    run = {"loss": _points(1, 70), "eval_loss": [(33, 0.5), (66, 0.4), (70, 0.3)], "launches": 1,
           "duration_s": 12.0}
    launch = Launch.of(run, tmp_path / "absent", "**/events.out.tfevents.*", 66)
    logged = [(step, 2.0) for step in range(1, 136)]
    joined = launch.joined(logged)
    assert [s for s, _ in joined] == list(range(1, 202))
    assert joined[:66] == _points(1, 66) and all(v == 2.0 for _, v in joined[66:])
    assert launch.joined([(33, 0.2)], eval_loss=True) == [(33, 0.5), (66, 0.4), (99, 0.2)]
    assert launch.launches_before == 1 and launch.duration_before == 12.0


def test_a_trainer_that_logs_true_steps_is_appended_as_it_is(tmp_path):
    launch = Launch.of({"loss": _points(1, 40)}, None, "", 30)
    assert [s for s, _ in launch.joined(_points(31, 90))] == list(range(1, 91))


def test_a_first_launch_or_a_restart_replaces_the_series_and_skips_old_event_files(tmp_path):
    old = tmp_path / "tb" / "20260101000000" / "network_train" / "events.out.tfevents.1.host"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"")
    launch = Launch.of({"loss": _points(1, 10), "launches": 1}, tmp_path / "tb", "**/events.out.tfevents.*", None)
    assert launch.old_event_files == (old,)
    assert launch.joined(_points(1, 5)) == _points(1, 5)
    assert up_to(_points(1, 10), 4) == _points(1, 4)


def test_the_start_up_of_a_launch_is_measured_in_steps_from_the_launches_noted(tmp_path):
    from bracket.session.launches import startup_steps

    assert startup_steps([tmp_path / "none"]) == 0.0  # until measured: 0
    for name, records in {"a": [(1, 31.0, 101, 131.0)], "b": [(2, 12.0, 42, 52.0), (5, 5.0, 5, 5.0)]}.items():
        logs = tmp_path / name / "logs"
        logs.mkdir(parents=True)
        for first_steps, first_s, steps, seconds in records:
            launch = Launch()
            launch.saw(first_steps, first_s)
            launch.keep(tmp_path / name, steps, seconds)
    # a: 1 s a step, 30 s before the first; b: 1 s a step, 10 s before; the 5-step one timed nothing
    assert startup_steps([tmp_path / "a", tmp_path / "b"]) == 20.0
    # counted in the session's steps: a's run makes 16 steps of its own where the session's make 8
    # (an LLM run at effective batch 4), b's 8 as the session: 15 and 10
    from bracket.session.launches import launch_steps

    runs = [{"run_dir": str(tmp_path / "a"), "max_steps": 16}, {"run_dir": str(tmp_path / "b"), "max_steps": 8}]
    assert launch_steps(runs, 8, None) == 12.5
