// The load client of the boardgame.io peer (bench/bench_server.py).
//
// It speaks boardgame.io's socket.io protocol directly with socket.io-client
// (no boardgame.io client, no redux store: the client must not be the
// bottleneck). Each table is a match of game.js with one socket per seat
// (WebSocket transport only); every seat moves as soon as an update says it is
// its turn. The latency of a move runs from the move sent to its update
// received by every seat of the table.
//
// Talks to its parent in JSON lines: it prints {"ready": tables} once every
// seat is synced, reads {"go": s, "t0": s, "t1": s} (CLOCK_MONOTONIC seconds,
// Python's time.monotonic()), plays until t1, counts moves whose update reached
// every seat in [t0, t1), and prints {"result": {...}}.
'use strict';

const readline = require('readline');
const { io } = require('socket.io-client');

const DRAIN_MS = 10000;
const SETUP_CONCURRENCY = 8;

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : fallback;
}

const host = option('host', '127.0.0.1');
const port = Number(option('port', '8200'));
const tableCount = Number(option('tables', '1'));
const players = Number(option('players', '2'));
const worker = Number(option('worker', '0'));
const gameName = option('game', 'pile');

const now = () => Number(process.hrtime.bigint()) / 1e9;

const stats = { moves: 0, latencies: [], errors: {} };
let playing = false;
let window0 = Infinity;
let window1 = Infinity;
const inWindow = (t) => window0 <= t && t < window1;
const countError = (code) => {
  stats.errors[code] = (stats.errors[code] || 0) + 1;
};

class Table {
  constructor(index) {
    this.matchID = `bench-${worker}-${index}-${process.pid}`;
    this.sockets = [];
    this.stateID = 0;
    this.currentPlayer = '0';
    this.sentFor = -1; // the stateID a move was last sent for
    this.pending = new Map(); // stateID after the move -> [sent at, seats still to hear]
    this.card = 0;
  }

  async start() {
    for (let seat = 0; seat < players; seat++) {
      const socket = io(`http://${host}:${port}/${gameName}`, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false,
      });
      this.sockets.push(socket);
      await new Promise((resolve, reject) => {
        socket.once('connect_error', reject);
        socket.once('sync', (matchID, syncInfo) => {
          this.stateID = syncInfo.state._stateID;
          this.currentPlayer = syncInfo.state.ctx.currentPlayer;
          resolve();
        });
        socket.on('connect', () => socket.emit('sync', this.matchID, String(seat), undefined, players));
      });
      socket.on('update', (matchID, state) => this.onUpdate(seat, state));
      socket.on('patch', () => countError('unexpected_patch'));
      socket.on('disconnect', () => {
        if (playing) countError('disconnected');
      });
    }
  }

  onUpdate(seat, state) {
    const t = now();
    const id = state._stateID;
    const pending = this.pending.get(id);
    if (pending !== undefined) {
      pending[1] -= 1;
      if (pending[1] === 0) {
        this.pending.delete(id);
        if (inWindow(t)) stats.moves += 1;
        if (inWindow(pending[0])) stats.latencies.push(t - pending[0]);
      }
    } else {
      countError('unexpected_update');
    }
    if (id > this.stateID) {
      this.stateID = id;
      this.currentPlayer = state.ctx.currentPlayer;
    }
    if (String(seat) === this.currentPlayer) this.kick();
  }

  kick() {
    if (!playing || this.sentFor === this.stateID) return;
    this.sentFor = this.stateID;
    const playerID = this.currentPlayer;
    this.card = (this.card + 1) % 52;
    const action = {
      type: 'MAKE_MOVE',
      payload: { type: 'play', args: [this.card], playerID },
    };
    this.pending.set(this.stateID + 1, [now(), players]);
    this.sockets[Number(playerID)].emit('update', action, this.stateID, this.matchID, playerID);
  }

  close() {
    for (const socket of this.sockets) socket.close();
  }
}

function send(message, then) {
  process.stdout.write(`${JSON.stringify(message)}\n`, then);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function main() {
  const tables = [];
  let next = 0;
  const setupOne = async () => {
    while (next < tableCount) {
      const table = new Table(next++);
      await table.start();
      tables.push(table);
    }
  };
  await Promise.all(Array.from({ length: SETUP_CONCURRENCY }, setupOne));
  send({ ready: tables.length });
  const lines = readline.createInterface({ input: process.stdin });
  const [line] = await lines[Symbol.asyncIterator]().next().then((r) => [r.value]);
  lines.close();
  const { go, t0, t1 } = JSON.parse(line);
  await sleep((go - now()) * 1000);
  window0 = t0;
  window1 = t1;
  playing = true;
  for (const table of tables) table.kick();
  await sleep((t1 - now()) * 1000);
  playing = false;
  let stalled = 0;
  for (let waited = 0; waited < DRAIN_MS; waited += 100) {
    await sleep(100);
    stalled = tables.filter((table) => table.pending.size > 0).length;
    if (stalled === 0) break;
  }
  for (const table of tables) table.close();
  send({
    result: {
      moves: stats.moves,
      latencies: stats.latencies,
      errors: stats.errors,
      matches_finished: 0,
      stalled,
    },
  }, () => process.exit(0));
}

main().catch((error) => {
  send({ failed: String(error && error.stack ? error.stack : error) }, () => process.exit(1));
});
