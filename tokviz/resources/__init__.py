"""Assets tokviz ships: sample texts, icons, styles. Found through importlib.resources."""
