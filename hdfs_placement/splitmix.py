"""SplitMix64: a documented random stream both Python and the Java plug-in implement.

Algorithm 2 (``algorithm2``) takes its uniform draws from the caller. To check that the
NameNode plug-in's Java port makes the SAME choices, both languages must be able to replay one
stream: SplitMix64 (Steele, Lea & Flood, OOPSLA 2014) is ten lines in either and exact in
both (64-bit integer arithmetic; a double built from the top 53 bits). The Java twin is
deploy/shim/common/.../SplitMix64.java; the cross-language vectors (deploy/shim/make_vectors.py)
are generated with it. Not for production randomness: the sidecar uses numpy generators.

    state += 0x9E3779B97F4A7C15
    z = state; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB
    next = z ^ (z >> 31)                 (all modulo 2**64)
    uniform = (next >> 11) * 2**-53      (in [0, 1))
"""

from __future__ import annotations

_MASK = (1 << 64) - 1


class SplitMix64:
    """Callable: each call returns the next uniform double in [0, 1)."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK

    def next_u64(self) -> int:
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def __call__(self) -> float:
        return (self.next_u64() >> 11) * 2.0**-53
