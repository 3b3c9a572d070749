"""The built-in offline proposer: a catalogue of ideas and hand-written kernel templates."""

from search.proposers.builtin.proposer import BuiltinProposer

__all__ = ["BuiltinProposer"]
