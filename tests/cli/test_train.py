"""`tokviz train` as a script user sees it: files written, the summary, one-line errors, progress."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.training.texts import TRAINING
from tokviz.cli import build_parser, main
from tokviz.cli.progress import ProgressBar
from tokviz.cli.train import progress_line
from tokviz.core.sidecar import load_trained
from tokviz.training.events import Progress, TrainingError


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i, text in enumerate(TRAINING):
        (folder / f"doc{i}.txt").write_text(text * 2, encoding="utf-8")
    (folder / "blob.bin").write_bytes(b"\x00\x01binary")
    return folder


@pytest.fixture
def run(capsys):
    def run(argv: list[str]) -> tuple[int, str]:
        code = main(["train", *argv])
        return code, capsys.readouterr().err

    return run


def test_train_writes_files_and_summary(corpus_dir: Path, tmp_path: Path, run):
    out = tmp_path / "out" / "mine"
    out.parent.mkdir()
    code, err = run([str(corpus_dir), "-o", str(out), "--vocab-size", "600", "--special", "<|eot|>",
                     "--hf-json", "--jobs", "1"])
    assert code == 0, err
    assert sorted(p.name for p in out.parent.iterdir()) == ["mine.json", "mine.tiktoken", "mine.tokenizer.json"]
    meta = json.loads((out.parent / "mine.json").read_text())
    assert meta["vocab_size"] == 600 and meta["special_tokens"] == {"<|eot|>": 599}
    assert meta["corpus"]["files_read"] == len(TRAINING)
    assert meta["corpus"]["files_skipped"] == [{"path": str(corpus_dir / "blob.bin"), "reason": "binary (NUL bytes)"}]
    assert "learned 343 merges; vocab 600 of 600 requested" in err
    assert "skipped 1" in err and "blob.bin: binary (NUL bytes)" in err
    assert "wrote " in err and "Traceback" not in err
    tok = load_trained(out.parent / "mine.tiktoken")
    assert tok.encoding.decode(tok.encoding.encode_ordinary(TRAINING[1])) == TRAINING[1]


def test_hf_json_with_a_pattern_tokenizers_would_read_differently_is_refused_before_training(
    corpus_dir: Path, tmp_path: Path, run
):
    out = tmp_path / "mine"
    code, err = run([str(corpus_dir), "-o", str(out), "--vocab-size", "600", "--pattern", r"(?m)^\w+|\s",
                     "--hf-json", "--jobs", "1"])
    assert code == 1 and "Traceback" not in err
    assert "flag 'm'" in err and "save without the tokenizer.json (--hf-json)" in err
    assert "counting" not in err  # said before the corpus was read
    assert list(tmp_path.iterdir()) == [corpus_dir]


def test_stopping_early_is_reported(tmp_path: Path, run):
    (tmp_path / "a.txt").write_text("abab")
    code, err = run([str(tmp_path / "a.txt"), "-o", str(tmp_path / "v"), "--vocab-size", "5000"])
    assert code == 0
    # after ab+ab the pair (ab, ab) is left, but it occurs once: below the default --min-frequency 2
    assert "vocab 257 of 5,000 requested (no pair left that occurs 2 times or more; stopped early)" in err


def test_stopping_early_names_the_min_frequency_given(tmp_path: Path, run):
    (tmp_path / "a.txt").write_text("abab abab abab")
    code, err = run(
        [str(tmp_path / "a.txt"), "-o", str(tmp_path / "v"), "--vocab-size", "5000", "--min-frequency", "3"]
    )
    assert code == 0
    assert "(no pair left that occurs 3 times or more; stopped early)" in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--pattern", "(["], "split pattern '([' does not compile"),
        (["--vocab-size", "100"], "vocab size 100 is too small"),
        (["--special", "<a>", "<a>"], "special tokens must be distinct"),
    ],
)
def test_errors_are_one_line_without_traceback(corpus_dir: Path, tmp_path: Path, run, argv, message):
    base = [str(corpus_dir), "-o", str(tmp_path / "v"), "--vocab-size", "400"]
    code, err = run(base + argv)
    assert code == 1
    lines = [line for line in err.splitlines() if line.startswith("tokviz train: error:")]
    assert len(lines) == 1 and message in lines[0]
    assert "Traceback" not in err
    assert not list(tmp_path.glob("v.*"))


def test_empty_folder_error(tmp_path: Path, run):
    (tmp_path / "empty").mkdir()
    code, err = run([str(tmp_path / "empty"), "-o", str(tmp_path / "v"), "--vocab-size", "400"])
    assert code == 1 and "no files to train on" in err


def test_missing_input_is_one_line(tmp_path: Path, run):
    code, err = run([str(tmp_path / "nope"), "-o", str(tmp_path / "v"), "--vocab-size", "300"])
    assert code == 1 and err == f"tokviz train: error: {tmp_path / 'nope'}: no such file or folder\n"


def test_missing_output_folder_writes_nothing(corpus_dir: Path, tmp_path: Path, run):
    code, err = run([str(corpus_dir), "-o", str(tmp_path / "no" / "v"), "--vocab-size", "300"])
    assert code == 1 and "does not exist" in err


def show(bar: ProgressBar, e: Progress) -> None:
    bar.show(progress_line(e, bar), phase=e.phase, last=e.done >= e.total)


def test_progress_bar_lines_when_not_a_tty():
    stream = io.StringIO()
    bar = ProgressBar(stream)
    show(bar, Progress("counting", 5_000_000, 10_000_000, 2_000_000.0, 2.5, files_read=3))
    show(bar, Progress("counting", 6_000_000, 10_000_000, 2_000_000.0, 2.0))  # throttled
    show(bar, Progress("merging", 10, 100, 1000.0, 0.09))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and "\r" not in stream.getvalue()
    assert lines[0].startswith("counting") and "50%" in lines[0] and "files 3 read" in lines[0]
    assert lines[1].startswith("merging") and "10/100 merges" in lines[1]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_tty_redraws_one_line():
    stream = _Tty()
    bar = ProgressBar(stream)
    show(bar, Progress("merging", 100, 1000, 5000.0, 0.2))
    show(bar, Progress("merging", 1000, 1000, 5000.0, None))  # the last step is drawn at once
    bar.close(keep=True)
    out = stream.getvalue()
    assert out.count("\r") == 2 and out.endswith("\n") and out.count("\n") == 1
    first, second = out.strip("\n").split("\r")[1:]
    assert len(second) >= len(first)  # padded over the longer line before it


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--vocab-size", "1000000000"], "vocab size 1,000,000,000 is too large"),
        (["--vocab-size", "100"], "vocab size 100 is too small"),
        (["--jobs", "0"], "jobs must be at least 1"),
        (["--min-frequency", "0"], "min frequency must be at least 1"),
        (["--pattern", "(["], "does not compile"),
    ],
)
def test_bad_options_refused_before_the_corpus_is_read(corpus_dir: Path, tmp_path: Path, argv, message, run):
    from tokviz.training.trainer import train

    args = build_parser().parse_args(
        ["train", str(corpus_dir), "-o", str(tmp_path / "v"), "--vocab-size", "400", *argv]
    )
    events: list[Progress] = []
    with pytest.raises(TrainingError, match=message):
        train(args.paths, vocab_size=args.vocab_size, pattern=args.pattern, jobs=args.jobs,
              min_frequency=args.min_frequency, progress=events.append)
    assert events == []  # not a file scanned, not a byte counted
    code, err = run([str(corpus_dir), "-o", str(tmp_path / "v"), "--vocab-size", "400", *argv])
    assert code == 1 and message in err and "counting" not in err and "Traceback" not in err


def test_train_imports_only_what_training_uses(corpus_dir: Path, tmp_path: Path):
    """`tokviz train` starts without the other commands' imports (the analysis layer, jinja2)."""
    import subprocess
    import sys

    code = (
        "import sys; from tokviz.__main__ import main; "
        f"status = main(['train', {str(corpus_dir)!r}, '-o', {str(tmp_path / 'mine')!r}, '--vocab-size', '300']); "
        "extra = sorted(m for m in sys.modules if m.startswith(('tokviz.analysis', 'tokviz.gui', 'jinja2', "
        "'PySide6', 'tokviz.cli.chat', 'tokviz.cli.stats'))); "
        "print(status, extra)"
    )
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert done.stdout.split("\n")[0] == "0 []"
    assert (tmp_path / "mine.tiktoken").is_file()


def test_every_command_is_in_the_full_parser():
    from tokviz.cli import COMMANDS

    help_text = build_parser().format_help()
    assert all(name in help_text for name in (*COMMANDS, "gui"))
    assert build_parser("train").parse_args(["train", "-o", "x", "--vocab-size", "300"]).command == "train"


def test_the_scheduler_variable_is_the_clusters_and_costs_no_import_unset(monkeypatch):
    import subprocess
    import sys

    from tokviz.cli import train as train_cli
    from tokviz.core import cluster

    assert train_cli.SCHEDULER_ENV == cluster.SCHEDULER_ENV
    monkeypatch.setenv(cluster.SCHEDULER_ENV, " local:2 ")
    assert train_cli._scheduler(None) == "local:2" and train_cli._scheduler("tcp://h:1") == "tcp://h:1"
    monkeypatch.delenv(cluster.SCHEDULER_ENV)
    code = ("import sys; from tokviz.cli import train; assert train._scheduler(None) is None; "
            "assert 'tokviz.core.cluster' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
