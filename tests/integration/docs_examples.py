"""Extracts the example blocks of a Markdown guide for test_docs_examples.py."""
import os
import re
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP = re.compile(r"<!--\s*docs-check:\s*skip\s*\((.+?)\)\s*-->")


@dataclass
class Command:
    line: int             # line number in the guide
    text: str             # the command, without "$ "
    shown: list = field(default_factory=list)  # the output lines shown after it
    creates: str = None   # for `cat FILE`: the file's text (the shown output)
    shown_id: str = None  # a job id the shown output names


@dataclass
class Block:
    line: int
    lang: str
    skip: str = ""        # the marker's reason
    commands: list = field(default_factory=list)


def _finish(cmd):
    if cmd is None:
        return
    if cmd.text.startswith("cat ") and cmd.shown:
        cmd.creates = "\n".join(cmd.shown) + "\n"
    elif cmd.shown:
        m = re.fullmatch(r"(?:Submitted batch job )?(\d+)", cmd.shown[-1].strip())
        if m and cmd.text.split()[0] in ("tbatch", "sbatch"):
            cmd.shown_id = m.group(1)


def extract_blocks(path):
    blocks, block, cmd, pending_skip = [], None, None, ""
    with open(path) as f:
        lines = f.read().splitlines()
    for n, raw in enumerate(lines, 1):
        if block is None:
            m = SKIP.search(raw)
            if m:
                pending_skip = m.group(1)
            elif raw.startswith("```"):
                block = Block(line=n, lang=raw[3:].strip(), skip=pending_skip)
                pending_skip = ""
            elif raw.strip():
                pending_skip = pending_skip if raw.lstrip().startswith("<!--") else ""
            continue
        if raw.startswith("```"):
            _finish(cmd)
            blocks.append(block)
            block, cmd = None, None
            continue
        if raw.startswith("$ "):
            _finish(cmd)
            cmd = Command(line=n, text=raw[2:].strip())
            block.commands.append(cmd)
        elif cmd is not None:
            cmd.shown.append(raw)
    return blocks
