"""Data sets: seeded synthetic sets, MNIST (a bundled subset or the full files), the 8x8
digits, and mini-batches: ``batches``, and PyTorch's ``Dataset``, ``DataLoader``,
samplers and ``random_split`` (``torch.utils.data``'s names and arguments).

Only ``fetch_mnist`` touches the network; everything else reads local files: the MNIST
subset and the 8x8 digits ship with chainrule (``data/files``, 1.2 MB), so no other
package is needed.

>>> from chainrule.data import batches, make_moons
>>> X, y = make_moons(100, seed=0)
>>> [len(X_batch) for X_batch, y_batch in batches(X, y, batch_size=32, seed=0)]
[32, 32, 32, 4]
"""

from .batches import batches
from .datasets import (ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset,
                       TensorDataset, random_split)
from .loader import DataLoader, collate, default_collate, default_convert
from .samplers import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                       WeightedRandomSampler)
from .digits import load_digits_split
from .fetch import MNIST_FILES, MNIST_URL, FetchError, fetch_mnist
from .idx import MNIST_NAMES, load_mnist, read_idx, write_idx
from .mnist import load_mnist_subset, mnist_subset_path
from .synthetic import (
    make_blobs,
    make_circles,
    make_moons,
    make_spirals,
    make_toy_regression,
    toy_target,
)

__all__ = [
    "Dataset",
    "IterableDataset",
    "ChainDataset",
    "TensorDataset",
    "ConcatDataset",
    "Subset",
    "random_split",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
    "DataLoader",
    "default_collate",
    "default_convert",
    "collate",
    "make_moons",
    "make_circles",
    "make_blobs",
    "make_spirals",
    "make_toy_regression",
    "toy_target",
    "load_mnist_subset",
    "mnist_subset_path",
    "load_digits_split",
    "read_idx",
    "write_idx",
    "load_mnist",
    "MNIST_NAMES",
    "fetch_mnist",
    "FetchError",
    "MNIST_FILES",
    "MNIST_URL",
    "batches",
]
