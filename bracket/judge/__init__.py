"""Judges turn what a run produced (loss, samples, ratings) into scores in [0, 1], lower is better."""
