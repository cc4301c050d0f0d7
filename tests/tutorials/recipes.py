# PyTorch recipes: "What is a state_dict", "Saving and loading models for inference", "Saving and loading
# multiple models in one file", "Warmstarting model using parameters from a different model", "Zeroing out
# gradients", "Changing default device", "Reasoning about Shapes" (meta device), "Tips for loading an
# nn.Module from a checkpoint" (meta-device init, mmap, assign=True).
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
print(net)
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
print("Model's state_dict:")
for param_tensor in net.state_dict():
    print(param_tensor, "\t", net.state_dict()[param_tensor].size())
print("Optimizer's state_dict:")
for var_name in optimizer.state_dict():
    print(var_name, "\t", optimizer.state_dict()[var_name])

# --- zeroing out gradients, with a short training loop on synthetic CIFAR-shaped data
inputs_all = torch.randn(64, 3, 32, 32)
labels_all = torch.randint(0, 10, (64,))
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    running_loss = 0.0
    for i in range(0, 64, 16):
        inputs, labels = inputs_all[i:i + 16], labels_all[i:i + 16]
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    print('[%d] loss: %.5f' % (epoch + 1, running_loss / 4))

with tempfile.TemporaryDirectory() as tmp:
    PATH = os.path.join(tmp, "state_dict_model.pt")
    torch.save(net.state_dict(), PATH)
    model = Net()
    model.load_state_dict(torch.load(PATH, weights_only=True))
    model.eval()
    PATH = os.path.join(tmp, "entire_model.pt")
    torch.save(net, PATH)
    model = torch.load(PATH, weights_only=False)
    model.eval()
    # several models in one file
    netA, netB = Net(), Net()
    optimizerA = optim.SGD(netA.parameters(), lr=0.001, momentum=0.9)
    optimizerB = optim.SGD(netB.parameters(), lr=0.001, momentum=0.9)
    PATH = os.path.join(tmp, "model.pt")
    torch.save({
        'modelA_state_dict': netA.state_dict(),
        'modelB_state_dict': netB.state_dict(),
        'optimizerA_state_dict': optimizerA.state_dict(),
        'optimizerB_state_dict': optimizerB.state_dict(),
    }, PATH)
    modelA, modelB = Net(), Net()
    checkpoint = torch.load(PATH, weights_only=True)
    modelA.load_state_dict(checkpoint['modelA_state_dict'])
    modelB.load_state_dict(checkpoint['modelB_state_dict'])
    optimizerA.load_state_dict(checkpoint['optimizerA_state_dict'])
    optimizerB.load_state_dict(checkpoint['optimizerB_state_dict'])
    modelA.eval()
    modelB.train()
    print(torch.equal(modelA.fc3.weight, netA.fc3.weight))

    # warmstarting: a different model, strict=False
    class NetB(nn.Module):
        def __init__(self):
            super(NetB, self).__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc4 = nn.Linear(84, 2)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            return self.fc4(F.relu(self.fc2(F.relu(self.fc1(x.flatten(1))))))

    PATH = os.path.join(tmp, "model_a.pt")
    torch.save(netA.state_dict(), PATH)
    netB = NetB()
    result = netB.load_state_dict(torch.load(PATH, weights_only=True), strict=False)
    print(result.missing_keys, result.unexpected_keys)
    print(torch.equal(netB.conv1.weight, netA.conv1.weight))

    # tips for loading from a checkpoint: meta-device init, mmap, assign
    PATH = os.path.join(tmp, "checkpoint.pth")
    torch.save(net.state_dict(), PATH)
    state_dict = torch.load(PATH, mmap=True, weights_only=True)
    with torch.device('meta'):
        meta_m = Net()
    print(meta_m.fc1.weight.device, meta_m.fc1.weight.shape)
    meta_m.load_state_dict(state_dict, assign=True)
    print(meta_m.fc1.weight.device, torch.equal(meta_m(inputs_all[:2]), net(inputs_all[:2])))
    del state_dict

# --- changing default device
torch.set_default_device('cpu')
print(torch.tensor([1.2, 3]).device)
with torch.device('cpu'):
    mod = torch.nn.Linear(20, 30)
    print(mod.weight.device)
    print(mod(torch.randn(128, 20)).device)

# --- reasoning about shapes with the meta device
a = torch.ones(2, 5, 10, device='meta')
b = torch.randn(2, 5, device='meta')
c = torch.randn(2, 5, device='meta')
print(a.shape, (a * 2).shape, torch.cat([b, c]).shape)
conv = nn.Conv2d(3, 6, 5, device='meta')
print(conv(torch.empty(4, 3, 32, 32, device='meta')).shape)


def fw_hook(module, input, output):
    print(f"Shape of output to {module} is {output.shape}.")


with torch.device("meta"):
    net = Net()
    inp = torch.randn((1024, 3, 32, 32))
for name, layer in net.named_modules():
    layer.register_forward_hook(fw_hook)
out = net(inp)
