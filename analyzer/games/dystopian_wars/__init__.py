"""Game ``dystopian_wars`` (Spartan Games, 1st ed.): attacks, fire allocation, rams and
collisions, boarding, rout tests and squadron duels.

Spec: ``docs/models/dystopian_wars.md``; rules: ``docs/rules/dystopian_wars.md``. Importing
this package registers the questions (one module per question or mechanic) and the
benchmarks ``dw-duel`` and ``dw-attack-exact``.
"""
from analyzer.games import import_modules

import_modules(__name__, __path__)
