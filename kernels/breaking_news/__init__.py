"""Numba kernels of Breaking News (docs/models/breaking_news.md)."""
