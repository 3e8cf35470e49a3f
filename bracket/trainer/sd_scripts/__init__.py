"""The kohya-ss sd-scripts family: the shared base, one module per model, the preset rows."""
