"""Background work: every thread and child process the GUI starts goes through this package."""
