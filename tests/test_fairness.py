"""Per-round commit and reveal (docs/fairness.md): the values are the documented ones, the
commitment is published with the deal and matches the reveal, the revealed round seed
reproduces the deal, and a tampered seed, salt or deck fails verification."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

import pytest

from sahrat.rules import conquian, fairness, konkan
from sahrat.rules.cards import parse_cards
from sahrat.rules.errors import RuleError
from sahrat.rules.events import Event
from sahrat.rules.options import ConquianOptions, KonkanOptions
from sahrat.rules.record import GameRecord, engine_for, options_for, record_of
from sahrat.rules.rng import round_secret, seed_commitment
from sahrat.simulate import bot_for
from test_rng import reference_shuffle

RANKS, SUITS = "A23456789TJQK", "SHDC"
KONKAN_DECK = [r + s + "'" * c for c in (0, 1) for s in SUITS for r in RANKS] + ["JK", "JK'"]
CONQUIAN_DECK = [r + s for s in SUITS for r in "A234567JQK"]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def spec_round(match_seed: str, n: int) -> tuple[str, str, str]:
    """Round ``n``'s seed, salt and commitment, written from docs/fairness.md."""
    seed, salt = sha(f"{match_seed}/round/{n}"), sha(f"{match_seed}/salt/{n}")
    return seed, salt, sha(f"{salt}:{seed}")


def play(
    game: str, seed: str, values: dict[str, Any]
) -> tuple[GameRecord, list[tuple[Any, list[Event]]], Any]:
    """A whole match of simple players: its record, every step's events, the first state."""
    engine = engine_for(game)
    state = state0 = engine.new_game(options_for(game, values), seed)
    bot = bot_for(game)
    actions: list[Any] = []
    steps: list[tuple[Any, list[Event]]] = []
    while not state.over:
        action = bot(engine.view(state, engine.to_act(state)))
        try:
            state, events = engine.apply(state, action)
        except RuleError:
            action = engine.timeout_action(state)
            state, events = engine.apply(state, action)
        actions.append(action)
        steps.append((state, events))
    return record_of(game, state0, actions), steps, state0


# --- the derivation ------------------------------------------------------------------------


def test_round_values_are_the_documented_derivation() -> None:
    for match_seed in ("4b1d9e0c2f", "0", "a" * 64):
        for n in (1, 2, 7):
            secret = round_secret(match_seed, n)
            assert (secret.seed, secret.salt, secret.commitment) == spec_round(match_seed, n)
            assert len(secret.seed) == len(secret.salt) == len(secret.commitment) == 64
    assert fairness.commitment_of("s", "t") == sha("t:s")


def test_rounds_have_unrelated_seeds() -> None:
    values = {round_secret("m", n).seed for n in range(1, 6)}
    values |= {round_secret("m", n).salt for n in range(1, 6)}
    assert len(values) == 10
    assert seed_commitment("m") not in values
    with pytest.raises(ValueError):
        round_secret("m", 0)


# --- published with the deal, revealed at the round's end ---------------------------------


@pytest.mark.parametrize(
    ("game", "values", "end", "number"),
    [
        ("konkan", {"players": 3, "rounds": 3}, "round_end", "round"),
        ("conquian", {"wins_needed": 2}, "deal_end", "deal"),
    ],
)
def test_commitment_is_public_at_the_deal_and_matches_the_reveal(
    game: str, values: dict[str, Any], end: str, number: str
) -> None:
    seed = f"commit-{game}"
    engine = engine_for(game)
    _record, steps, state0 = play(game, seed, values)
    # Round 1: the view of every seat and of a spectator shows the commitment.
    first = spec_round(seed, 1)
    for viewer in [None, *range(state0.players)]:
        assert engine.view(state0, viewer)["round_commitment"] == first[2]
    seen = {1: first[2]}
    revealed: dict[int, tuple[str, str]] = {}
    current = 1
    for state, events in steps:
        for event in events:
            public = event.for_seat(None)  # what a spectator is sent
            if event.type == "deal":
                current = public[number]
                seen[current] = public["round_commitment"]
            if event.type == end:
                assert public["round_commitment"] == seen[public[number]]
                revealed[public[number]] = (public["round_seed"], public["round_salt"])
        # Until its end, nothing anyone is shown holds the round's seed or salt.
        secret, salt, _ = spec_round(seed, current)
        if current not in revealed:
            for viewer in [None, *range(state.players)]:
                text = json.dumps(engine.view(state, viewer))
                assert secret not in text and salt not in text
            text = json.dumps([e.for_seat(s) for e in events for s in range(state.players)])
            assert secret not in text and salt not in text
    assert len(revealed) >= 2
    for n, (round_seed, salt) in revealed.items():
        assert (round_seed, salt, seen[n]) == spec_round(seed, n)
        assert sha(f"{salt}:{round_seed}") == seen[n]


