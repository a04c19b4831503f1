"""`python -m tokviz.service FD`: the tokenizer service, on the connection whose file descriptor
the window passed it (`tokviz.service.client` starts it so)."""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection

from tokviz.service.server import serve

if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: python -m tokviz.service FD (the window starts it)")
    serve(Connection(int(sys.argv[1])))
