"""docs/controller.md's example runs as the page shows it: a card read at a table, the record the parts read and the
wire form subscribers see."""

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "controller.md"


def test_the_pages_python_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert blocks, "the page opens with an example"
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), {})  # each block asserts what it shows
