#!/usr/bin/env bash
# Regenerate the vocabulary tokviz ships for a first start with nothing provisioned: a 1k byte-level
# BPE trained by tokviz itself on its shipped samples. Training is deterministic, so the result is
# byte-identical every time (tests/training/test_bundled_vocab.py checks it).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/tokviz train tokviz/resources/samples -o tokviz/resources/vocabs/tokviz-samples \
  --vocab-size 1024 --pattern cl100k --special '<|endoftext|>' --exclude samples.json --jobs 1
sha256sum tokviz/resources/vocabs/tokviz-samples.tiktoken
