"""In-tree plugins, one module (or package) per plugin, under upstream's names."""
