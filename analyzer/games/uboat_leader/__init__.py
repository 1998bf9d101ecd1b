"""Game ``uboat_leader`` (DVG U-Boat Leader): escort detection, wolfpacks, tactical engagements.

Rules: docs/rules/uboat_leader.md (digest); model: docs/models/uboat_leader.md. The
source stops in the middle of escort movement: data values it does not give are labelled
placeholders in scenarios/uboat_leader/, and the missing procedures are placeholder rule
modules selected by rule options (see ``rules``).
"""
from analyzer.games import import_modules

import_modules(__name__, __path__)
