"""compile stage."""
