"""The compare window's Chat mode: a conversation through each pane's chat template."""
