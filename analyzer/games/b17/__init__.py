"""Game ``b17``: B-17 bomber defence ("Defensa del B-17", Sistema Sombra).

Questions (spec docs/models/b17.md): ``gun_shot``, ``gun_matrix``, ``attack_wave``,
``mission``. Data: ``scenarios/b17/gun_arcs.yaml`` and ``scenarios/b17/data/``.
"""
from analyzer.games import import_modules

import_modules(__name__, __path__)
