"""The compare window: the input editor, one token pane per tokenizer, their views and menus."""
