"""Question ``attack``: one attack of Dystopian Wars (spec ``docs/models/dystopian_wars.md`` §1).

Pool of exploding hit dice (§1) at the to-hit number the rules select (§9, §11), net of the
target's AA/CC dice for rockets/torpedoes, then DR/CR damage (§11). Exact mode answers every
metric from :mod:`analyzer.core.exact` (pool convolution, cancellation, damage mapping).
"""
from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field, model_validator

from analyzer.games.dystopian_wars.common import (MAX_DICE, bernoulli_metric, pmf_metric, table, truncation_note)
from analyzer.games.dystopian_wars.data import (GameData, Size, State, Strict, TargetSpec, Weapon,
                                                 crit_cumulative, resolve_target)
from analyzer.games.dystopian_wars.rules import (AIR, CRITICAL_DAMAGE, SMALL_HP_CODE, RuleError, cancel_faces,
                                                  damage_distribution, degrade, degrade_aux, half_ad, hit_faces,
                                                  hits_distribution, illegal_reason, options, to_hit_number)
from analyzer.games.counters import POOL_COUNTERS
from analyzer.core.questions import Context, ExactAnswer, Metric, Prepared, Question, register
from kernels.dystopian_wars import attack as k

AD = Annotated[int, Field(ge=0, le=MAX_DICE)]
#: most models (or own weapons) linking into one attack: a squadron, not a fleet (typo guard)
MAX_LINKED = 32


class AttackerSpec(Strict):
    capital: bool | None = Field(None, description="Capital Class attacker (default false, or the profile's)")
    state: State = Field("surface", description="surface | flying | diving | submerged | obscured")
    profile: str | None = Field(None, description="fleet profile of the attacker (with weapon)")
    weapon: str | int | None = Field(None, description="weapon of the profile: name or index (AD per band)")
    size: Size | None = Field(None, description="flyer size for the target's Ack Ack: small flyers are hit on "
                                                "5-6, others on 4+ (default medium, or the profile's)")
    dr: int | None = Field(None, ge=1, le=1000, description="flyer DR against Ack Ack (or the profile's)")
    cr: int | None = Field(None, ge=1, le=1000, description="flyer CR against Ack Ack (or the profile's)")
    hp: int | None = Field(None, ge=1, le=1000, description="flyer starting HP against Ack Ack (or the profile's)")

    @model_validator(mode="after")
    def _weapon_needs_profile(self):
        if self.weapon is not None and self.profile is None:
            raise ValueError("weapon needs profile (the AD comes from the profile's weapon)")
        return self


class AttackParams(Strict):
    attack_dice: int | None = Field(None, ge=0, le=MAX_DICE,
                                    description="base AD of the weapon at this band (or attacker.profile + weapon)")
    weapon: Weapon | None = Field(None, description="primary | secondary | rocket | torpedo | bomb | mine "
                                                   "(default primary, or the profile weapon's type)")
    range_band: int = Field(2, ge=1, le=4, description="range band 1..4 (8in each)")
    hp_lost: int = Field(0, ge=0, le=1000, description="HP lost by the ATTACKER (gunnery loses 1 AD each, never below 1)")
    attacker: AttackerSpec = Field(default_factory=AttackerSpec)
    target: TargetSpec = Field(..., description="the target: dr, cr, hp, size, state, fast, elusive, hp_lost "
                                                    "(or a fleet profile whose values these keys override)")
    defense_dice: int = Field(0, ge=0, le=MAX_DICE, description="AA dice vs rockets, CC dice vs torpedoes "
                                                                "(5 cancels 1 hit, 6 cancels 2)")
    aa_dice: int | None = Field(None, ge=0, le=MAX_DICE,
                                description="Ack Ack dice the target's squadron fires at an attacking flyer within 8in "
                                            "(RB1), resolved before the attack (§11); null = the target profile's AA "
                                            "(less its HP lost, never below 1), or 0 without a profile")
    to_hit_modifier: int = Field(0, ge=0, le=2, description="roll modifier per die (not in the source: MARs, cards)")
    linked_ad: list[AD] = Field(default_factory=list, max_length=MAX_LINKED,
                                description="AD of other squadron models linking in (each adds half)")
    own_linked_ad: list[AD] = Field(default_factory=list, max_length=MAX_LINKED, description="AD of the attacker's own other weapons of "
                                                                      "this type linking in (rules.own_weapons_link)")
    critical_hp: int | None = Field(None, ge=0, le=100, description="HP per critical roll (null: data table / default)")

    @model_validator(mode="after")
    def _cross(self):
        from_profile = self.attacker.weapon is not None
        if from_profile and self.attack_dice is not None:
            raise ValueError("give either attack_dice or attacker.profile + attacker.weapon, not both")
        if not from_profile and self.attack_dice is None:
            raise ValueError("attack_dice is required (or attacker.profile + attacker.weapon)")
        if self.weapon is not None and self.defense_dice > 0 and self.weapon not in ("rocket", "torpedo"):
            raise ValueError(f"defense_dice cancel only rocket (AA) or torpedo (CC) hits (§11); weapon is {self.weapon}")
        if self.weapon == "mine" and (self.linked_ad or self.own_linked_ad):
            raise ValueError("mines cannot be linked (§11)")
        return self


