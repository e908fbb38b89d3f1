"""mcref."""
