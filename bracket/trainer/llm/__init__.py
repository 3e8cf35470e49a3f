"""The LLM family (Axolotl, torchtune, Unsloth): the shared base and dataset split, one module
per trainer, the preset rows."""
