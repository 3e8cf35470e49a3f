"""Bracket's benchmarks: search efficiency on synthetic landscapes, and the engine's overhead.

Run ``python -m bench`` (short) or ``python -m bench --full``; see docs/BENCHMARKS.md.
"""
