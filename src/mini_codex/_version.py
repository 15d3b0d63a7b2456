"""The package version (a leaf module, importable from every layer)."""

__version__ = "0.1.0"
