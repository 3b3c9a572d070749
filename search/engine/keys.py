"""Stable node keys. A key derives from its parent's key, so a resumed search finds its nodes."""

from __future__ import annotations

REFERENCE_KEY = "ref"


def library_key(index: int) -> str:
    """Key of the index-th kept kernel evaluated as an extra seed in round 0."""
    return f"lib/{index}"


def seed_tag(seed_key: str) -> str:
    """A short, unique stand-in for a seed's key inside its children's keys.

    Keys stay short however many rounds a search runs: `r1/ref/i0/k1` becomes `r1i0k1`, which is
    unique because idea numbers are unique within a round.
    """
    if seed_key == REFERENCE_KEY:
        return seed_key
    parts = seed_key.split("/")
    if parts[0] == "lib":
        return "lib" + parts[-1]
    return parts[0] + "".join(parts[-2:]) if len(parts) >= 3 else "".join(parts)


def idea_key(round_: int, seed_key: str, index: int) -> str:
    """Key of the index-th idea of a round of the branching search, proposed from a seed."""
    return f"r{round_}/{seed_tag(seed_key)}/i{index}"


def step_idea_key(step: int) -> str:
    """Key of the idea of one step of the sequential strategy."""
    return f"s{step}/i0"


def kernel_key(idea_key_: str, index: int) -> str:
    """Key of the index-th implementation of an idea."""
    return f"{idea_key_}/k{index}"
