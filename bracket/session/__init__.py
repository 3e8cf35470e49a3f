"""One search: the store, the runner, the loop that ties them together."""
