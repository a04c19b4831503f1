#!/usr/bin/env bash
# Install everything the tests need (system packages too), provision the real vocabularies the
# tests use, run the checks (ruff, the import contract, mypy), then the whole suite offscreen.
# Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=test source scripts/setup.sh
export TOKVIZ_DATA_DIR=${TOKVIZ_DATA_DIR:-$PWD/.cache/tokviz}
export QT_QPA_PLATFORM=offscreen
.venv/bin/tokviz vocabs fetch
# The checks, fastest first; configured in pyproject.toml. Any failure stops the run (set -e).
.venv/bin/ruff check --no-cache .
.venv/bin/lint-imports --no-cache --no-logo
.venv/bin/mypy
exec .venv/bin/python -m pytest "$@"
