"""tokviz: see how real tokenizers cut text, side by side."""

__version__ = "0.1.0"
