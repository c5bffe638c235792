"""emit stage."""
