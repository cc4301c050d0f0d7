"""``SummaryWriter`` and ``FileWriter`` (PyTorch's ``torch.utils.tensorboard.writer``) for torchplug tensors."""

from __future__ import annotations

import os
import time
from typing import Any

from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from torchplug.utils.tensorboard._summary import histogram, image, scalar

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes Event protobufs to an event file in ``log_dir`` (asynchronously, flushed every ``flush_secs``)."""

    def __init__(self, log_dir: str, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        log_dir = str(log_dir)
        self.event_writer = EventFileWriter(log_dir, max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: Any = None, walltime: float | None = None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary: Any, global_step: Any = None, walltime: float | None = None) -> None:
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


class SummaryWriter:
    """Log scalars, histograms and images of torchplug tensors for TensorBoard: event files in ``log_dir``
    (default ``runs/<date>_<host><comment>``). ``add_graph`` is refused: it needs PyTorch's JIT tracer."""

    def __init__(self, log_dir: str | None = None, comment: str = "", purge_step: int | None = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        if not log_dir:
            import socket
            from datetime import datetime

            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self._get_file_writer()
        # TensorFlow's default histogram buckets: exponential, 1.1 apart, from 1e-12 to 1e20 and mirrored
        v, buckets, neg_buckets = 1e-12, [], []
        while v < 1e20:
            buckets.append(v)
            neg_buckets.append(-v)
            v *= 1.1
        self.default_bins = neg_buckets[::-1] + [0] + buckets

    def _get_file_writer(self) -> FileWriter:
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory the event files go to."""
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Any = None, walltime: float | None = None,
                   new_style: bool = False, double_precision: bool = False) -> None:
        """Log one number (a Python number or a one-element tensor) under ``tag``."""
        if new_style or double_precision:
            raise NotImplementedError("add_scalar(new_style=True) (tensor-valued scalars) is not supported by "
                                      "torchplug's SummaryWriter; use the default new_style=False.")
        self._get_file_writer().add_summary(scalar(tag, scalar_value), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict[str, Any], global_step: Any = None,
                    walltime: float | None = None) -> None:
        """Log several numbers on one chart: each goes to its own run directory ``<log_dir>/<main_tag>_<tag>``."""
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            assert self.all_writers is not None
            writer = self.all_writers.get(fw_tag)
            if writer is None:
                writer = self.all_writers[fw_tag] = FileWriter(fw_tag, self.max_queue, self.flush_secs,
                                                               self.filename_suffix)
            writer.add_summary(scalar(main_tag, scalar_value), global_step, walltime)

    def add_histogram(self, tag: str, values: Any, global_step: Any = None, bins: Any = "tensorflow",
                      walltime: float | None = None, max_bins: int | None = None) -> None:
        """Log the distribution of ``values``; ``bins`` as ``numpy.histogram`` takes it, or ``"tensorflow"``."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_image(self, tag: str, img_tensor: Any, global_step: Any = None, walltime: float | None = None,
                  dataformats: str = "CHW") -> None:
        """Log an image (float in [0, 1] or uint8), laid out as ``dataformats`` says (CHW, HWC, HW)."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: Any = None, walltime: float | None = None,
                   dataformats: str = "NCHW") -> None:
        """Log a batch of images as one grid (``dataformats`` NCHW or NHWC)."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        raise NotImplementedError(
            "SummaryWriter.add_graph is not supported by torchplug: PyTorch builds the graph with its JIT tracer "
            "(torch.jit.trace), which torchplug does not have. Log scalars, histograms and images instead.")

    def flush(self) -> None:
        """Write everything pending to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file (a later add_* opens new ones)."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
