"""Monte-Carlo balance analyzer for tabletop wargames."""
__version__ = "0.1.0"
