"""The core is Qt-free: the CLI and scripts must not pay for (or need) PySide6."""

import subprocess
import sys


def test_core_and_cli_do_not_import_qt():
    code = (
        "import sys, tokviz.core.catalog, tokviz.core.fetch, tokviz.core.decoding, tokviz.cli, "
        "tokviz.core.backends.tiktoken_backend\n"
        "import tokviz.training\n"
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
