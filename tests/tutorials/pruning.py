# "Pruning Tutorial": LeNet, random_unstructured / l1_unstructured / ln_structured, iterative pruning
# (PruningContainer), named_buffers and _forward_pre_hooks, serialization of pruned models, remove,
# pruning many parameters, global_unstructured with sparsity report, a custom pruning method;
# then a short fine-tuning run of the pruned model on synthetic data.
import torch
import torch.nn.functional as F
import torch.nn.utils.prune as prune
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


model = LeNet().to(device=device)
module = model.conv1
print(list(module.named_parameters()))
print(list(module.named_buffers()))
prune.random_unstructured(module, name="weight", amount=0.3)
print(list(module.named_parameters()))
print(list(module.named_buffers()))
print(module.weight)
print(module._forward_pre_hooks)
prune.l1_unstructured(module, name="bias", amount=3)
print(list(module.named_parameters()))
print(list(module.named_buffers()))
print(module.bias)
print(module._forward_pre_hooks)
prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
print(module.weight)
for hook in module._forward_pre_hooks.values():
    if hook._tensor_name == "weight":
        break
print(list(hook))
print(model.state_dict().keys())
print(list(module.named_parameters()))
print(list(module.named_buffers()))
print(module.weight)
prune.remove(module, 'weight')
print(list(module.named_parameters()))
print(list(module.named_buffers()))

new_model = LeNet()
for name, module in new_model.named_modules():
    if isinstance(module, torch.nn.Conv2d):
        prune.l1_unstructured(module, name='weight', amount=0.2)
    elif isinstance(module, torch.nn.Linear):
        prune.l1_unstructured(module, name='weight', amount=0.4)
print(dict(new_model.named_buffers()).keys())

model = LeNet()
parameters_to_prune = (
    (model.conv1, 'weight'),
    (model.conv2, 'weight'),
    (model.fc1, 'weight'),
    (model.fc2, 'weight'),
    (model.fc3, 'weight'),
)
prune.global_unstructured(
    parameters_to_prune,
    pruning_method=prune.L1Unstructured,
    amount=0.2,
)
for name, m in (("conv1", model.conv1), ("conv2", model.conv2), ("fc1", model.fc1), ("fc2", model.fc2),
                ("fc3", model.fc3)):
    print("Sparsity in {}.weight: {:.2f}%".format(name, 100. * float(torch.sum(m.weight == 0)) / float(m.weight.nelement())))
print(
    "Global sparsity: {:.2f}%".format(
        100. * float(
            torch.sum(model.conv1.weight == 0)
            + torch.sum(model.conv2.weight == 0)
            + torch.sum(model.fc1.weight == 0)
            + torch.sum(model.fc2.weight == 0)
            + torch.sum(model.fc3.weight == 0)
        )
        / float(
            model.conv1.weight.nelement()
            + model.conv2.weight.nelement()
            + model.fc1.weight.nelement()
            + model.fc2.weight.nelement()
            + model.fc3.weight.nelement()
        )
    )
)


class FooBarPruningMethod(prune.BasePruningMethod):
    """Prune every other entry in a tensor
    """
    PRUNING_TYPE = 'unstructured'

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def foobar_unstructured(module, name):
    FooBarPruningMethod.apply(module, name)
    return module


model2 = LeNet()
foobar_unstructured(model2.fc3, name='bias')
print(model2.fc3.bias_mask)
print(prune.is_pruned(model2), prune.is_pruned(LeNet()))

# Fine-tune the globally pruned model: pruned weights stay zero through training.
images = torch.randn(128, 1, 28, 28)
labels = torch.randint(0, 10, (128,))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(10):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    if step % 3 == 0:
        print("fine-tune step", step, "loss", loss.item())
print("still sparse:", bool((model.fc1.weight[model.fc1.weight_mask == 0] == 0).all()))
