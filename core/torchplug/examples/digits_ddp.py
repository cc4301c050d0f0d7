"""The digits CNN of :mod:`torchplug.examples.digits` trained data-parallel on several processes.

``torchplugrun --nproc-per-node 2 -m torchplug.examples.digits_ddp`` (or ``python -m
torchplug.distributed.run ...``): every rank holds the model wrapped in ``DistributedDataParallel`` and reads
its share of each epoch through a ``DistributedSampler``; the per-rank batch is the one-process batch
divided by the number of ranks, so the global batch, the number of steps and the learning-rate schedule
are those of ``python -m torchplug.examples.digits``, and so is the accuracy.  Rank 0 evaluates and
saves the checkpoint (the unwrapped model's state dict).  Run without a launcher, it trains on one rank.
Needs the distributed plugin (torchplug-distributed) and the ``examples`` extra (scikit-learn).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

import torchplug as torch
from torchplug.nn import functional as F
from torchplug.optim.lr_scheduler import OneCycleLR
from torchplug.utils.data import DataLoader

from torchplug.examples.digits import BATCH_SIZE, EPOCHS, QUICK_EPOCHS, DigitsNet, evaluate, load_data

__all__ = ["train_ddp", "main"]


def train_ddp(epochs: int = EPOCHS, seed: int = 0) -> dict[str, Any]:
    """Train on every rank of the default process group; returns the summary (accuracy on rank 0's eval)."""
    dist = torch.distributed
    from torchplug.utils.data.distributed import DistributedSampler

    rank, world = dist.get_rank(), dist.get_world_size()
    if BATCH_SIZE % world:
        raise ValueError(f"the batch of {BATCH_SIZE} must divide evenly over the {world} ranks")
    torch.manual_seed(seed)
    train_set, test_set = load_data(seed)
    sampler = DistributedSampler(train_set, shuffle=True, seed=seed)
    loader = DataLoader(train_set, batch_size=BATCH_SIZE // world, sampler=sampler)
    model = torch.nn.parallel.DistributedDataParallel(DigitsNet())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = OneCycleLR(optimizer, max_lr=1e-2, epochs=epochs, steps_per_epoch=len(loader))
    start = time.perf_counter()
    loss_value = float("nan")
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            scheduler.step()
            loss_value = loss.item()
    seconds = time.perf_counter() - start
    accuracy = evaluate(model.module, DataLoader(test_set, batch_size=256), torch.device("cpu"))
    return {"accuracy": accuracy, "loss": loss_value, "seconds": seconds, "epochs": epochs, "seed": seed,
            "world_size": world, "rank": rank, "model": model.module}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Command line entry point (run on every rank)."""
    parser = argparse.ArgumentParser(prog="torchplugrun --nproc-per-node N -m torchplug.examples.digits_ddp",
                                     description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=None, help=f"training epochs (default {EPOCHS})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help=f"a short run ({QUICK_EPOCHS} epochs)")
    parser.add_argument("--checkpoint", default=None, help="where rank 0 saves the model (default: not saved)")
    args = parser.parse_args(argv)
    epochs = args.epochs if args.epochs is not None else (QUICK_EPOCHS if args.quick else EPOCHS)
    dist = torch.distributed
    launched = dist.is_torchelastic_launched() or dist.is_mpi_available() and _under_mpi()
    dist.init_process_group("gloo", **({} if launched else {"rank": 0, "world_size": 1}))
    try:
        summary = train_ddp(epochs=epochs, seed=args.seed)
        if summary["rank"] == 0:
            if args.checkpoint:
                torch.save({"model": summary["model"].state_dict(), "epochs": epochs}, args.checkpoint)
            print(f"ranks: {summary['world_size']}  test accuracy: {summary['accuracy']:.2%}  "
                  f"training time: {summary['seconds']:.1f} s", flush=True)
    finally:
        dist.destroy_process_group()
    return summary


def _under_mpi() -> bool:
    import os

    return any(v in os.environ for v in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"))


if __name__ == "__main__":
    main()
