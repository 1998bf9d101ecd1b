"""The analyzer's version (``analyzer.__version__``), recorded in every output; its own module so
that the stack records it without importing the package's public API (:mod:`analyzer.session`)."""
__version__ = "0.1.0"
