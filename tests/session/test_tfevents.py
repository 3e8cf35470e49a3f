"""Reading scalars from tfevents: incremental polls, new files, both scalar formats, NaN."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter
from tensorboard.util import tensor_util

from bracket.session.scoring import ScalarReader, read_scalars


def _simple(tag: str, value: float) -> summary_pb2.Summary.Value:
    return summary_pb2.Summary.Value(tag=tag, simple_value=value)


def _tensor(tag: str, value: float) -> summary_pb2.Summary.Value:
    metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))
    return summary_pb2.Summary.Value(
        tag=tag, tensor=tensor_util.make_tensor_proto(np.float32(value)), metadata=metadata
    )


class _Writer:
    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.writer = EventFileWriter(str(folder))

    def write(self, step: int, *values: summary_pb2.Summary.Value) -> None:
        self.writer.add_event(event_pb2.Event(step=step, wall_time=1.0,
                                              summary=summary_pb2.Summary(value=list(values))))
        self.writer.flush()


def test_poll_reads_only_new_records_and_new_files(tmp_path):
    logs = tmp_path / "logs"
    first = _Writer(logs / "20240101000000" / "network_train")
    for step in (1, 2, 3):
        first.write(step, _simple("loss/current", 1.0 / step), _simple("loss/average", 0.5))
    reader = ScalarReader(logs)
    assert reader.poll() == 6
    assert reader.loss_series() == [(1, 1.0), (2, 0.5), (3, pytest.approx(1 / 3))]
    assert reader.poll() == 0

    first.write(4, _simple("loss/current", 0.25))
    assert reader.poll() == 1
    assert reader.series["loss/current"][-1] == (4, 0.25)
    assert len(reader.series["loss/current"]) == 4  # nothing read twice

    second = _Writer(logs / "20240101000001" / "network_train")
    second.write(5, _simple("loss/current", 0.2))
    assert reader.poll() == 1
    assert reader.last_step() == 5
    assert read_scalars(logs)["loss/current"] == reader.series["loss/current"]


def test_tensor_scalars_nan_and_tag_fallback(tmp_path):
    writer = _Writer(tmp_path / "run")
    writer.write(1, _tensor("loss", 0.7))
    writer.write(2, _tensor("loss", float("nan")), _simple("lr/unet", 1e-4))
    writer.write(3, _simple("loss", float("inf")))
    reader = ScalarReader(tmp_path)
    reader.poll()
    loss = reader.loss_series()  # "loss/current" is absent: falls back to "loss"
    assert [step for step, _ in loss] == [1, 2, 3]
    assert loss[0][1] == pytest.approx(0.7)
    assert math.isnan(loss[1][1]) and math.isinf(loss[2][1])
    assert reader.has_non_finite_loss()
    assert reader.series["lr/unet"] == [(2, pytest.approx(1e-4))]


def test_a_record_written_in_two_halves_is_read_once_complete(tmp_path):
    source = tmp_path / "src"
    writer = _Writer(source)
    for step in range(1, 4):
        writer.write(step, _simple("loss/current", float(step)))
    data = next(source.glob("events.out.tfevents.*")).read_bytes()
    target = tmp_path / "logs" / "events.out.tfevents.1.host"
    target.parent.mkdir()
    cut = len(data) - 10  # inside the last record
    target.write_bytes(data[:cut])
    reader = ScalarReader(tmp_path / "logs")
    assert reader.poll() == 2
    with open(target, "ab") as handle:
        handle.write(data[cut:])
    assert reader.poll() == 1
    assert reader.loss_series() == [(1, 1.0), (2, 2.0), (3, 3.0)]


def test_missing_or_empty_logging_dir_reads_as_nothing(tmp_path):
    for folder in (None, tmp_path / "missing", tmp_path):
        reader = ScalarReader(folder)
        assert reader.poll() == 0
        assert reader.loss_series() == [] and reader.last_step() is None
    assert read_scalars(tmp_path / "missing") == {}


def test_custom_glob_limits_the_files(tmp_path):
    _Writer(tmp_path / "a" / "network_train").write(1, _simple("loss/current", 1.0))
    _Writer(tmp_path / "b" / "other").write(1, _simple("loss/current", 2.0))
    series = read_scalars(tmp_path, "*/network_train/events.out.tfevents.*")
    assert series == {"loss/current": [(1, 1.0)]}
