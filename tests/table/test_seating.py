"""Who sits where (``Seating``): who plays a seat, who is waited for, who wants a
rematch, and one account per network at a coin table."""

from __future__ import annotations

import pytest

from sahrat.server.table.errors import TableError
from sahrat.server.table.seating import Seating


def test_who_plays_a_seat() -> None:
    seating = Seating([1, None, 3], [None, "simple", None])
    assert seating.free() == []
    assert [seating.played_by_owner(seat) for seat in range(3)] == [True, False, True]
    seating.control(2, None, left=True)  # a coin table's leaver: the timer plays it
    assert seating.timer_plays(2) and not seating.played_by_owner(2)
    assert seating.bot_level("expert") == "simple"  # the bots already there say
    assert Seating([1, None], [None, None]).bot_level("expert") == "expert"
    assert seating.readers({0, 1, 2}) == {0}  # a bot and a leaver read no summary
    seating.control(2, None, left=False)  # back
    assert seating.played_by_owner(2)


def test_a_free_match_of_bots_alone_is_nobodys() -> None:
    seating = Seating([1, None], [None, "simple"])
    assert seating.person_in_match() and not seating.only_bots_play(True)
    seating.control(0, "simple", left=True)
    assert seating.only_bots_play(True) and not seating.person_in_match()
    assert not seating.only_bots_play(False)  # a coin table is never abandoned so


def test_the_rematch_list_has_the_askers_and_every_seat_a_bot_will_play() -> None:
    seating = Seating([1, 2, None], [None, None, "simple"])
    assert seating.rematch_seats(True) == {2}
    assert seating.ask_rematch(0) and not seating.ask_rematch(0)
    seating.control(1, None, left=True)
    assert seating.rematch_seats(True) == {0, 1, 2}  # a bot takes the leaver's seat
    assert seating.rematch_seats(False) == {0, 2}
    seating.give_to_bot(1, "simple")
    seating.new_match()
    assert seating.seats == [1, None, None] and seating.rematch == set() and not seating.left
    seating.unseat(0)
    assert seating.free() == [0]


def test_one_account_per_network_at_a_coin_table() -> None:
    seating = Seating([None, None], [None, None])
    seating.sit(0, 1, "198.51.100.7")
    with pytest.raises(TableError) as refused:
        seating.check_address("198.51.100.7")
    assert refused.value.code == "same_address"
    seating.check_address("203.0.113.9")  # another network
    seating.unseat(0)
    seating.check_address("198.51.100.7")  # the seat was given up
