"""Game ``breaking_news`` (Dadi&Piombo, Spanish v2.1, Feb 2011): shooting, morale, melee,
firefights between army lists and points efficiency.

Model: docs/models/breaking_news.md. Data (the reconstructed tables with a confidence per
cell, army lists, scenario lists) in scenarios/breaking_news/data/.
"""
from analyzer.games import import_modules

import_modules(__name__, __path__)
