"""The message bus between the processes of a cluster: Redis pub/sub, batched, signed.

Each process reads its own channel (``{prefix}:to:{node}``) and the one every
process reads (``{prefix}:all``). A message is a small JSON object whose ``k`` names
its kind; what is queued goes out at the next flush, one batch per channel in one
round trip, each batch signed (``auth.py``: a batch nobody with the cluster's secret
wrote is refused before it is read). On top of that, a call with a reply: ``call``
sends a ``call`` message and waits for its ``result``; the owner of the table answers
it through the ``answer`` it was given.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from sahrat.rules.errors import BadOption
from sahrat.server import metrics
from sahrat.server.cluster.auth import Refused, Signer
from sahrat.server.cluster.placement import Moved
from sahrat.server.table.errors import TableError

log = logging.getLogger("sahrat.cluster")

RPC_SECONDS = 5.0
REFUSAL_LOG_SECONDS = 10.0  # one warning per reason this often: a flood fills no disk

Handler = Callable[[dict[str, Any]], None]
# Runs a forwarded table operation on this process (raises ``Moved`` if it does not
# serve the table any more).
Answer = Callable[[int, str, dict[str, Any]], Awaitable[Any]]


class Bus:
    """This process's end of the bus: what it queues, reads, and waits for."""

    def __init__(
        self,
        redis: aioredis.Redis,
        prefix: str,
        node: str,
        secret: bytes,
        answer: Answer,
        background: Callable[[asyncio.Task[None]], None],
        on_lost: Callable[[], None],
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.node = node
        self.signer = Signer(secret, node)
        self._handlers: dict[str, Handler] = {"call": self._on_call, "result": self._on_result}
        self._answer = answer
        self._background = background
        self._on_lost = on_lost  # the subscription was lost: messages may be missing
        self._refusals: dict[str, tuple[float, int]] = {}  # reason -> last warning, since
        self._outgoing: dict[str, list[dict[str, Any]]] = {}
        self._wake = asyncio.Event()
        self._calls: dict[str, asyncio.Future[Any]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._subscribed = asyncio.Event()
        self._publishing = asyncio.Lock()  # batches leave in the order they are signed

    def handle(self, handlers: Mapping[str, Handler]) -> None:
        """Pass the messages of these kinds to their handlers."""
        self._handlers.update(handlers)

    def channel(self, node: str) -> str:
        return f"{self.prefix}:to:{node}"

    @property
    def everyone(self) -> str:
        return f"{self.prefix}:all"

    async def start(self) -> None:
        """Subscribe and start flushing (returns once subscribed)."""
        for name, loop in (("cluster-listen", self._listen), ("cluster-flush", self._flush)):
            self._tasks.append(asyncio.create_task(loop(), name=name))
        await asyncio.wait_for(self._subscribed.wait(), timeout=10)

    async def stop(self) -> None:
        """Stop reading and flushing (``drain`` first what must still go out)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # --- out --------------------------------------------------------------------------

    def send(self, node: str, envelope: dict[str, Any]) -> None:
        """Queue a message for ``node``; all queued messages go out in one round trip."""
        self._outgoing.setdefault(node, []).append(envelope)
        self._wake.set()

    def broadcast(self, envelope: dict[str, Any]) -> None:
        self.send("*", envelope)

    async def _flush(self) -> None:
        while True:
            await self._wake.wait()
            await self.drain()

    async def drain(self) -> None:
        """Publish what is queued: one signed batch per channel, in one round trip.
        One drain at a time, so that every receiver sees a sender's sequence numbers
        grow (a smaller one is refused as a replay)."""
        async with self._publishing:
            self._wake.clear()
            if not self._outgoing:
                return
            outgoing, self._outgoing = self._outgoing, {}
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for node, envelopes in outgoing.items():
                        channel = self.everyone if node == "*" else self.channel(node)
                        pipe.publish(channel, self.signer.seal(channel, envelopes))
                    await pipe.execute()
            except RedisError as error:
                log.warning("could not publish %d batches: %s", len(outgoing), error)

    # --- in ---------------------------------------------------------------------------

    async def _listen(self) -> None:
        while True:
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel(self.node), self.everyone)
                self._subscribed.set()
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None:
                        self.receive(text_of(message["channel"]) or "", message["data"])
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("lost the Redis subscription (%s); resubscribing", error)
                self._on_lost()
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(Exception):
                    # typed in some redis releases and not in others: checked either way
                    closing: Any = pubsub
                    await closing.aclose()

    def receive(self, channel: str, data: bytes) -> None:
        """Act on one batch read from Redis, if a process of this cluster signed it."""
        try:
            sender, envelopes = self.signer.open(channel, data)
        except Refused as refused:
            self._refused(channel, refused)
            return
        if sender == self.node and channel == self.everyone:
            return  # a broadcast of ours, already applied here
        for envelope in envelopes:
            self._dispatch(envelope)

    def _refused(self, channel: str, refused: Refused) -> None:
        """Count a refused batch, and say so in the log (at most once every
        ``REFUSAL_LOG_SECONDS`` per reason, with how many went unsaid meanwhile)."""
        metrics.CLUSTER_REFUSED.labels(refused.reason).inc()
        now = time.monotonic()
        last, unsaid = self._refusals.get(refused.reason, (-REFUSAL_LOG_SECONDS, 0))
        if now - last < REFUSAL_LOG_SECONDS:
            self._refusals[refused.reason] = (last, unsaid + 1)
            return
        self._refusals[refused.reason] = (now, 0)
        log.warning(
            "refused a message from Redis (%s) on %s: %s%s; is someone else writing to "
            "Redis, or does a process have another SAHRAT_CLUSTER_SECRET?",
            refused.reason,
            channel,
            refused.detail,
            f" (and {unsaid} more since the last warning)" if unsaid else "",
        )

    def _dispatch(self, envelope: dict[str, Any]) -> None:
        kind = envelope.get("k")
        handler = self._handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            log.warning("unknown cluster message %r", kind)
            return
        try:
            handler(envelope)
        except Exception:
            log.exception("cluster message %r failed", kind)

    # --- calls ------------------------------------------------------------------------

    async def call(self, node: str, op: str, table_id: int, args: dict[str, Any]) -> Any:
        """Run a table operation on the process ``node``, and wait for its answer."""
        call_id = secrets.token_hex(8)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._calls[call_id] = future
        self.send(
            node, {"k": "call", "id": call_id, "o": self.node, "op": op, "t": table_id, "a": args}
        )
        try:
            return await asyncio.wait_for(future, RPC_SECONDS)
        except TimeoutError:
            raise TableError(
                "unavailable", "the table's server did not answer in time; try again"
            ) from None
        finally:
            self._calls.pop(call_id, None)

    def _on_call(self, envelope: dict[str, Any]) -> None:
        self._background(asyncio.create_task(self._reply(envelope)))

    async def _reply(self, envelope: dict[str, Any]) -> None:
        origin, call_id, table_id = envelope["o"], envelope["id"], int(envelope["t"])
        reply: dict[str, Any] = {"k": "result", "id": call_id}
        try:
            reply["v"] = await self._answer(table_id, envelope["op"], envelope["a"])
        except Moved:
            reply["moved"] = True
        except TableError as error:
            reply["e"] = {"code": error.code, "message": error.message}
        except BadOption as error:
            reply["e"] = {"option": error.option, "reason": error.reason}
        except Exception as error:
            log.exception("call %s on table %s failed", envelope["op"], table_id)
            reply["e"] = {"code": "server_error", "message": str(error)}
        self.send(origin, reply)

    def _on_result(self, envelope: dict[str, Any]) -> None:
        future = self._calls.get(envelope["id"])
        if future is None or future.done():
            return
        if envelope.get("moved"):
            future.set_exception(Moved())
        elif "e" in envelope:
            error = envelope["e"]
            if "option" in error:
                future.set_exception(BadOption(error["option"], error["reason"]))
            else:
                future.set_exception(TableError(error["code"], error["message"]))
        else:
            future.set_result(envelope.get("v"))


def text_of(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value
