"""A real Dask cluster on loopback for the tests: a scheduler and two worker processes.

The workers see an empty vocabulary folder (`TOKVIZ_DATA_DIR`): every vocabulary they use has to
arrive with the work, as on machines without a shared home folder.
"""

from __future__ import annotations

import pytest


def _local_cluster(tmp_path_factory):
    """A `distributed.LocalCluster` of two worker processes (one thread each) under nannies, which
    start a worker again when one dies."""
    import dask
    from distributed import LocalCluster

    empty = tmp_path_factory.mktemp("worker-data")
    # a worker fetching a table from one just killed retries the connection this long (30 s by
    # default) before the scheduler has it made again
    # the scheduler's HTTP server on a free port: two clusters at once would both ask for 8787
    with dask.config.set({"distributed.comm.timeouts.connect": "5s"}):
        return LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                            dashboard_address=":0", worker_dashboard_address=None,
                            env={"TOKVIZ_DATA_DIR": str(empty)})


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    """The session's cluster; no test kills its workers (`kill_first` has a cluster of its own)."""
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "5s"}), _local_cluster(tmp_path_factory) as running:
        yield running


@pytest.fixture
def scheduler(cluster) -> str:
    """The session cluster's address."""
    return cluster.scheduler_address


@pytest.fixture
def kill_first(tmp_path_factory, tmp_path):
    """`kill_first(prefix)`: the first task whose key starts with `prefix` kills its worker
    process (SIGKILL) as it starts, once: decided inside the worker with a marker file, so no
    timer races the run. Gives the marker's path (it exists once the kill happened). The
    workers are a cluster of this test's own (`kill_first.address`), so that no other test
    waits for the killed one to be started again."""
    import dask
    from distributed import Client

    marker = tmp_path / "killed"
    config = dask.config.set({"distributed.comm.timeouts.connect": "5s"})
    config.__enter__()
    cluster = _local_cluster(tmp_path_factory)
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

    arm.address = cluster.scheduler_address  # type: ignore[attr-defined]
    try:
        yield arm
    finally:
        client.close()
        cluster.close()
        config.__exit__(None, None, None)
