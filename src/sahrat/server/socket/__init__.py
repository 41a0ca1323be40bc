"""The WebSocket edge: the endpoint and the dispatch of its messages."""
