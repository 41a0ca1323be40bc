"""A live table."""
