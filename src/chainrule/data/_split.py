"""Helpers shared by the loaders: a generator from a seed, and a stratified split."""

import numpy as np


def generator(seed):
    """An int, None or a ``numpy.random.Generator`` -> a Generator (passed through as is)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def stratified_split(y, n_test_per_class, rng):
    """Indices ``(train, test)`` into ``y``, each shuffled.

    ``n_test_per_class`` maps each label to how many of its items go to the test part;
    the items are drawn at random within the label, so the split does not depend on the
    order of the source (MNIST's file is sorted by label).
    """
    train, test = [], []
    for label in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == label))
        k = n_test_per_class[label]
        test.append(members[:k])
        train.append(members[k:])
    train = np.concatenate(train)
    test = np.concatenate(test)
    return rng.permutation(train), rng.permutation(test)
