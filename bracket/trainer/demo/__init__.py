"""The embedded CPU demo: its adapter (which drives ``scripts/demo_train.py``) and its preset row."""
