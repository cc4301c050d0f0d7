"""Train a small CNN on scikit-learn's bundled 8x8 digits: ``python -m torchplug.examples.digits``.

Ordinary PyTorch code run through ``import torchplug as torch``: ``nn`` modules, ``DataLoader``
with a seeded generator, Adam with a one-cycle learning-rate schedule, a tqdm progress bar, and a
checkpoint written with ``torch.save``.  The data (1797 images, no download) comes from
``sklearn.datasets.load_digits``; 20% is held out, stratified, for the test accuracy.
Needs the ``examples`` extra: ``pip install -e ".[examples]"`` (scikit-learn, tqdm).
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import torchplug as torch
from torchplug import nn
from torchplug.nn import functional as F
from torchplug.optim.lr_scheduler import OneCycleLR
from torchplug.utils.data import DataLoader, TensorDataset

__all__ = ["DigitsNet", "load_data", "pick_device", "train", "evaluate", "main"]

EPOCHS = 12
QUICK_EPOCHS = 4
BATCH_SIZE = 32


class DigitsNet(nn.Module):
    """conv 1->16 3x3, relu, conv 16->32 3x3, relu, maxpool 2, linear 512->64, relu, linear 64->10."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


def pick_device() -> torch.device:
    """The current accelerator when one is available, else the cpu."""
    acc = torch.accelerator.current_accelerator(check_available=True)
    return torch.device(acc) if acc is not None else torch.device("cpu")


def load_data(seed: int) -> tuple[TensorDataset, TensorDataset]:
    """(train, test) datasets of standardised 1x8x8 images; the split is stratified and seeded."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]  # (N, 1, 8, 8) in [0, 1]
    labels = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=0.2, random_state=seed, stratify=labels)
    mean, std = float(x_train.mean()), float(x_train.std())  # statistics of the training split only
    x_train, x_test = (x_train - mean) / std, (x_test - mean) / std
    return (TensorDataset(torch.from_numpy(x_train), torch.from_numpy(y_train)),
            TensorDataset(torch.from_numpy(x_test), torch.from_numpy(y_test)))


def evaluate(model: nn.Module, loader: DataLoader, device: torch.device) -> float:
    """Accuracy of ``model`` over ``loader``."""
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            correct += (model(x).argmax(dim=1) == y).sum().item()
            total += y.numel()
    return correct / total


def train(epochs: int = EPOCHS, seed: int = 0, device: torch.device | None = None,
          progress: bool = True) -> tuple[nn.Module, dict[str, Any]]:
    """Train a :class:`DigitsNet`; returns it and a summary (accuracy, loss, seconds, device...)."""
    from tqdm.auto import tqdm

    device = device if device is not None else pick_device()
    torch.manual_seed(seed)
    train_set, test_set = load_data(seed)
    generator = torch.Generator().manual_seed(seed)
    train_loader = DataLoader(train_set, batch_size=BATCH_SIZE, shuffle=True, generator=generator)
    test_loader = DataLoader(test_set, batch_size=256)

    model = DigitsNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = OneCycleLR(optimizer, max_lr=1e-2, epochs=epochs, steps_per_epoch=len(train_loader))

    start = time.perf_counter()
    loss_value = float("nan")
    for epoch in range(epochs):
        model.train()
        bar = tqdm(train_loader, desc=f"epoch {epoch + 1}/{epochs}", leave=False, disable=not progress,
                   file=sys.stdout)
        for x, y in bar:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            scheduler.step()
            loss_value = loss.item()
            bar.set_postfix(loss=f"{loss_value:.4f}", refresh=False)
        bar.close()
        if progress:
            acc = evaluate(model, test_loader, device)
            print(f"epoch {epoch + 1:>2}/{epochs}  loss {loss_value:.4f}  test accuracy {acc:.2%}")
    seconds = time.perf_counter() - start
    accuracy = evaluate(model, test_loader, device)
    summary = {"accuracy": accuracy, "loss": loss_value, "seconds": seconds, "epochs": epochs, "seed": seed,
               "device": str(device), "train_size": len(train_set), "test_size": len(test_set)}
    return model, summary


def _positive_int(text: str) -> int:
    """argparse type: an int >= 1 (argparse turns the ValueError/ArgumentTypeError into a usage error)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _checkpoint_problem(path: str) -> str | None:
    """Why ``path`` cannot be written, checked before training rather than after it; None if it can."""
    target = Path(path)
    parent = target.parent
    if not parent.is_dir():
        return f"the directory {str(parent)!r} does not exist (create it, or pass another --checkpoint)"
    if target.is_dir():
        return f"{path!r} is a directory; pass a file path such as {str(target / 'digits.pt')!r}"
    existed = target.exists()
    try:  # a real probe (os.access says yes to root even on read-only mounts); appending truncates nothing
        with open(target, "ab"):
            pass
    except OSError as exc:
        return f"{path!r} is not writable ({exc.strerror or exc}); pass a writable --checkpoint path"
    if not existed:
        target.unlink()
    return None


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Command line entry point; returns the training summary."""
    parser = argparse.ArgumentParser(prog="python -m torchplug.examples.digits", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=_positive_int, default=None, help=f"training epochs (default {EPOCHS})")
    parser.add_argument("--seed", type=int, default=0, help="seed for the split, init and shuffling (default 0)")
    parser.add_argument("--quick", action="store_true", help=f"a short run ({QUICK_EPOCHS} epochs; still reaches 97%%)")
    parser.add_argument("--checkpoint", default="digits.pt", help="where to save the checkpoint (default digits.pt)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar or per-epoch lines")
    args = parser.parse_args(argv)
    problem = _checkpoint_problem(args.checkpoint)
    if problem:
        parser.error(f"argument --checkpoint: {problem}")
    epochs = args.epochs if args.epochs is not None else (QUICK_EPOCHS if args.quick else EPOCHS)

    device = pick_device()
    print(f"training on {device}")
    model, summary = train(epochs=epochs, seed=args.seed, device=device, progress=not args.no_progress)
    torch.save({"model": model.state_dict(), "epochs": epochs, "seed": args.seed,
                "accuracy": summary["accuracy"]}, args.checkpoint)
    summary["checkpoint"] = args.checkpoint
    print(f"device: {summary['device']}  test accuracy: {summary['accuracy']:.2%} "
          f"({summary['test_size']} images)  training time: {summary['seconds']:.1f} s  "
          f"checkpoint: {args.checkpoint}")
    return summary


if __name__ == "__main__":
    main()
