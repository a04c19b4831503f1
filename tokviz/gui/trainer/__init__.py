"""The BPE trainer window: the form, the run, the curve, the merges, the trained vocabularies."""
