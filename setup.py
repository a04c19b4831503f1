"""The one compiled part: the BPE merge loop (`tokviz/training/_merge.c`); everything else is in
pyproject.toml. Optional: where no C compiler or Python headers are found the build goes on
without it, and `tokviz.training.bpe` runs its own Python loop (the same merges, slower)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tokviz.training._merge",
            ["tokviz/training/_merge.c"],
            optional=True,
        )
    ]
)
