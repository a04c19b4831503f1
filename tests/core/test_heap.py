"""The C heap helpers: on glibc, large blocks keep pages of their own once told to."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tokviz.core import heap

# mallinfo2's hblks: the blocks that have pages of their own. A 4 MB block freed raises glibc's
# threshold to 4 MB, so a 1 MB block that follows comes from the arena, unless the threshold
# was fixed first.
PROBE = """
import ctypes, sys
from tokviz.core.heap import map_large_blocks
libc = ctypes.CDLL("libc.so.6")
class Info(ctypes.Structure):
    names = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
    _fields_ = [(n, ctypes.c_size_t) for n in names.split()]
libc.mallinfo2.restype = Info
if sys.argv[1] == "fixed":
    map_large_blocks()
big = bytearray(4 << 20)
del big
before = libc.mallinfo2().hblks
block = bytearray(1 << 20)
print(libc.mallinfo2().hblks - before)
"""


@pytest.mark.skipif(heap._glibc() is None or not hasattr(heap._glibc(), "mallinfo2"), reason="glibc only")
@pytest.mark.parametrize(("mode", "own_pages"), [("fixed", "1"), ("default", "0")])
def test_a_fixed_threshold_gives_large_blocks_pages_of_their_own(mode, own_pages) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == own_pages
