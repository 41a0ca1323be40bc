"""The pure rules engine: no I/O, no clock, no global random state.

``konkan`` and ``conquian`` are the two games; ``cards``, ``melds``,
``options``, ``errors``, ``events``, ``rng`` and ``record`` are shared by both;
``search`` finds melds in a Konkan hand for players and bots.
"""