def resolve_attack(p: AttackParams, gd: GameData, rules: dict) -> dict:
    """Compile the attack (spec §1 A1-A4): dice, to-hit number, face table, target."""
    data = gd.core
    band = p.range_band
    att = p.attacker
    prof = gd.profile(att.profile, "params.attacker.profile") if att.profile is not None else None
    if att.capital is not None:
        capital = att.capital
    elif prof is not None:
        capital = bool(prof.get("capital", False))
        gd.use_profile(att.profile, "capital")
    else:
        capital = False
    if att.weapon is not None:
        weapons = prof.get("weapons") or []
        if isinstance(att.weapon, int):
            if not 0 <= att.weapon < len(weapons):
                raise RuleError(f"params.attacker.weapon: got {att.weapon}; profile {att.profile} has weapons "
                                f"0..{len(weapons) - 1}")
            idx = att.weapon
        else:
            names = [w.get("name") for w in weapons]
            if att.weapon not in names:
                raise RuleError(f"params.attacker.weapon: got {att.weapon!r}; weapons of {att.profile}: "
                                f"{', '.join(map(str, names))}")
            idx = names.index(att.weapon)
        w = weapons[idx]
        gd.use_profile(att.profile, f"weapons[{idx}]")
        wtype = w["type"]
        if p.weapon is not None and p.weapon != wtype:
            raise RuleError(f"params.weapon: got {p.weapon}; the profile weapon {att.weapon!r} is a {wtype}")
        base = int(w["ad"][band - 1])
    else:
        wtype = p.weapon or "primary"
        base = p.attack_dice
    if p.defense_dice > 0 and wtype not in ("rocket", "torpedo"):
        raise RuleError(f"params.defense_dice: AA/CC dice cancel only rocket or torpedo hits (§11); weapon is {wtype}")
    if wtype == "mine" and (p.linked_ad or p.own_linked_ad):
        raise RuleError("params.linked_ad: mines cannot be linked (§11)")
    # §11 linked fire: this weapon leads with its full AD, every other adds half (1 stays 1); Amb 6
    if rules["own_weapons_link"] == "full":
        extra = sum(p.own_linked_ad)
    else:
        extra = sum(half_ad(a) for a in p.own_linked_ad)
    extra += sum(half_ad(a) for a in p.linked_ad)
    n = degrade(base, p.hp_lost, wtype) + extra
    tgt = resolve_target(p.target, gd, "params.target")
    aa = resolve_ack_ack(p, prof, tgt, gd, rules, band)
    # attack dice after the flyer lost d more HP to Ack Ack (0 once it is destroyed)
    dice_by_flyer_damage = [n]
    if aa is not None:
        dice_by_flyer_damage = [degrade(base, p.hp_lost + d, wtype) + extra for d in range(aa["remaining"])] + [0]
    reason = illegal_reason(wtype, band, att.state, tgt["size"], tgt["state"], rules)
    if reason:
        raise RuleError(f"params: illegal attack ({wtype} from a {att.state} model at a {tgt['size']} "
                        f"{tgt['state']} target in RB{band}): {reason}")
    t = to_hit_number(wtype, band, capital, att.state, tgt["size"], tgt["state"], tgt["fast"], tgt["elusive"],
                      rules, data)
    explode = not (wtype == "mine" and rules["mine_dice"] == "plain")
    small_rule_applies = rules["small_hp_critical"] != "off" and tgt["hp"] <= 2
    crit = (np.array([0]), np.array([1])) if small_rule_applies else gd.critical(p.critical_hp)
    return {"n": n, "t": t, "mod": p.to_hit_modifier, "explode": explode, "weapon": wtype,
            "faces": hit_faces(t, p.to_hit_modifier, explode, rules["modified_six"]),
            "defense": p.defense_dice, "target": tgt, "crit": crit, "aa": aa,
            "dice_by_flyer_damage": np.array(dice_by_flyer_damage, np.int64)}


