"""A real Dask cluster on loopback for the tests: a scheduler and two worker processes.

The workers see an empty vocabulary folder (`TOKVIZ_DATA_DIR`): every vocabulary they use has to
arrive with the work, as on machines without a shared home folder.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    """A `distributed.LocalCluster` of two worker processes (one thread each) under nannies, which
    start a worker again when one dies."""
    import dask
    from distributed import LocalCluster

    empty = tmp_path_factory.mktemp("worker-data")
    # a worker fetching a table from one just killed retries the connection this long (30 s by
    # default) before the scheduler has it made again
    config = dask.config.set({"distributed.comm.timeouts.connect": "5s"})
    with config, LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                              dashboard_address=None, env={"TOKVIZ_DATA_DIR": str(empty)}) as running:
        yield running


@pytest.fixture
def scheduler(cluster) -> str:
    """The cluster's address, with both workers up (a test before may have killed one)."""
    from distributed import Client

    with Client(cluster.scheduler_address, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
    return cluster.scheduler_address


@pytest.fixture
def kill_first(cluster, tmp_path):
    """`kill_first(prefix)`: the first task whose key starts with `prefix` kills its worker
    process (SIGKILL) as it starts, once: decided inside the worker with a marker file, so no
    timer races the run. Gives the marker's path (it exists once the kill happened)."""
    from distributed import Client

    marker = tmp_path / "killed"
    client = Client(cluster.scheduler_address, set_as_default=False)
    names = []

    def arm(prefix: str):
        from distributed.diagnostics.plugin import WorkerPlugin

        class KillOnce(WorkerPlugin):
            name = f"kill-once-{prefix}"

            def transition(self, key, start, finish, **kwargs):
                import os
                import signal

                text = key if isinstance(key, str) else str(key)
                if finish == "executing" and text.startswith(prefix):
                    try:
                        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                    except FileExistsError:
                        return
                    os.close(fd)
                    os.kill(os.getpid(), signal.SIGKILL)

        client.register_plugin(KillOnce())
        names.append(KillOnce.name)
        return marker

    yield arm
    for name in names:
        client.unregister_worker_plugin(name)
    client.close()
