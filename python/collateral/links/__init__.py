"""Links of today beside the constant-rate ones: packet-delivery traces in Mahimahi's
format and the synthetic traces to start from (:mod:`.synthetic`)."""

from .synthetic import constant, from_series, random_walk, square, write

__all__ = ["constant", "from_series", "random_walk", "square", "write"]
