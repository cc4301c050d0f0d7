"""torchplug.utils.tensorboard.SummaryWriter against torch's: the same calls write the same summaries
(read back with tensorboard's own event loader; skipped without the tensorboard package), and without
tensorboard the import fails as torch's does."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import numpy as np
import pytest

import torchplug



@pytest.fixture
def tb():
    pytest.importorskip("tensorboard")
    pytest.importorskip("PIL")
    import torchplug.utils.tensorboard as module

    return module


def _events(log_dir):
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    found = {}
    for path in sorted(glob.glob(os.path.join(log_dir, "**", "events.out.tfevents.*"), recursive=True)):
        run = os.path.relpath(os.path.dirname(path), log_dir)
        for event in EventFileLoader(path).Load():
            for value in event.summary.value:
                found.setdefault((run, value.tag), []).append((event.step, value))
    return found


def _log(lib, writer_cls, log_dir):
    rng = np.random.default_rng(0)
    values = lib.tensor(rng.standard_normal(1000).astype(np.float32))
    img = lib.tensor(rng.random((3, 8, 6)).astype(np.float32))
    with writer_cls(log_dir) as writer:
        for step in range(3):
            writer.add_scalar("loss", lib.tensor(1.0 / (step + 1)), step)
            writer.add_scalar("lr", 0.1 * step, global_step=step)
        writer.add_scalars("run", {"train": lib.tensor(2.0), "test": 3.0}, 5)
        writer.add_histogram("weights", values, 1)
        writer.add_histogram("weights_auto", values, 1, bins="auto")
        writer.add_image("picture", img, 2)
        writer.add_image("gray", img[0], 2, dataformats="HW")
        writer.add_images("batch", lib.stack([img, img]), 2)
        writer.flush()
    return _events(log_dir)


def test_summaries_match_torch(tmp_path, tb):
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    ours = _log(torchplug, tb.SummaryWriter, str(tmp_path / "ours"))
    theirs = _log(torch, TorchWriter, str(tmp_path / "theirs"))
    assert sorted(ours) == sorted(theirs)
    assert ("run_train", "run") in ours and ("run_test", "run") in ours
    for key in ours:
        for (step_a, a), (step_b, b) in zip(ours[key], theirs[key], strict=True):
            assert step_a == step_b
            kind = a.WhichOneof("value")
            assert kind == b.WhichOneof("value")
            if kind == "simple_value":
                assert a.simple_value == pytest.approx(b.simple_value)
            elif kind == "histo":
                assert list(a.histo.bucket) == list(b.histo.bucket)
                np.testing.assert_allclose(a.histo.bucket_limit, b.histo.bucket_limit)
                assert a.histo.num == b.histo.num
                assert a.histo.sum == pytest.approx(b.histo.sum, rel=1e-6)
            else:
                assert (a.image.height, a.image.width, a.image.colorspace) == \
                    (b.image.height, b.image.width, b.image.colorspace)
                assert a.image.encoded_image_string == b.image.encoded_image_string


def test_default_log_dir_and_reopen(tmp_path, monkeypatch, tb):
    monkeypatch.chdir(tmp_path)
    writer = tb.SummaryWriter(comment="_exp")
    assert writer.get_logdir().startswith("runs" + os.sep) and writer.get_logdir().endswith("_exp")
    writer.close()
    writer.add_scalar("after_close", 1.0, 0)  # reopens a new event file, as torch's does
    writer.close()
    assert [tag for (_, tag) in _events(writer.get_logdir())] == ["after_close"]


def test_add_graph_is_refused_clearly(tmp_path, tb):
    with tb.SummaryWriter(str(tmp_path)) as writer:
        with pytest.raises(NotImplementedError, match="add_graph is not supported by torchplug"):
            writer.add_graph(torchplug.nn.Linear(2, 2), torchplug.ones(1, 2))


def test_scalar_must_have_one_element(tmp_path, tb):
    with tb.SummaryWriter(str(tmp_path)) as writer:
        with pytest.raises(AssertionError, match="Tensor should contain one element"):
            writer.add_scalar("bad", torchplug.ones(2))


def test_without_tensorboard_the_import_fails_like_torchs():
    # a tensorboard module that cannot be imported: the same ModuleNotFoundError torch.utils.tensorboard gives
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "try:\n    import torchplug.utils.tensorboard\nexcept ImportError as e:\n    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert out.startswith("ModuleNotFoundError import of tensorboard halted")
