"""The README's Python examples, read from the README itself and run as printed."""

from __future__ import annotations

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[3] / "README.md"


def python_examples() -> list[str]:
    """The ```python blocks of the README's "From Python" section, in order."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_readme_has_a_numpy_a_scikit_learn_and_a_spectra_example():
    examples = python_examples()
    assert len(examples) == 3
    assert "import ndgpu" in examples[0]
    assert "from ndgpu.cluster import KMeans" in examples[1]
    assert "from ndgpu.decomposition import PCA" in examples[2]


def test_numpy_example():
    exec(compile(python_examples()[0], "README.md (NumPy)", "exec"), {})


def test_sklearn_example():
    exec(compile(python_examples()[1], "README.md (scikit-learn)", "exec"), {})


def test_spectra_example():
    exec(compile(python_examples()[2], "README.md (spectra and PCA)", "exec"), {})
