"""Game ``hacse_naval`` (HACSE "Regeln See"): depth charges, torpedoes, mines, fire, U-boat sighting.

Model: docs/models/hacse_naval.md. The source gives the rules but not the Basiszahl roll, the
ship damage sheets or the hit location: those are labelled placeholders in
scenarios/hacse_naval/ (data/hacse.yaml, ships/*.yaml) and the rule option ``roll_model``.
"""
from analyzer.games import import_modules

import_modules(__name__, __path__)
