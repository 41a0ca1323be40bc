"""Several server processes joined through Redis."""
