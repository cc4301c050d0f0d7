"""``python -m torchplug.examples.digits``: a short seeded run reaches 97% and its checkpoint loads back."""

from __future__ import annotations

import subprocess
import sys

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
    # One BLAS thread: the matrices are small, and a multi-threaded BLAS slows down by 10x or more
    # when another process competes for the cores (parallel test runs).
    with threadpool_limits(limits=1, user_api="blas"):
        summary = digits.main(["--quick", "--seed", "0", "--checkpoint", str(path), "--no-progress"])
    return summary, path


def test_quick_run_reaches_97_percent(quick_run):
    summary, path = quick_run
    assert summary["epochs"] == digits.QUICK_EPOCHS
    assert summary["device"] == "cpu"  # no accelerator is available in the test environments
    assert summary["test_size"] == 360 and summary["train_size"] == 1437
    assert summary["accuracy"] >= 0.97, summary
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


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchplug.examples.digits", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("epochs", ["0", "-1", "two"])
def test_bad_epochs_is_a_usage_error_before_training(epochs, tmp_path):
    proc = _cli("--epochs", epochs, "--checkpoint", str(tmp_path / "d.pt"))
    assert proc.returncode == 2
    assert "usage:" in proc.stderr and "argument --epochs" in proc.stderr
    assert "Traceback" not in proc.stderr and "training on" not in proc.stdout


@pytest.mark.parametrize("where", ["missing_dir", "is_dir", "under_a_file"])
def test_unwritable_checkpoint_is_reported_before_training(where, tmp_path):
    (tmp_path / "afile").write_text("x")
    path = {"missing_dir": tmp_path / "nope" / "d.pt", "is_dir": tmp_path,
            "under_a_file": tmp_path / "afile" / "d.pt"}[where]
    proc = _cli("--quick", "--checkpoint", str(path))
    assert proc.returncode == 2
    assert "argument --checkpoint" in proc.stderr and "Traceback" not in proc.stderr
    assert "training on" not in proc.stdout
    assert not (tmp_path / "afile" / "d.pt").exists()


def test_checkpoint_probe_leaves_no_file_behind(tmp_path):
    assert digits._checkpoint_problem(str(tmp_path / "new.pt")) is None
    assert not (tmp_path / "new.pt").exists()
    (tmp_path / "old.pt").write_bytes(b"keep")
    assert digits._checkpoint_problem(str(tmp_path / "old.pt")) is None
    assert (tmp_path / "old.pt").read_bytes() == b"keep"
