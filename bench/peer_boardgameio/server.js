// The boardgame.io server of bench/bench_server.py: the game of game.js on
// boardgame.io's own server (Koa + socket.io), state in memory (the default
// storage; FLATFILE_DIR is cleared so nothing is written to disk).
//
//   NODE_PATH=<folder>/node_modules node bench/peer_boardgameio/server.js --port 8200
'use strict';

delete process.env.FLATFILE_DIR;

const { Server, Origins } = require('boardgame.io/server');
const { Pile } = require('./game');

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : fallback;
}

const port = Number(option('port', '8200'));
const host = option('host', '127.0.0.1');
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error(`--port: not a port number: ${option('port')}`);
  process.exit(2);
}

const server = Server({ games: [Pile], origins: [Origins.LOCALHOST] });
// server.run() listens on every interface: listen on `host` only.
const listen = server.app.listen;
server.app.listen = (listenPort, callback) => listen.call(server.app, listenPort, host, callback);
server.run({ port, callback: () => console.log(`boardgame.io serving on ${host}:${port}`) });