def resolve_ack_ack(p: AttackParams, prof: dict | None, tgt: dict, gd: GameData, rules: dict,
                    band: int) -> dict | None:
    """§11 Ack Ack: a flyer using its AD against a model within 8in (RB1) first takes the AA of
    the attacked squadron ("l'AA viene risolto prima dell'attacco dei volanti"). None when it
    does not apply (not a flyer, beyond RB1, or no AA dice)."""
    att = p.attacker
    if att.state not in AIR or band != 1:
        if p.aa_dice:
            raise RuleError(f"params.aa_dice: Ack Ack answers only a flyer attacking within 8in (RB1); here the "
                            f"attacker is {att.state} in RB{band}")
        return None
    n_aa = p.aa_dice
    if n_aa is None:
        n_aa = 0
        if p.target.profile is not None:
            tprof = gd.profile(p.target.profile, "params.target.profile")
            if "aa" in tprof:
                gd.use_profile(p.target.profile, "aa")
                n_aa = degrade_aux(int(tprof["aa"]), tgt["hp_lost"])
    if n_aa == 0:
        return None
    flyer = {"size": "medium"}
    for key in ("size", "dr", "cr", "hp"):
        if getattr(att, key) is not None:
            flyer[key] = getattr(att, key)
        elif prof is not None and key in prof:
            flyer[key] = prof[key]
            gd.use_profile(att.profile, key)
    missing = [key for key in ("dr", "cr", "hp") if key not in flyer]
    if missing:
        raise RuleError(f"params.attacker: the flyer takes {n_aa} Ack Ack dice first (§11), so it needs "
                        f"{', '.join(missing)} (give them, or attacker.profile), or set aa_dice: 0")
    if flyer["size"] == "tiny":
        raise RuleError("params.attacker.size: tiny flyers (wings) take AA by their own rule (a 6 destroys a "
                        "base, §13), not modelled by this question")
    if not 0 <= p.hp_lost < int(flyer["hp"]):
        raise RuleError(f"params.hp_lost: got {p.hp_lost}; allowed 0..{int(flyer['hp']) - 1} (flyer hp)")
    th = gd.core["to_hit"]
    number = th["aa_vs_small_flyer"] if flyer["size"] == "small" else th["aa_vs_flyer"]
    small_rule = rules["small_hp_critical"] != "off" and int(flyer["hp"]) <= 2
    crit = (np.array([0]), np.array([1])) if small_rule else gd.critical(p.critical_hp)
    return {"n": n_aa, "t": number, "dr": int(flyer["dr"]), "cr": int(flyer["cr"]), "hp": int(flyer["hp"]),
            "hp_lost": p.hp_lost, "remaining": int(flyer["hp"]) - p.hp_lost, "size": flyer["size"], "crit": crit,
            "faces": hit_faces(number, 0, rules["aa_vs_flyer_dice"] == "exploding", rules["modified_six"])}


ATTACK_METRICS = [
    Metric("hits", "hits (after AA/CC cancellation)", unaffected_by=CRITICAL_DAMAGE),
    Metric("p_damage", "P(hits >= DR)", "probability", unaffected_by=CRITICAL_DAMAGE),
    Metric("p_critical", "P(hits >= CR)", "probability", unaffected_by=CRITICAL_DAMAGE),
    Metric("criticals", "critical results floor(hits / CR)", unaffected_by=CRITICAL_DAMAGE),
    Metric("hp_damage", "HP damage (uncapped)"),
    Metric("p_destroyed", "P(HP damage >= remaining HP)", "probability"),
]
assert tuple(m.name for m in ATTACK_METRICS) == k.ATTACK_METRICS


