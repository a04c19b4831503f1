"""The trainer panel: real training on files written here, real widgets, no mocks.

Each test points `TOKVIZ_DATA_DIR` at its own folder: a finished run saves into
`data_dir()/trained`, and cancelled or failed runs must leave it untouched.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import random
from functools import partial
from pathlib import Path

import pytest
from PySide6.QtCore import QThread, QTimer

from tests.gui.conftest import TIMEOUT_MS
from tokviz.core import catalog
from tokviz.core.sidecar import load_trained
from tokviz.core.tokens import display_text, hex_bytes
from tokviz.gui.trainer.panel import TrainerPanel, free_base, trained_dir
from tokviz.gui.trainer.worker import TrainingJob, train_in_child
from tokviz.gui.work.worker import Worker
from tokviz.training.trainer import TrainOptions
from tokviz.training.vocabfile import trained_tokenizer

RUN_MS = 60_000

TEXTS = {
    "english.txt": "The quick brown fox jumps over the lazy dog. " * 30
    + "Tokenizers cut text into pieces; the pieces are learned from a corpus. " * 20,
    "korean.txt": "안녕하세요. 토큰은 문자도 단어도 아닙니다. 어휘는 말뭉치에서 배웁니다. " * 25,
    "code/main.py": (
        "def merge(ids, pair, idx):\n"
        "    out = []\n"
        "    for i in range(len(ids)):\n"
        "        out.append(ids[i])\n"
        "    return out\n"
    ) * 15,
    "notes.md": "# Notes\n\n- bytes are the truth, text is a view\n- the gains shrink\n" * 20,
}


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.setenv("TOKVIZ_DATA_DIR", str(folder))
    return folder


@pytest.fixture
def small_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    for name, text in TEXTS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / "image.bin").write_bytes(bytes(range(256)) * 8)  # NUL bytes: binary
    (root / "latin1.txt").write_bytes("café déjà vu, naïve façade".encode("latin-1"))
    return root


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory) -> Path:
    """About 7 MB of random words: split with a helper process, long enough to cancel mid-run."""
    root = tmp_path_factory.mktemp("big")
    rng = random.Random(5)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(20000)]
    words += ["한국어", "데이터", "토큰"] * 10
    for i in range(6):
        (root / f"part{i}.txt").write_text(" ".join(rng.choices(words, k=190_000)), encoding="utf-8")
    return root


def make_panel(qtbot, paths, *, vocab_size: int, compare_text: str = "", **options) -> TrainerPanel:
    panel = TrainerPanel(compare_text=compare_text)
    qtbot.addWidget(panel)
    panel.resize(1200, 760)
    panel.show()
    panel.set_paths([str(p) for p in paths])
    panel.form.vocab_spin.setValue(vocab_size)
    if "min_frequency" in options:
        panel.form.min_freq_spin.setValue(options["min_frequency"])
    if "jobs" in options:
        panel.form.jobs_spin.setValue(options["jobs"])
    return panel


def run_to_end(qtbot, panel: TrainerPanel):
    with qtbot.waitSignal(panel.run_finished, timeout=RUN_MS) as blocker:
        blocker.connect(panel.run_failed)
        blocker.connect(panel.run_cancelled)
        assert panel.start()
    assert panel.result is not None, f"the run did not finish: {blocker.args}"
    qtbot.waitUntil(lambda: not panel.running, timeout=TIMEOUT_MS)
    return panel.result


def descendants(pid: int) -> dict[int, str]:
    """Live processes below `pid` (from /proc): pid -> command line."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":  # a zombie is already dead
            parents[int(entry.name)] = int(fields[1])
    found, frontier = {}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in found:
                try:
                    found[child] = (Path("/proc") / str(child) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                except OSError:
                    found[child] = "?"
                frontier.append(child)
    return found


def counting_helpers() -> list[int]:
    """The processes the trainer's child process (itself spawned) counts with: the pool's workers
    or, below the pool's corpus size, the split helper."""
    procs = descendants(os.getpid())
    spawned = [pid for pid, cmd in procs.items() if "multiprocessing" in cmd]
    return [pid for child in spawned for pid, cmd in descendants(child).items()
            if "multiprocessing" in cmd or "tokviz.training.splitter" in cmd]


def test_small_folder_trains_reports_skipped_saves_and_recuts(
    qtbot, data_dir: Path, small_corpus: Path, tmp_path: Path
) -> None:
    text = "The lazy dog reads 토큰 and merge(ids, pair, idx). " * 4
    panel = make_panel(qtbot, [small_corpus], vocab_size=700, compare_text=text)
    ready: list[str] = []
    panel.vocabulary_ready.connect(ready.append)
    result = run_to_end(qtbot, panel)

    assert result.corpus.files_read == len(TEXTS) and len(result.merges) > 100
    skipped = dict(panel.skipped_rows())
    assert skipped[str(small_corpus / "image.bin")].startswith("binary")
    assert skipped[str(small_corpus / "latin1.txt")].startswith("not UTF-8")
    assert panel.tabs.tabText(1) == "Skipped files (2)"

    model = panel.merges_model  # the live batches add up to exactly the learned merges
    assert model.rowCount() == len(result.merges) and model.merges == result.merges
    table = result.token_bytes()
    for row in (0, len(result.merges) // 2, len(result.merges) - 1):
        cells = [model.data(model.index(row, c)) for c in range(model.columnCount())]
        left, right, count = result.merges[row]
        assert cells == [f"{256 + row:,}", display_text(table[left]), display_text(table[right]),
                         display_text(table[256 + row]), hex_bytes(table[256 + row]), f"{count:,}"]
    assert panel.corpus_curve.ys == result.corpus_tokens()

    saved = trained_dir() / f"{result.name}.tiktoken"
    assert ready == [str(saved)] and saved.is_file() and saved.with_suffix(".json").is_file()
    loaded = catalog.load(str(saved))
    assert loaded.encode_ids(text) == trained_tokenizer(result).encode_ids(text)
    assert panel.trained_paths() == [str(saved)]
    with qtbot.waitSignal(panel.vocabulary_ready) as again:
        panel.add_selected()
    assert again.args == [str(saved)]

    # the slider: only the first k merges, counted off the GUI thread, as trained_tokenizer counts
    recut = panel.recut
    qtbot.waitUntil(lambda: recut.slider.maximum() == len(result.merges), timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: recut.tokens is not None and len(recut.curve.ys) > 3, timeout=TIMEOUT_MS)
    for k in (len(result.merges), len(result.merges) // 3, 0):
        with qtbot.waitSignal(recut.counted, timeout=TIMEOUT_MS, check_params_cb=lambda kk, n, k=k: kk == k) as got:
            recut.set_k(k)
        assert got.args[1] == len(trained_tokenizer(result, num_merges=k).encode(text))
    ys = recut.curve.ys
    assert all(a >= b for a, b in itertools.pairwise(ys)) and ys[0] == len(text.encode("utf-8"))

    out = tmp_path / "elsewhere"
    out.mkdir()
    written = panel.save_as(out / "mine.tiktoken", hf_json=True)
    assert sorted(p.name for p in written) == ["mine.json", "mine.tiktoken", "mine.tokenizer.json"]
    assert free_base(trained_dir(), result.name).name == f"{result.name}-2"  # never overwrites


def test_cancel_ends_in_cancelled_and_writes_nothing(qtbot, data_dir: Path, big_corpus: Path) -> None:
    earlier = data_dir / "trained"
    earlier.mkdir()
    (earlier / "earlier.tiktoken").write_bytes(b"kept")
    (earlier / "earlier.json").write_bytes(b"{}")
    panel = make_panel(qtbot, [big_corpus], vocab_size=256 + 60_000, min_frequency=1)
    shown: list[int] = []

    def cancel_once_merges_show(p) -> None:
        # in the slot of the progress, before the run's result (queued behind it) can arrive
        if p.phase == "merging" and not shown:
            shown.append(panel.merges_model.rowCount())
            panel.cancel()

    panel.progressed.connect(cancel_once_merges_show)
    with qtbot.waitSignal(panel.run_cancelled, timeout=RUN_MS) as blocker:
        blocker.connect(panel.run_finished)
        blocker.connect(panel.run_failed)
        assert panel.start()
    assert blocker.signal_triggered and panel.result is None
    assert shown[0] > 0  # the live table had merges when the user cancelled
    qtbot.waitUntil(lambda: not panel.running, timeout=TIMEOUT_MS)
    assert sorted(p.name for p in earlier.iterdir()) == ["earlier.json", "earlier.tiktoken"]
    assert (earlier / "earlier.tiktoken").read_bytes() == b"kept"
    assert "nothing was written" in panel.status_label.text()
    assert panel.start_button.isEnabled() and not panel.cancel_button.isEnabled()


def test_training_runs_in_a_child_process_while_the_event_loop_turns(qtbot, data_dir: Path, big_corpus: Path) -> None:
    """The trainer runs in a process of its own, so the GUI thread only relays its progress.

    How long the GUI thread may stall is a figure for bench/bench_gui.py, not a unit test: here the
    facts that make it small are checked instead (no timing assertion, so a loaded machine passes
    exactly as a quiet one does).
    """
    panel = make_panel(qtbot, [big_corpus], vocab_size=256 + 2000)
    before = {p.pid for p in multiprocessing.active_children()}
    trainers: list[set[int]] = []
    ticks_while_running: list[bool] = []
    timer = QTimer(interval=10)
    timer.timeout.connect(lambda: ticks_while_running.append(panel.running))

    def look(_progress) -> None:
        if not trainers:
            trainers.append({p.pid for p in multiprocessing.active_children()} - before)

    panel.progressed.connect(look)
    timer.start()
    try:
        result = run_to_end(qtbot, panel)
    finally:
        timer.stop()
    assert len(result.merges) == 2000
    assert trainers and trainers[0], "training should run in a child process, not on a thread of the GUI's"
    assert os.getpid() not in trainers[0]
    assert any(ticks_while_running), "the GUI's event loop should have turned while training ran"


def test_closing_mid_run_cancels_waits_and_leaves_no_processes(qtbot, data_dir: Path, big_corpus: Path) -> None:
    before = set(multiprocessing.active_children())
    panel = make_panel(qtbot, [big_corpus], vocab_size=256 + 20_000, jobs=2)
    helpers: list[list[int]] = []

    def look(p) -> None:  # in the slot of a counting progress: the helper is counting then
        if p.phase == "counting" and p.bytes_read > 0 and not helpers:
            helpers.append(counting_helpers())

    panel.progressed.connect(look)
    assert panel.start()
    run = panel.run
    qtbot.waitUntil(lambda: bool(helpers), timeout=RUN_MS)
    assert helpers[0], "the corpus should be counted with a helper process"
    panel.close()
    assert not panel.running and not run.is_running
    assert run.outcome == "aborted"
    assert not [t for t in panel.findChildren(QThread) if t.isRunning()]
    assert counting_helpers() == []
    assert set(multiprocessing.active_children()) <= before
    assert not (data_dir / "trained").exists() or not any((data_dir / "trained").iterdir())


def test_empty_folder_fails_with_a_message(qtbot, data_dir: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    panel = make_panel(qtbot, [empty], vocab_size=500)
    with qtbot.waitSignal(panel.run_failed, timeout=RUN_MS) as blocker:
        blocker.connect(panel.run_finished)
        assert panel.start()
    assert "no files to train on" in blocker.args[0]
    assert panel.status_label.isVisible() and "no files to train on" in panel.status_label.text()
    qtbot.waitUntil(lambda: not panel.running, timeout=TIMEOUT_MS)
    assert not (data_dir / "trained").exists() or not any((data_dir / "trained").iterdir())


def test_bad_regex_is_shown_inline_and_blocks_start(qtbot, data_dir: Path, small_corpus: Path) -> None:
    panel = make_panel(qtbot, [small_corpus], vocab_size=500)
    form = panel.form
    form.set_pattern(r"(\w+")
    assert form.pattern_edit.isVisible() and form.pattern_error.isVisible()
    assert "does not compile" in form.pattern_error.text()
    assert not panel.start_button.isEnabled()
    with qtbot.waitSignal(panel.message, timeout=TIMEOUT_MS) as said:
        assert not panel.start()
    assert "split pattern" in said.args[0] and not panel.running
    form.pattern_edit.setText(r"\w+|\s+|[^\w\s]+")
    assert not form.pattern_error.isVisible() and panel.start_button.isEnabled()
    assert form.job().options.pattern == r"\w+|\s+|[^\w\s]+"
    form.set_paths([])
    with qtbot.waitSignal(panel.message, timeout=TIMEOUT_MS) as said:
        assert not panel.start()
    assert "nothing to train on" in said.args[0]


def test_saved_vocabularies_are_listed_in_a_later_session(qtbot, data_dir: Path, small_corpus: Path) -> None:
    first = make_panel(qtbot, [small_corpus], vocab_size=400)
    result = run_to_end(qtbot, first)
    first.close()
    later = TrainerPanel()  # a new session: the list comes from the data dir
    qtbot.addWidget(later)
    path = str(trained_dir() / f"{result.name}.tiktoken")
    assert later.trained_paths() == [path]
    later.trained_list.setCurrentRow(0)
    assert later.add_button.isEnabled()
    with qtbot.waitSignal(later.vocabulary_ready) as got:
        later.add_button.click()
    assert got.args == [path]
    assert load_trained(path).vocab_size == result.vocab_size


def test_worker_ends_each_run_in_exactly_one_terminal_signal(
    qtbot, data_dir: Path, small_corpus: Path, tmp_path: Path
) -> None:
    def run(job: TrainingJob, *, cancel_first: bool = False) -> list[str]:
        worker = Worker(partial(train_in_child, training=job))
        ends: list[str] = []
        worker.returned.connect(lambda _r: ends.append("finished"))
        worker.errored.connect(lambda _e: ends.append("failed"))
        worker.aborted.connect(lambda: ends.append("cancelled"))
        if cancel_first:
            worker.abort()
        with qtbot.waitSignal(worker.finished, timeout=RUN_MS):
            worker.start()
        return ends

    job = TrainingJob((str(small_corpus),), TrainOptions(vocab_size=300))
    assert run(job) == ["finished"]
    assert run(job, cancel_first=True) == ["cancelled"]
    (tmp_path / "void").mkdir()
    assert run(TrainingJob((str(tmp_path / "void"),), TrainOptions(vocab_size=300))) == ["failed"]
    assert run(TrainingJob((str(small_corpus),), TrainOptions(vocab_size=300, pattern="("))) == ["failed"]
    assert not (data_dir / "trained").exists()  # the worker itself never writes


def test_closing_the_compare_window_mid_run_cancels_the_trainer(
    qtbot, data_dir: Path, big_corpus: Path, tmp_path: Path
) -> None:
    from PySide6.QtCore import QSettings

    from tokviz.gui.app import build_window

    window = build_window(specs=["tokviz-samples"], text="hello", restore=False,
                          settings=QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    panel = window.tools.open_trainer().panel
    panel.set_paths([str(big_corpus)])
    panel.form.vocab_spin.setValue(256 + 20_000)
    assert panel.start()
    run = panel.run
    qtbot.waitUntil(lambda: panel.last_progress is not None, timeout=RUN_MS)
    window.close()
    qtbot.waitUntil(lambda: not panel.running, timeout=TIMEOUT_MS)
    assert run.outcome == "aborted"
    assert not (data_dir / "trained").exists() or not any((data_dir / "trained").iterdir())


def test_a_binary_only_folder_lists_its_skipped_files(qtbot, data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "binary"
    folder.mkdir()
    for name in ("a.bin", "b.bin"):
        (folder / name).write_bytes(bytes(range(256)) * 8)
    panel = make_panel(qtbot, [folder], vocab_size=500)
    with qtbot.waitSignal(panel.run_failed, timeout=RUN_MS) as blocker:
        blocker.connect(panel.run_finished)
        assert panel.start()
    assert "all 2 files skipped" in blocker.args[0]
    rows = dict(panel.skipped_rows())
    assert sorted(rows) == [str(folder / "a.bin"), str(folder / "b.bin")]
    assert all(reason.startswith("binary") for reason in rows.values())
    assert panel.tabs.tabText(1) == "Skipped files (2)"
    assert "2 skipped" in panel.files_label.text()


def test_the_progress_bar_runs_once_through_counting_and_merging(qtbot, data_dir: Path, big_corpus: Path) -> None:
    from tokviz.gui.trainer.panel import BAR_STEPS, COUNTING_SHARE

    panel = make_panel(qtbot, [big_corpus], vocab_size=256 + 3000)
    seen: list[tuple[str, int]] = []

    def record(p) -> None:
        if panel.progress_bar.maximum() == BAR_STEPS:
            seen.append((p.phase, panel.progress_bar.value()))

    panel.progressed.connect(record)
    run_to_end(qtbot, panel)
    values = [v for _, v in seen]
    assert values == sorted(values), "the bar went back"
    phases = {phase for phase, _ in seen}
    assert {"counting", "merging"} <= phases
    assert all(v <= COUNTING_SHARE * BAR_STEPS for phase, v in seen if phase == "counting")
    assert all(v >= COUNTING_SHARE * BAR_STEPS for phase, v in seen if phase == "merging")


def test_after_a_cancel_the_recut_curve_does_not_say_counting(qtbot, data_dir: Path, small_corpus: Path,
                                                               big_corpus: Path) -> None:
    from tokviz.gui.trainer.recut import NO_CURVE

    panel = make_panel(qtbot, [small_corpus], vocab_size=300, compare_text="hello world")
    run_to_end(qtbot, panel)
    qtbot.waitUntil(lambda: panel.recut.result is not None, timeout=TIMEOUT_MS)  # its curve is being counted
    panel.set_paths([str(big_corpus)])
    with qtbot.waitSignal(panel.run_cancelled, timeout=RUN_MS):
        assert panel.start()
        panel.cancel()
    assert panel.recut.result is None and panel.recut.curve.placeholder == NO_CURVE
    assert "counting" not in panel.recut.count_label.text()
