"""The campaign kernel's layout (issue 26): one named argument record filled by the compile step,
a named workspace, no positional unpacking, small kernel signatures, one ``ATTACK_BOX_SHIPS``.

Compile-only (no kernel runs): the records are built by ``prepare`` and the workspace by the
python function behind its njit dispatcher.
"""
import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

from analyzer.core.gamedata import DataError
from analyzer.games.uboat_leader import campaign_compile
from kernels.uboat_leader import campaign as K
from kernels.uboat_leader import campaign_state as CS
from kernels.uboat_leader import loadout as L
from kernels.uboat_leader import state as S
from tests.uboat_leader.helpers import ROOT, prepare

FLEET = [{"id": "U-43"}, {"id": "U-47", "mines": 2}, {"id": "U-51", "missions": ["raider"]}]
ABSTRACT = {"contact_model": "abstract"}
#: the most parameters a kernel function of campaign.py may take
MAX_PARAMETERS = 12
KERNEL_FILES = ("kernels/uboat_leader/campaign.py", "kernels/uboat_leader/loadout.py")


def _assignments(path: Path, name: str) -> int:
    """Module-level assignments of ``name`` in the file at ``path``."""
    tree = ast.parse(path.read_text())
    return sum(1 for node in tree.body if isinstance(node, ast.Assign)
               for target in node.targets for t in ast.walk(target) if isinstance(t, ast.Name) and t.id == name)


def test_attack_box_ships_is_defined_once_in_the_kernel_layout_and_imported_by_the_compile_step():
    assert campaign_compile.ATTACK_BOX_SHIPS is CS.ATTACK_BOX_SHIPS
    files = sorted((ROOT / "kernels" / "uboat_leader").glob("*.py")) + \
        sorted((ROOT / "analyzer" / "games" / "uboat_leader").glob("*.py"))
    defined = {f.name: _assignments(f, "ATTACK_BOX_SHIPS") for f in files}
    assert {f: n for f, n in defined.items() if n} == {"campaign_state.py": 1}
    assert CS.SHIP_ROWS >= CS.ATTACK_BOX_SHIPS and CS.SHIP_ROWS >= S.MAX_SHIPS


def test_the_compile_step_caps_an_attack_box_at_the_kernel_constant(monkeypatch):
    """The shipped map's Attack box draws 3 Naval cards: fine at the kernel's cap, refused when
    the cap (the compile step's name for the kernel constant) is below 3."""
    fleet = [{"id": "U-47", "missions": ["attack"]}]
    prepare("campaign", {"fleet": fleet}, ABSTRACT)
    monkeypatch.setattr(campaign_compile, "ATTACK_BOX_SHIPS", 2)
    with pytest.raises(DataError, match="at most 2"):
        prepare("campaign", {"fleet": fleet}, ABSTRACT)


def test_the_workspace_is_a_named_record_sized_from_the_layout():
    _, _, prep = prepare("campaign", {"fleet": FLEET}, ABSTRACT)
    ws = K.campaign_workspace.py_func(prep.args)
    assert isinstance(ws, CS.CampaignWorkspace)
    assert ws.ships.shape == (CS.SHIP_ROWS, CS.N_SH_FIELDS)
    assert ws.boats.shape == (len(FLEET), CS.N_CB_FIELDS) and ws.pack.shape == (len(FLEET) + 1, CS.N_PK_FIELDS)
    assert ws.campaign.shape == (CS.N_G_FIELDS,)
    assert ws.decks.shape[:2] == (CS.N_CAMPAIGN_DECKS, 3) and ws.deck_counts.shape == (CS.N_CAMPAIGN_DECKS, 2)
    assert ws.battle_config.shape == prep.args.engagement_config.shape


def _kernel_functions(module):
    return {name: obj for name, obj in vars(module).items()
            if hasattr(obj, "py_func") and obj.py_func.__module__ == module.__name__}


def test_no_kernel_function_takes_more_than_a_dozen_parameters():
    functions = _kernel_functions(K)
    assert {"campaign_trial", "tactical", "contact_phase", "fight", "operations"} <= set(functions)
    too_many = {name: len(inspect.signature(f.py_func).parameters) for name, f in functions.items()
                if len(inspect.signature(f.py_func).parameters) > MAX_PARAMETERS}
    assert too_many == {}


@pytest.mark.parametrize("path", KERNEL_FILES)
def test_kernels_read_the_records_by_field_name_never_by_position(path):
    """No ``args[...]`` / ``ws[...]`` (nor a slice of them) in the campaign and loadout kernels."""
    tree = ast.parse((ROOT / path).read_text())
    positional = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Subscript)
                  and isinstance(node.value, ast.Name) and node.value.id in ("args", "ws")]
    assert positional == []


