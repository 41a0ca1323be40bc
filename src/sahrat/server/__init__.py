"""The multiplayer server: REST for players and tables, a WebSocket per seat."""
