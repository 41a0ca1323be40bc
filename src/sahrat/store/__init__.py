"""Persistence: SQLAlchemy 2.0 models, the database engine, and the tables' event log."""
