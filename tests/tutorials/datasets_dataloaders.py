# "Datasets & DataLoaders": a custom Dataset (inline annotations in place of a CSV and image files),
# transforms, DataLoader iteration and torch.utils.data.random_split.
import torch
from torch.utils.data import DataLoader, Dataset, random_split

torch.manual_seed(0)


class CustomImageDataset(Dataset):
    def __init__(self, annotations, images, transform=None, target_transform=None):
        self.img_labels = annotations
        self.images = images
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.img_labels)

    def __getitem__(self, idx):
        name, label = self.img_labels[idx]
        image = self.images[name]
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


annotations = [(f"img{i}.png", i % 10) for i in range(100)]
images = {name: torch.randint(0, 256, (1, 28, 28), dtype=torch.uint8) for name, _ in annotations}


def to_tensor(img):
    return img.float() / 255


def one_hot(y):
    return torch.zeros(10, dtype=torch.float).scatter_(0, torch.tensor(y), value=1)


ds = CustomImageDataset(annotations, images, transform=to_tensor, target_transform=one_hot)
print(len(ds), ds[3][0].shape, ds[3][1])
train_ds, test_ds = random_split(ds, [0.8, 0.2], generator=torch.Generator().manual_seed(42))
print(len(train_ds), len(test_ds), train_ds.indices[:5])
a, b, c = random_split(range(10), [3, 3, 4])
print(list(a), list(b), list(c))
train_dataloader = DataLoader(train_ds, batch_size=16, shuffle=True)
test_dataloader = DataLoader(test_ds, batch_size=16, shuffle=False, drop_last=True)
train_features, train_labels = next(iter(train_dataloader))
print(f"Feature batch shape: {train_features.size()}")
print(f"Labels batch shape: {train_labels.size()}")
img = train_features[0].squeeze()
label = train_labels[0]
print(img.shape, f"Label: {label}")
print(sum(len(x) for x, _ in test_dataloader), len(test_dataloader))
