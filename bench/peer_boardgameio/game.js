// A small two-player turn game for the boardgame.io peer of bench/bench_server.py.
//
// Each move lays a card on a pile (the pile keeps its top 8 cards, so the state
// stays the same size) and ends the turn: about the work of a simple card move,
// with no hidden information (no player view to filter).
'use strict';

const { INVALID_MOVE } = require('boardgame.io/core');

const PILE_SIZE = 8;

const Pile = {
  name: 'pile',
  minPlayers: 2,
  maxPlayers: 2,
  setup: () => ({ pile: [], played: 0 }),
  turn: { minMoves: 1, maxMoves: 1 },
  moves: {
    play: ({ G }, card) => {
      if (!Number.isInteger(card) || card < 0 || card > 51) {
        return INVALID_MOVE;
      }
      G.pile.push(card);
      if (G.pile.length > PILE_SIZE) {
        G.pile.shift();
      }
      G.played += 1;
    },
  },
};

module.exports = { Pile };
