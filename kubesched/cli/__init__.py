"""Command-line interface: `kubesched simulate`, `kubesched config`."""
