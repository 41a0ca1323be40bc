"""The pure rules engine: no I/O, no clock, no global random state.

``konkan`` and ``conquian`` are the two games, each an ``Engine`` (``engine``: the
interface everything outside the rules drives a game through); ``cards``, ``melds``,
``options``, ``errors``, ``events``, ``rng`` and ``record`` are shared by both;
``search`` finds melds in a Konkan hand for players and bots.
"""
