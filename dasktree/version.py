"""dasktree's version, in a module of its own: a room on any floor reads it without loading the package's
public names (``dasktree/__init__.py`` imports the fit and the model, the top of the house)."""

__version__ = "0.1.0"