def test_revealed_konkan_seed_reproduces_the_deal() -> None:
    """docs/fairness.md: deal 0 of the round is a shuffle of the canonical deck by the stream
    ``round seed/deal/0``; 15 cards to the dealer's next seat, then 14 each; the rest is the
    stock, its first card on top."""
    seed = "reproduce-konkan"
    _record, steps, _state0 = play("konkan", seed, {"players": 4, "rounds": 2})
    for state, events in steps:
        deal = next((e for e in events if e.type == "deal"), None)
        if deal is None:
            continue
        round_seed, _, commitment = spec_round(seed, deal.public["round"])
        assert deal.public["round_commitment"] == commitment
        order = reference_shuffle(round_seed, ["deal", "0"], KONKAN_DECK)
        dealer = deal.public["dealer"]
        dealt = {e.seat: e.private["cards"] for e in events if e.type == "dealt" and e.private}
        position = 0
        for offset in range(4):
            seat = (dealer + 1 + offset) % 4
            size = 15 if offset == 0 else 14
            assert dealt[seat] == order[position : position + size]
            position += size
        assert [str(card) for card in reversed(state.stock)] == order[position:]
        break
    else:
        pytest.fail("no second round was dealt")


def test_revealed_conquian_seed_reproduces_the_deal() -> None:
    """10 to the non-dealer, 10 to the dealer, then the stock; its top card is turned up."""
    seed = "reproduce-conquian"
    state = conquian.new_game(ConquianOptions(), seed)
    round_seed, _, commitment = spec_round(seed, 1)
    assert conquian.view(state, None)["round_commitment"] == commitment
    order = reference_shuffle(round_seed, ["deal", "0"], CONQUIAN_DECK)
    first = 1 - state.dealer
    assert Counter(map(str, state.hands[first])) == Counter(order[:10])
    assert Counter(map(str, state.hands[state.dealer])) == Counter(order[10:20])
    assert str(state.face_up) == order[20]
    assert [str(card) for card in reversed(state.stock)] == order[21:]


def test_a_stacked_deal_has_no_commitment() -> None:
    deck = konkan.stacked_deck({}, players=2, dealer=1)
    state = konkan.new_game(KonkanOptions(players=2), "stacked", [deck], first_dealer=1)
    assert konkan.view(state, None)["round_commitment"] is None
    record = GameRecord(game="konkan", options={"players": 2}, first_dealer=1, decks=[deck])
    report = fairness.verify_record(record)
    assert not report.ok
    assert "explicit decks" in report.all_problems()[0]


# --- verify ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "values"),
    [
        ("konkan", {"players": 4}),
        ("konkan71", {"players": 2, "rounds": 2}),
        ("conquian", {}),
    ],
)
def test_verify_accepts_an_honest_match(game: str, values: dict[str, Any]) -> None:
    record, _steps, _state0 = play(game, f"honest-{game}", values)
    report = fairness.verify_record(GameRecord.from_json(record.to_json()))
    assert report.ok, report.all_problems()
    assert report.actions == len(record.actions)
    players = 2 if game == "conquian" else values["players"]
    assert len(report.rounds) >= 2
    for checked in report.rounds:
        assert checked.revealed
        assert checked.hands_checked == checked.deals * players
    assert sum(r.cards_drawn for r in report.rounds) > 0
    assert report.notes == []
    assert report.to_json()["match_commitment"] == sha(record.seed)


def _partial_konkan_record(seed: str, players: int, *, redeal: bool = False) -> GameRecord:
    """Round 1 played by the turn timer alone (draw, discard what was drawn) until the
    stock runs out three times and the round is void, then the first move of round 2."""
    options = KonkanOptions(players=players, rounds=2, redeal=redeal)
    state = state0 = konkan.new_game(options, seed)
    actions: list[Any] = []
    if redeal:
        claim = konkan.ClaimRedeal(state.turn)
        state, _ = konkan.apply(state, claim)
        actions.append(claim)
    while state.round == 1:
        action = konkan.timeout_action(state)
        state, _ = konkan.apply(state, action)
        actions.append(action)
    return record_of("konkan", state0, actions)


def test_verify_follows_reshuffles() -> None:
    record = _partial_konkan_record("reshuffles", 2)
    report = fairness.verify_record(record)
    assert report.ok, report.all_problems()
    assert report.rounds[0].reshuffles == 3  # the default max_reshuffles, then void
    # 77 stock cards, then the 3 reshuffled piles, all drawn
    assert report.rounds[0].cards_drawn > 77 * 3
    assert report.notes and "not over" in report.notes[0]


