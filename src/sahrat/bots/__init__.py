"""Players that see only their seat's view: the simple players used by self-play."""
