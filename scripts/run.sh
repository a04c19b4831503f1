#!/usr/bin/env bash
# Install tokviz and its vocabularies, then open the compare window. Arguments go to `tokviz`.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=app source scripts/setup.sh
# Vocabularies come from their own URLs or registry packages; one that cannot be had here is
# reported and the app still opens with the rest.
.venv/bin/tokviz vocabs fetch || echo "some vocabularies could not be fetched; see above" >&2
exec .venv/bin/tokviz "$@"
