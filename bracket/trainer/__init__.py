"""Trainer adapters: one small module per model family, all on the protocol in ``base``."""
