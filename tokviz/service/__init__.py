"""The tokenizer service: one child process that loads vocabularies and encodes texts for the
window's panes (`server`), and the messages it understands (`protocol`). Qt-free."""
