"""``python -m torchplug.examples.digits``: a short seeded run reaches 97% and its checkpoint loads back."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("tqdm")

import torchplug  # noqa: E402
from torchplug.examples import digits  # noqa: E402


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """One ``--quick`` run (4 epochs, seed 0): its summary and checkpoint path."""
    from threadpoolctl import threadpool_limits  # a scikit-learn dependency

    path = tmp_path_factory.mktemp("digits") / "digits.pt"
    start = time.perf_counter()
    # One BLAS thread: the matrices are small, and a multi-threaded BLAS slows down by 10x or more
    # when another process competes for the cores (parallel test runs).
    with threadpool_limits(limits=1, user_api="blas"):
        summary = digits.main(["--quick", "--seed", "0", "--checkpoint", str(path), "--no-progress"])
    summary["wall"] = time.perf_counter() - start
    return summary, path


def test_quick_run_reaches_97_percent(quick_run):
    summary, path = quick_run
    assert summary["epochs"] == digits.QUICK_EPOCHS
    assert summary["device"] == "cpu"  # no accelerator is available in the test environments
    assert summary["test_size"] == 360 and summary["train_size"] == 1437
    assert summary["accuracy"] >= 0.97, summary
    assert summary["wall"] < 45, summary
    assert path.is_file()


def test_checkpoint_loads_back(quick_run):
    summary, path = quick_run
    ckpt = torchplug.load(path)
    assert ckpt["epochs"] == digits.QUICK_EPOCHS and ckpt["seed"] == 0
    assert ckpt["accuracy"] == summary["accuracy"]
    model = digits.DigitsNet()
    model.load_state_dict(ckpt["model"])
    _, test_set = digits.load_data(seed=0)
    loader = torchplug.utils.data.DataLoader(test_set, batch_size=100)
    assert digits.evaluate(model, loader, torchplug.device("cpu")) == summary["accuracy"]


def test_checkpoint_loads_in_pytorch(quick_run):
    torch = pytest.importorskip("torch")
    _, path = quick_run
    ckpt = torch.load(path, weights_only=True)
    assert ckpt["model"]["features.0.weight"].shape == (16, 1, 3, 3)
    assert ckpt["model"]["classifier.3.bias"].dtype == torch.float32


def test_command_line_help():
    out = subprocess.run([sys.executable, "-m", "torchplug.examples.digits", "--help"], capture_output=True,
                         text=True, check=True).stdout
    for option in ("--epochs", "--seed", "--quick", "--checkpoint"):
        assert option in out
