"""The kohya-ss musubi-tuner family: the shared base, its search space and dataset TOML, one
module per architecture, the preset rows."""
