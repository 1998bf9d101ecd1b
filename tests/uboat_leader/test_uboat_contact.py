"""§6.2 Contact roll modifiers (digest worked values) and the Contact Table lookup (G5 placeholder)."""
from analyzer.games.uboat_leader.contact import contact_count, contact_modifier


def test_contact_modifiers_each_source_value():
    assert contact_modifier(intel=True) == 2          # "+2 si hay una ficha Intel en el Área"
    assert contact_modifier(seeker=True) == 1         # Seeker: "+1"
    assert contact_modifier(warnings=1) == -2         # "-2 por cada ficha 'Peligro de U-Boat'"
    assert contact_modifier(warnings=2) == -4
    assert contact_modifier(attacked=True) == -2      # "-2 si el U-Boat tiene una ficha 'Atacado'"
    assert contact_modifier(event=3) == 3             # +X from Event cards
    assert contact_modifier(intel=True, seeker=True, warnings=1, attacked=True, event=1) == 0


def test_contact_table_lookup_placeholder_g5():
    table = [[1, 0], [6, 1], [9, 2]]                  # digest G5 placeholder: <=5 none, 6-8 one, >=9 two
    assert [contact_count(r, table) for r in (-3, 5, 6, 8, 9, 12)] == [0, 0, 1, 1, 2, 2]
