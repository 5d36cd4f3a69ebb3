"""Shards: ``--shard i/N`` runs the trials whose key hashes to ``i`` mod ``N``."""

from __future__ import annotations


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/N"`` (0 <= i < N) -> (i, N)."""
    i_text, sep, n_text = text.partition("/")
    try:
        i, n = int(i_text), int(n_text)
    except ValueError:
        raise ValueError(f"{text!r}: expected i/N, e.g. 0/4 (shards are numbered from 0)") from None
    if not sep or n < 1 or not 0 <= i < n:
        raise ValueError(f"{text!r}: expected i/N with 0 <= i < N, e.g. 0/4 ... 3/4")
    return i, n


def in_shard(key: str, shard: tuple[int, int] | None) -> bool:
    return shard is None or int(key[:12], 16) % shard[1] == shard[0]
