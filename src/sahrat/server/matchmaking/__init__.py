"""Rated quick play's matchmaking: who sits with whom (``pairing``, pure) and the
former that forms those tables in waves from the queue in the database (``former``)."""
