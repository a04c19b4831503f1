"""The tokviz desktop app (PySide6). Every Qt import of the project lives in this package."""
