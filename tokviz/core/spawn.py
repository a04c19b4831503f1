"""A spawned child process without multiprocessing's resource tracker beside it.

multiprocessing's spawn start (POSIX) first starts a resource tracker: one more Python process
that outlives nothing, there only to unlink the named semaphores and shared memory segments a
crashed process leaves. tokviz's children share neither with their parent (each has a `Pipe`):
the app's (`gui/work/child.py`) and the trainer's counting workers (`training/pool.py`). Yet the
tracker was the app's third process, 13 MiB resident. A child that makes a semaphore after all
starts a tracker of its own at that moment (multiprocessing does so when it finds none).

`SpawnProcess` is multiprocessing's own `SpawnProcess` with `Popen._launch` copied from the
standard library (identical in Python 3.8 to 3.13) less the tracker's file descriptor. On
Windows, which has no tracker, and on a Python newer than those (whose private launch this copy
may no longer match), it is multiprocessing's own, tracker and all: one process more, never a
broken start.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import sys
from typing import Any

#: the Pythons whose `popen_spawn_posix.Popen._launch` the copy below matches
_LAUNCH_COPIED = (3, 8) <= sys.version_info[:2] <= (3, 13)

if sys.platform != "win32" and _LAUNCH_COPIED:
    from multiprocessing import popen_spawn_posix, spawn, util
    from multiprocessing.context import reduction, set_spawning_popen  # type: ignore[attr-defined]

    class _Popen(popen_spawn_posix.Popen):
        def _launch(self, process_obj: Any) -> None:
            prep_data = spawn.get_preparation_data(process_obj._name)
            fp = io.BytesIO()
            set_spawning_popen(self)
            try:
                reduction.dump(prep_data, fp)
                reduction.dump(process_obj, fp)
            finally:
                set_spawning_popen(None)

            parent_r = child_w = child_r = parent_w = None
            try:
                parent_r, child_w = os.pipe()
                child_r, parent_w = os.pipe()
                cmd = spawn.get_command_line(pipe_handle=child_r)  # no tracker_fd: the child has none
                # (the standard library's private parts, which its stubs do not describe)
                self._fds.extend([child_r, child_w])  # type: ignore[attr-defined]
                self.pid = util.spawnv_passfds(spawn.get_executable(), cmd, self._fds)  # type: ignore[arg-type, attr-defined]
                self.sentinel = parent_r
                with open(parent_w, "wb", closefd=False) as f:
                    f.write(fp.getbuffer())
            finally:
                fds_to_close = [fd for fd in (parent_r, parent_w) if fd is not None]
                self.finalizer = util.Finalize(self, util.close_fds, fds_to_close)  # type: ignore[attr-defined]
                for fd in (child_r, child_w):
                    if fd is not None:
                        os.close(fd)

    class SpawnProcess(multiprocessing.get_context("spawn").Process):  # type: ignore[misc]
        """A spawned `multiprocessing.Process` whose start starts no resource tracker."""

        @staticmethod
        def _Popen(process_obj: Any) -> Any:  # noqa: N802 (multiprocessing's name)
            return _Popen(process_obj)

else:  # pragma: no cover (Windows: spawn starts no tracker there; a newer Python: its own launch)
    SpawnProcess = multiprocessing.get_context("spawn").Process  # type: ignore[misc, assignment]
