"""Contact Phase helpers (digest §6.2): the Contact roll modifiers and the Contact Table.

The Contact Phase belongs to the campaign layer (next issue); these two source rules are
here so the digest's worked example is tested with the tactical questions.
"""
from __future__ import annotations

#: §6.2 source modifiers
INTEL = 2          # "+2 si hay una ficha Intel en el Área"
SEEKER = 1         # "Modifica el dado en la Tabla de Contacto con un +1"
WARNING = -2       # "-2 por cada ficha 'Peligro de U-Boat'"
ATTACKED = -2      # "-2 si el U-Boat tiene una ficha 'Atacado'"


def contact_modifier(intel: bool = False, seeker: bool = False, warnings: int = 0,
                     attacked: bool = False, event: int = 0) -> int:
    """§6.2: +2 Intel, +1 Seeker, -2 per Warning counter, -2 Attacked, +X from Event cards."""
    return INTEL * bool(intel) + SEEKER * bool(seeker) + WARNING * warnings + ATTACKED * bool(attacked) + event


def contact_count(modified_roll: int, table: list[list[int]]) -> int:
    """Convoy cards to draw for a modified roll on an Area's Contact Table, given as
    ``[[min_roll, contacts], ...]`` (the tables themselves are missing, G5); 0 = no contact."""
    n = 0
    for lo, contacts in sorted(table):
        if modified_roll >= lo:
            n = contacts
    return n
