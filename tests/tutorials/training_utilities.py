# Idioms from "Saving and Loading a General Checkpoint", "Automatic Mixed Precision" (CPU autocast with
# bfloat16), gradient clipping, learning-rate schedulers, no_grad/inference_mode, model.eval(),
# manual_seed, printing a model, and cuda/accelerator device selection.
import io
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(42)
device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"Using {device} device", torch.cuda.device_count())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
        self.bn = nn.BatchNorm1d(120)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.bn(self.fc1(x)))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net().to(device)
print(net)
print(sum(p.numel() for p in net.parameters() if p.requires_grad))
templates = torch.randn(10, 3, 32, 32)
labels = torch.randint(0, 10, (256,))
inputs_all = templates[labels] + torch.randn(256, 3, 32, 32)
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
scheduler = optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.05, total_steps=16)
EPOCH = 2
for epoch in range(EPOCH):
    running_loss = 0.0
    for i in range(0, 256, 32):
        inputs, targets = inputs_all[i:i + 32].to(device), labels[i:i + 32].to(device)
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        running_loss += loss.item()
    print(f"[{epoch + 1}] loss: {running_loss / 8:.3f} lr {scheduler.get_last_lr()[0]:.5f}")

# --- general checkpoint with optimizer state
with tempfile.TemporaryDirectory() as tmp:
    PATH = os.path.join(tmp, "model.pt")
    torch.save({
        'epoch': EPOCH,
        'model_state_dict': net.state_dict(),
        'optimizer_state_dict': optimizer.state_dict(),
        'scheduler_state_dict': scheduler.state_dict(),
        'loss': loss,
    }, PATH)
    model = Net()
    optimizer2 = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    checkpoint = torch.load(PATH, weights_only=True)
    model.load_state_dict(checkpoint['model_state_dict'])
    optimizer2.load_state_dict(checkpoint['optimizer_state_dict'])
    epoch = checkpoint['epoch']
    loss = checkpoint['loss']
    model.eval()
    print("checkpoint", epoch, "loss", loss.item(), optimizer2.param_groups[0]['lr'])
    with torch.no_grad():
        same = torch.equal(model(inputs_all[:4]), net.eval()(inputs_all[:4]))
    print("restored same outputs:", same)
    mom = optimizer2.state_dict()['state'][0]['momentum_buffer']
    print(torch.equal(mom, optimizer.state_dict()['state'][0]['momentum_buffer']))

buffer = io.BytesIO()
torch.save(net.state_dict(), buffer)
buffer.seek(0)
print(sorted(torch.load(buffer).keys())[:3])

# --- autocast on cpu with bfloat16, schedulers, gradient clipping by value
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
opt = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20)
warm = optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 5))
x = torch.randn(256, 64)
w_true = torch.randn(64, 10)
y = (x @ w_true).argmax(1)
for step in range(20):
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        out = model(x)
        assert out.dtype == torch.bfloat16, out.dtype
        loss = F.cross_entropy(out, y)
    assert loss.dtype == torch.float32
    loss.backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=1.0)
    opt.step()
    sched.step()
    warm.step()
    if step % 4 == 0:
        print("amp step", step, "loss", loss.item())
with torch.amp.autocast("cpu", dtype=torch.bfloat16):
    print(model(x[:2]).dtype)
model.eval()
with torch.inference_mode():
    pred = model(x)
    print(pred.requires_grad, torch.is_inference_mode_enabled())
with torch.no_grad():
    acc = (model(x).argmax(1) == y).float().mean()
print("accuracy", acc.item() > 0.3)
plateau = optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=0)
for v in [1.0, 1.0, 1.0]:
    plateau.step(v)
print(opt.param_groups[0]["lr"])

# --- activation checkpointing (torch.utils.checkpoint) on a deep MLP
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Dropout(0.1), nn.Linear(d, d))
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + self.net(x))


class Deep(nn.Module):
    def __init__(self, d=32, depth=4):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(depth))
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False)
        return self.head(x)


deep = Deep()
opt = optim.Adam(deep.parameters(), lr=1e-3)
xd = torch.randn(64, 32)
yd = torch.randint(0, 10, (64,))
for step in range(12):
    opt.zero_grad()
    loss = F.cross_entropy(deep(xd), yd)
    loss.backward()
    opt.step()
    if step % 4 == 0:
        print("checkpointed step", step, "loss", loss.item())
seq = nn.Sequential(*[Block(32) for _ in range(4)])
out = checkpoint_sequential(seq, 2, torch.randn(8, 32, requires_grad=True), use_reentrant=False)
out.sum().backward()
print(out.shape, all(p.grad is not None for p in seq.parameters()))
