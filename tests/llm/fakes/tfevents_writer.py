"""Write scalar events the way the real trainers do, for the fake trainers (tensorboard only)."""

from __future__ import annotations

import time

from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter


class ScalarWriter:
    """A tiny stand-in for SummaryWriter.add_scalar (legacy simple_value summaries)."""

    def __init__(self, logdir: str) -> None:
        self._writer = EventFileWriter(logdir)

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        summary = Summary(value=[Summary.Value(tag=tag, simple_value=float(value))])
        self._writer.add_event(Event(wall_time=time.time(), step=int(step), summary=summary))
        self._writer.flush()  # as transformers' TensorBoardCallback after every log

    def close(self) -> None:
        self._writer.close()
