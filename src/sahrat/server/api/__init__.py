"""The HTTP edge: one router per resource, their dependencies and models."""
