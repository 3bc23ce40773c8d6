"""Seeded sampling of items by index arithmetic, without materialising a space.

:func:`permute` is a keyed bijection of [0, n) (a 4-round Feistel network with
cycle walking), vectorised over numpy arrays. Taking ``permute(r)`` for
r = 0, 1, 2, ... draws distinct items in a random order that does not depend
on how many are drawn: a larger sample extends a smaller one with the same
seed, so its answers are already in the store.
"""

from __future__ import annotations

import hashlib

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_ROUNDS = 4


def splitmix64(x: np.ndarray) -> np.ndarray:
    """A well-mixing 64-bit hash, elementwise (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = np.asarray(x, dtype=np.uint64) + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def permute(index: np.ndarray, n: int, seed: int, stream: np.ndarray | int = 0) -> np.ndarray:
    """Apply the permutation of [0, n) chosen by (seed, stream) to ``index``.

    stream: one value per element (or a scalar); each stream value selects an
    independent permutation, e.g. one per scenario.
    """
    index = np.asarray(index, dtype=np.uint64)
    if n <= 1:
        return index.astype(np.int64)
    half = max(1, (int(n - 1).bit_length() + 1) // 2)
    mask = np.uint64((1 << half) - 1)
    stream = np.broadcast_to(np.asarray(stream, dtype=np.uint64), index.shape)
    base = splitmix64(splitmix64(np.uint64(seed & 0xFFFFFFFFFFFFFFFF)) ^ splitmix64(stream + np.uint64(1)))
    keys = [splitmix64(base + np.uint64(r)) for r in range(_ROUNDS)]

    def feistel(x: np.ndarray, k: list[np.ndarray]) -> np.ndarray:
        left, right = x >> np.uint64(half), x & mask
        for key in k:
            left, right = right, left ^ (splitmix64(right ^ key) & mask)
        return (left << np.uint64(half)) | right

    out = feistel(index, keys)
    outside = out >= np.uint64(n)
    while outside.any():  # cycle walking: at most a few rounds, domain < 4n
        out[outside] = feistel(out[outside], [k[outside] for k in keys])
        outside = out >= np.uint64(n)
    return out.astype(np.int64)


def text_keys(texts) -> np.ndarray:
    """A stable 64-bit key per text (a name, a scenario id): the same on every machine and run."""
    return np.array([int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little") for t in texts],
                    dtype=np.uint64)


def unordered_coin(stream: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A seeded coin per element, True when x wins, that is the same for (x, y) and (y, x).

    The calibration persona reference:unbiased picks a person this way: by the item
    (``stream``, e.g. its scenario) and the two people's keys, never by their gender or
    by which option each is. Where x == y the coin says which position wins instead.
    """
    x, y = np.asarray(x, dtype=np.uint64), np.asarray(y, dtype=np.uint64)
    low, high = np.minimum(x, y), np.maximum(x, y)
    low_wins = (splitmix64(splitmix64(splitmix64(np.asarray(stream, dtype=np.uint64)) ^ low) ^ high)
                & np.uint64(1)) == 0
    return np.where(x == y, low_wins, (x == low) == low_wins)