def _check_layout(args: CS.CampaignArgs, n_boats: int):
    assert isinstance(args, CS.CampaignArgs)
    for name, a in args._asdict().items():
        assert isinstance(a, np.ndarray) and a.dtype == np.int64 and a.flags.c_contiguous, name
    n_areas = args.config[CS.K_N_AREAS]
    assert args.config.shape == (CS.N_CFG,) and args.config[CS.K_N_BOATS] == n_boats
    assert args.areas.shape == (n_areas, CS.N_AT_FIELDS)
    assert args.contact_tables.shape[::2] == (n_areas, CS.N_CR_FIELDS)
    assert args.loadouts.shape == (n_boats, CS.N_BS_FIELDS)
    assert args.missions.shape[0] == n_boats
    assert args.crew_levels.shape == (n_boats, CS.N_LEVELS, CS.N_BL_FIELDS)
    assert args.mine_vp.shape == (n_boats, n_areas)
    assert args.next_area.shape == args.patrol_area.shape == (n_boats, n_areas, n_areas)
    assert args.nearest_port.shape == (n_boats, n_areas)
    assert args.nearest_box.shape == (n_boats, n_areas, CS.N_MISSION_TYPES)
    assert args.events.shape[1:] == (2, 2) and args.events.shape[0] == args.config[CS.K_DECK_SIZE + CS.D_EVENTS]
    assert args.convoys.shape == (args.config[CS.K_DECK_SIZE + CS.D_CONVOYS], CS.N_CV_FIELDS)
    assert args.convoy_slots.shape == (args.convoys.shape[0], S.MAX_SHIPS)
    assert args.cards.shape[::2] == (S.N_DECKS, S.N_CARD_FIELDS)
    assert args.damage_table.shape == args.wolfpack_stress.shape == (11,)
    assert args.special_options.shape[0] == 3 and args.special_options.shape[1] >= CS.N_SO_OPTIONS
    assert args.success_levels.shape == (CS.N_LV_ROWS, args.config[CS.K_N_LEVELS])
    assert np.all(np.diff(args.success_levels[CS.LV_VP]) >= 0)  # ranks by ascending threshold
    assert args.engagement_config.shape == (S.N_CFG,)
    assert args.engagement_slots.shape[1:] == (S.MAX_SHIPS, S.N_SLOT_FIELDS)
    assert args.engagement_boats.shape[1:] == (CS.N_LEVELS, S.N_BOAT_STATIC)
    assert args.engagement_crew_rows.shape[1:] == (CS.N_LEVELS, 2, S.N_ROW_FIELDS)


@pytest.mark.parametrize("rules", [ABSTRACT, {}], ids=["abstract", "engagement"])
def test_the_compile_step_fills_every_field_of_the_record_in_its_layout(rules):
    _, _, prep = prepare("campaign", {"fleet": FLEET}, rules)
    args = prep.args
    _check_layout(args, len(FLEET))
    assert args.config[CS.K_CONTACT_ENGAGEMENT] == (rules != ABSTRACT)
    if rules != ABSTRACT:  # the engagement model's per-boat tables: one row per fleet boat
        assert args.engagement_boats.shape[0] == args.engagement_crew_rows.shape[0] == len(FLEET)
        assert args.engagement_slots.shape[0] == args.convoys.shape[0]
    mine_boat = 1
    assert args.loadouts[mine_boat, CS.BS_MINES] == 2 and args.missions[mine_boat, 0] == CS.MS_MINE
    assert args.missions[2, 0] == CS.MS_RAIDER and args.loadouts[2, CS.BS_N_MISSIONS] == 1


def test_the_loadout_record_stacks_every_campaign_field_and_hands_each_fleet_its_own():
    fleets = [{"name": "a", "fleet": FLEET}, {"name": "b", "fleet": FLEET[:1]}]
    _, _, prep = prepare("loadout", {"fleets": fleets}, ABSTRACT)
    args = prep.args
    assert isinstance(args, L.LoadoutArgs)
    assert L.LoadoutArgs._fields == ("loadout_config", "largest_config") + CS.CampaignArgs._fields
    assert np.array_equal(args.largest_config, args.config.max(axis=0))
    for f, plan in enumerate(fleets):
        alone = prepare("campaign", {"fleet": plan["fleet"]}, ABSTRACT)[2].args
        fleet = L.fleet_args.py_func(args.config[f], args, f)
        assert isinstance(fleet, CS.CampaignArgs)
        for name in CS.CampaignArgs._fields:
            mine, own = getattr(fleet, name), getattr(alone, name)
            assert np.array_equal(mine[tuple(slice(0, n) for n in own.shape)], own), (f, name)
            assert mine.sum() == own.sum(), (f, name)  # the rest is zero padding