def test_verify_follows_a_redeal() -> None:
    # "r12": a 4-player deal where the opener may claim a redeal (3 pairs and a joker,
    # or 4 pairs); found by trying seeds r0, r1, …
    state = konkan.new_game(KonkanOptions(players=4, redeal=True), "r12")
    assert konkan.ClaimRedeal(state.turn) in konkan.simple_actions(state)
    record = _partial_konkan_record("r12", 4, redeal=True)
    report = fairness.verify_record(record)
    assert report.ok, report.all_problems()
    assert report.rounds[0].deals == 2  # the deal, then the redeal from round seed/deal/1


def test_verify_refuses_a_record_with_another_seed() -> None:
    record, _steps, _state0 = play("konkan", "tamper-seed", {"players": 2, "rounds": 1})
    record.seed = "tamper-seed!"
    report = fairness.verify_record(record)
    assert not report.ok
    assert any("refused" in problem for problem in report.all_problems())


def test_verify_checks_the_first_dealer() -> None:
    record, _steps, _state0 = play("conquian", "first-dealer", {})
    assert record.first_dealer is not None
    record.first_dealer = 1 - record.first_dealer
    problems = fairness.verify_record(record).all_problems()
    assert problems[0].startswith("first dealer mismatch")


def test_verify_checks_commitments_seen_in_play() -> None:
    record, _steps, _state0 = play("conquian", "seen", {})
    good = {1: spec_round("seen", 1)[2], 2: spec_round("seen", 2)[2].upper()}
    assert fairness.verify_record(record, commitments=good).ok
    bad = {2: spec_round("seen", 3)[2]}
    problems = fairness.verify_record(record, commitments=bad).all_problems()
    assert problems == [
        f"round 2: commitment mismatch: the record's seed gives {good[2].lower()}, "
        f"not the {bad[2]} seen during play"
    ]
    assert not fairness.verify_record(record, commitments={99: "00"}).ok
    assert fairness.verify_record(record, match_commitment=sha("seen")).ok
    assert not fairness.verify_record(record, match_commitment=sha("seen2")).ok


def test_verify_round_from_revealed_values() -> None:
    round_seed, salt, commitment = spec_round("one-round", 3)
    order = reference_shuffle(round_seed, ["deal", "0"], KONKAN_DECK)
    # Dealer seat 1 of 3: seat 2 opens with the first 15 cards, seat 0 gets the next 14.
    hands = {2: parse_cards(order[:15]), 0: parse_cards(order[15:29])}
    report = fairness.verify_round(
        "konkan", round_seed, salt, commitment, players=3, dealer=1, hands=hands
    )
    assert report.ok, report.problems
    assert report.deck == order
    assert report.hands_checked == 2
    assert report.hands[1] == order[29:43]


def test_verify_round_refuses_a_tampered_seed_salt_or_deck() -> None:
    round_seed, salt, commitment = spec_round("tamper", 1)
    flip = {"0": "1", "1": "0"}
    other_seed = round_seed[:-1] + flip.get(round_seed[-1], "0")
    other_salt = salt[:-1] + flip.get(salt[-1], "0")
    for seed_, salt_ in ((other_seed, salt), (round_seed, other_salt)):
        report = fairness.verify_round("conquian", seed_, salt_, commitment)
        assert not report.ok
        assert report.problems[0].startswith("commitment mismatch")
    order = reference_shuffle(round_seed, ["deal", "0"], CONQUIAN_DECK)
    seen = parse_cards([*order[:9], order[20]])  # one card the deck puts in the stock
    report = fairness.verify_round(
        "conquian", round_seed, salt, commitment, dealer=1, hands={0: seen}
    )
    assert [p.split(":")[0] for p in report.problems] == ["deck mismatch"]
    ok = fairness.verify_round(
        "conquian", round_seed, salt, commitment, dealer=1, hands={0: parse_cards(order[:10])}
    )
    assert ok.ok


def test_verify_reads_a_match_as_the_api_returns_it() -> None:
    record, _steps, _state0 = play("conquian", "api", {})
    api = {"id": 4, "game": "conquian", "record": record.to_json(), "score_sheet": {}}
    assert fairness.record_from_json(api).seed == "api"
    assert fairness.parse_commitments(["2=AB", "3= cd"]) == {2: "ab", 3: "cd"}
    with pytest.raises(RuleError):
        fairness.parse_commitments(["ab"])
