"""Sahrat: a self-hostable multiplayer card-game server for Konkan and Conquian."""

__version__ = "0.1.0"
