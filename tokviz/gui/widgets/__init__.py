"""Widgets, charts and the theme shared by the compare window, the tools and the trainer."""
