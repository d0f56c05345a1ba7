"""The docs cannot fall behind the code: every subcommand of ``rfid-table`` has its section in docs/cli.md and
every option its mention there; every page of docs/ has its line in docs/index.md; and the examples the pages
open with (the betting engine, a subscriber's validator, the floor's commands, a table's file, check-config's
output) run as printed."""

import argparse
import json
import re
import shlex
from pathlib import Path

import pytest

from rfid_table.cli import build_parser
from rfid_table.devtools import soak
from rfid_table.ops import broker_setup
from rfid_table.ops.command import build_command
from rfid_table.room import cli as room_cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CLI_DOC = (DOCS / "cli.md").read_text(encoding="utf-8")

# Some commands parse their own options (the main parser passes them the rest of the line).
OWN_PARSERS = {"broker-setup": broker_setup.build_parser, "soak": soak.build_parser, "room": room_cli.build_parser}


def subcommands() -> dict[str, argparse.ArgumentParser]:
    [action] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return {name: OWN_PARSERS[name]() if name in OWN_PARSERS else parser for name, parser in action.choices.items()}


def options(parser: argparse.ArgumentParser) -> list[str]:
    """The parser's long options, and the positional arguments by their metavar or name; a command with
    subcommands of its own (``room export``) adds each one's name and options."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                found += [name, *options(subparser)]
        elif action.option_strings:
            found += [s for s in action.option_strings if s.startswith("--")]
        elif action.nargs != argparse.REMAINDER:
            found.append(action.metavar or action.dest.upper())
    return found


def mentions(text: str, option: str) -> bool:
    """Whether ``option`` is in ``text`` as a word of its own (``--password`` is not in ``--password-file``)."""
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


def section(name: str) -> str:
    """The text of the ``## name`` section of docs/cli.md, up to the next section."""
    match = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", CLI_DOC, re.M | re.S)
    assert match, f"docs/cli.md has no section '## {name}'"
    return match.group(1)


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_subcommand_has_a_section_naming_each_of_its_options(name):
    text = section(name)
    assert re.search(rf"^rfid-table {re.escape(name)}\b", text, re.M), f"{name}: no synopsis line"
    missing = [option for option in options(subcommands()[name]) if not mentions(text, option)]
    assert not missing, f"docs/cli.md, section {name}, does not mention {missing}"


def test_the_options_of_every_command_are_in_the_common_section():
    text = section("Common to every command")
    own = [option for action in build_parser()._actions if not isinstance(action, argparse._HelpAction)
           for option in action.option_strings if option.startswith("--")]
    assert own
    missing = [option for option in own if not mentions(text, option)]
    assert not missing, missing


def test_every_page_of_the_docs_is_in_the_index():
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([a-z0-9_-]+\.md)(?:#[^)]*)?\)", index))
    pages = {path.name for path in DOCS.glob("*.md")} - {"index.md"}
    assert not pages - linked, f"docs/index.md does not list {sorted(pages - linked)}"
    assert not linked - pages, f"docs/index.md links to pages that do not exist: {sorted(linked - pages)}"


def test_the_betting_engines_example_runs_and_reads_as_it_says():
    """docs/betting.md opens with a hand on the engine; it runs as printed, and its comments say what it returns."""
    text = (DOCS / "betting.md").read_text(encoding="utf-8")
    [example] = re.findall(r"## Using it\n\n```python\n(.*?)```", text, re.S)
    scope: dict = {}
    exec(compile(example, "docs/betting.md", "exec"), scope)
    call = scope["r"].actions[0]
    assert (call.seat, call.kind, call.to_amount, call.added, call.returned) == (3, "call", 100, 100, 400)
    assert "TDA 44" in call.rules
    assert scope["ruling"].collection.returned == {6: 300}


def test_the_schemas_python_validator_runs_and_finds_a_hole_card_on_the_public_feed(monkeypatch):
    """docs/schemas.md's validator for a subscriber, run as printed from the repository's root."""
    text = (DOCS / "schemas.md").read_text(encoding="utf-8")
    [example] = re.findall(r"### Python\n.*?```python\n(.*?)```", text, re.S)
    monkeypatch.chdir(ROOT)
    scope: dict = {}
    exec(compile(example, "docs/schemas.md", "exec"), scope)
    dealt = {"seq": 2, "type": "card_dealt", "t": 1795976001.3, "hand": 7, "epoch": "9f3c1a7e52d04b68", "seat": 3,
             "count": 1}
    topic = "rfid-table/main-1/public/events"
    assert scope["problems"](topic, json.dumps(dealt).encode()) == []
    assert scope["problems"](topic, json.dumps({**dealt, "card": "4h"}).encode()) == [
        "$: False schema does not allow '4h'"]
    assert scope["problems"]("rfid-table/main-1/status", b"online") == []


def test_every_command_line_of_the_floors_reference_is_one_the_table_takes():
    """docs/floor.md's one-liners, built as `rfid-table command` builds them: typed from the command schema and
    checked against it, as the table checks them."""
    text = (DOCS / "floor.md").read_text(encoding="utf-8")
    usual = re.search(r"^## The usual commands\n(.*?)(?=^## |\Z)", text, re.M | re.S).group(1)
    lines = [line for row in re.findall(r"^\| [^|]+ \| (.+) \|$", usual, re.M)[1:]
             for line in re.findall(r"`([^`]+)`", row)]
    assert len(lines) >= 10
    for line in lines:
        name, *pairs = shlex.split(line)
        body = build_command(name, pairs, role="floor")  # raises UsageError, naming the field, for a bad one
        assert body["command"] == name


def test_the_check_config_examples_print_what_the_page_shows(capsys, monkeypatch):
    """Each `$ rfid-table check-config config/...` of docs/cli.md, run from the repository's root on the shipped
    file it names: the output is the page's, line for line."""
    from rfid_table.cli import main  # noqa: PLC0415

    monkeypatch.chdir(ROOT)
    examples = re.findall(r"^\$ rfid-table check-config (config/\S+)\n(.*?)(?=^\$ |^```)", CLI_DOC, re.M | re.S)
    assert len(examples) >= 2
    for path, shown in examples:
        assert main(["check-config", path]) == 0
        assert capsys.readouterr().out == shown, path


def test_the_configuration_pages_example_is_a_table_file_but_for_what_it_leaves_out(tmp_path):
    """docs/configuration.md's example, checked as check-config checks a file: its only problems are the seats'
    card zones and the deck's cards that its `# ...` lines leave out. A key renamed in the code shows here."""
    from rfid_table.config.table import ConfigError, load_config  # noqa: PLC0415

    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    example = tmp_path / "main-1.toml"
    example.write_text(re.findall(r"```toml\n(.*?)```", text, re.S)[0], encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_config(str(example))
    problems = [problem.render(str(example)) for problem in refused.value.problems]
    left_out = [p for p in problems if re.search(r": seat (\d+) has no card zone|: deck has 1 cards, expected 52", p)]
    assert problems == left_out and len(problems) == 10, problems


def heading_anchors(path: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"^#+ (.+)$", text, re.M)}


@pytest.mark.parametrize("page", [ROOT / "README.md", *sorted(DOCS.glob("*.md"))], ids=lambda path: path.name)
def test_every_link_between_the_pages_leads_somewhere(page):
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    broken = []
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", link):
            continue  # a web address
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(f"{link}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in heading_anchors(path):
            broken.append(f"{link}: no such heading")
    assert not broken, broken