def attack_exact(a: dict, small_hp_rule: str, notes: list[str]) -> dict:
    """Exact answers of every attack metric (spec §1 'Exact mode')."""
    tgt = a["target"]
    aa = a["aa"]
    if aa is None:
        d = hits_distribution(a["n"], a["faces"], a["defense"])
        h, truncated = d.probs, d.truncated_mass
    else:
        # §11 Ack Ack first: mix the attack's hits over the HP the flyer loses (its AD falls with them)
        aa_hits = hits_distribution(aa["n"], aa["faces"])
        truncated = aa_hits.truncated_mass
        lost = damage_distribution(aa_hits.probs, aa["dr"], aa["cr"], aa["hp"], aa["hp_lost"], True,
                                   small_hp_rule, *aa["crit"])
        table = a["dice_by_flyer_damage"]
        mixed = np.zeros(1)
        for dmg, p_dmg in enumerate(lost):
            if p_dmg == 0:
                continue
            part = hits_distribution(int(table[min(dmg, table.shape[0] - 1)]), a["faces"], a["defense"])
            truncated += p_dmg * part.truncated_mass
            size = max(mixed.shape[0], part.probs.shape[0])
            mixed = np.pad(mixed, (0, size - mixed.shape[0])) + p_dmg * np.pad(part.probs, (0, size - part.probs.shape[0]))
        h = mixed
    values = np.arange(h.shape[0])
    crits = np.bincount(values // tgt["cr"], weights=h)
    dmg = damage_distribution(h, tgt["dr"], tgt["cr"], tgt["hp"], tgt["hp_lost"], True, small_hp_rule, *a["crit"])
    remaining = tgt["hp"] - tgt["hp_lost"]
    if truncated > 0:
        notes.append(truncation_note(truncated))
    return {"hits": pmf_metric(h), "p_damage": bernoulli_metric(h[tgt["dr"]:].sum()),
            "p_critical": bernoulli_metric(h[tgt["cr"]:].sum()), "criticals": pmf_metric(crits),
            "hp_damage": pmf_metric(dmg), "p_destroyed": bernoulli_metric(dmg[remaining:].sum())}


def ack_ack_notes(p: AttackParams, a: dict) -> list[str]:
    """What every run of a flyer's attack says about the target's Ack Ack (§11)."""
    if p.attacker.state not in AIR:
        return []
    aa = a["aa"]
    if aa is None:
        why = ("it attacks from beyond 8in (RB2+)" if p.range_band != 1
               else "aa_dice is 0 (or the target profile has no AA)")
        return [f"no Ack Ack before this flyer's attack: {why}; the flyer rolls its full AD"]
    out = [f"Ack Ack first (§11 'l'AA viene risolto prima dell'attacco dei volanti'): {aa['n']} AA dice at "
           f"{aa['t']}+ vs the flyer's DR {aa['dr']} / CR {aa['cr']} / HP {aa['hp'] - aa['hp_lost']} left; each HP "
           f"lost removes 1 gunnery AD (rockets, torpedoes, bombs keep theirs), a destroyed flyer does not attack"]
    if p.linked_ad:
        out.append("Ack Ack is fired at the leading flyer only: the AD of linked models is not reduced")
    if p.defense_dice:
        out.append("aa_dice fire at the flyer and defense_dice cancel its rocket hits: the source does not say "
                   "whether one AA value may do both, so give each the dice you assign")
    return out


@register
class Attack(Question):
    game = "dystopian_wars"
    name = "attack"
    summary = "One attack: exploding hit pool, AA/CC cancellation, DR/CR damage (exact mode)"
    Params = AttackParams
    rule_options = options("obscured_to_hit", "surface_vs_submerged", "primary_rb1_vs_set_number",
                           "modified_six", "mine_dice", "mine_vs_submerged", "own_weapons_link",
                           "fast_elusive_scope", "small_hp_critical", "aa_vs_flyer_dice")
    primary_metric = "p_damage"
    supports_exact = True

    def prepare(self, p: AttackParams, ctx: Context) -> Prepared:
        gd = GameData(ctx, profiles=p.attacker.profile is not None or p.target.profile is not None)
        a = resolve_attack(p, gd, ctx.rules)
        gd.finish()
        tgt = a["target"]
        hit_tab = table(a["faces"])
        cancel_tab = table(cancel_faces(gd.core))
        crit_values, crit_cum = crit_cumulative(*a["crit"])
        small = SMALL_HP_CODE[ctx.rules["small_hp_critical"]]
        top = 3 * a["n"] + 60   # spec §1 truncation H
        n_bins = max(top + 1, int(crit_values.max()) * (top // tgt["cr"]) + 2, tgt["hp"] + 2)
        notes: list[str] = [f"{a['n']} dice at {a['t']}+" + (f" (+{a['mod']} per die)" if a["mod"] else "")
                            + (f" vs {a['defense']} {'AA' if a['weapon'] == 'rocket' else 'CC'} dice"
                               if a["defense"] else "")]
        notes += ack_ack_notes(p, a)
        aa = a["aa"]
        if aa is None:
            aa_args = (0, *table(hit_faces(4)), 1, 1, 1, 0, crit_values, crit_cum)
        else:
            aa_args = (aa["n"], *table(aa["faces"]), aa["dr"], aa["cr"], aa["hp"], aa["hp_lost"],
                       *crit_cumulative(*aa["crit"]))
            n_bins = max(n_bins, 3 * int(a["dice_by_flyer_damage"].max()) + 61)
        args = (a["dice_by_flyer_damage"], *hit_tab, a["defense"], *cancel_tab, tgt["dr"], tgt["cr"], tgt["hp"],
                tgt["hp_lost"], small, crit_values, crit_cum, *aa_args)

        def exact_answer():
            extra: list[str] = []
            return ExactAnswer(attack_exact(a, ctx.rules["small_hp_critical"], extra), tuple(extra))

        return Prepared(list(ATTACK_METRICS), n_bins, kernel=k.attack_kernel, args=args, counters=POOL_COUNTERS,
                        exact=exact_answer, notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.dystopian_wars import plots as dw_plots  # matplotlib only when plotting
        return dw_plots.attack_figures(meta, points, dists)
