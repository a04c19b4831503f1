"""The window's Dataset tab: `tokviz dataset` on a file or folder, drawn (`panel.DatasetPanel`)."""
