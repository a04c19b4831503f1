"""What the Tools show, Qt-free: the vocabulary table, merge replay, the pipeline, stats and cost.

Built on `tokviz.core` (tokenizers, tokens, scripts); used by `tokviz.cli` and `tokviz.gui`.
Importing this package imports nothing else.
"""
