"""Quick reactions: preset phrases only, passed on to everyone at the table."""

from __future__ import annotations

import asyncio

from .harness import Api, ServerProcess, WireClient, seated_table

# why this module runs on SQLite only in make test (conftest.py)
ONE_DATABASE = "reactions pass through the table's memory and are never stored"


async def _reactions(server: ServerProcess) -> None:
    api = Api(server)
    try:
        table_id, tokens, _ = await seated_table(api, "conquian", {}, 2)
        first = await WireClient.connect(server, table_id, tokens[0], name="first")
        second = await WireClient.connect(server, table_id, tokens[1], name="second")
        await first.send({"type": "react", "reaction": "good_game"})
        seen = await second.wait_for(lambda m: m["type"] == "reaction")
        assert seen["payload"]["reaction"] == "good_game"
        assert seen["payload"]["seat"] == first.seat
        # Free text is not a reaction.
        index = await first.send({"type": "react", "reaction": "you are slow"})
        refused = await first.wait_for(lambda m: m["type"] == "error", after=index)
        assert refused["payload"]["code"] == "bad_reaction"
        # Flooding is answered, not applied.
        index = await second.send({"type": "react", "reaction": "wow"})
        await first.wait_for(
            lambda m: m["type"] == "reaction" and m["payload"]["reaction"] == "wow"
        )
        index = await second.send({"type": "react", "reaction": "wow"})
        too_many = await second.wait_for(lambda m: m["type"] == "error", after=index)
        assert too_many["payload"]["code"] == "too_many_reactions"
        await first.close()
        await second.close()
    finally:
        await api.aclose()


def test_reactions(server: ServerProcess) -> None:
    asyncio.run(_reactions(server))
