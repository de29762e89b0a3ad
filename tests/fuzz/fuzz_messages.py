"""What the fuzzers share: SimGrid's notes on stderr, and error messages with their particulars
masked so that one problem found in many cases is reported once."""

import re

# SimGrid's own notes and warnings ("[0.000000] file:line: [parse/WARNING] Deprecated unit-less
# value ..."): they say something true about the input and are allowed on stderr.
SIMGRID_NOTE = re.compile(r"^\[[0-9.]+\] (\S+:\d+: )?\[[A-Za-z0-9_]+/(WARNING|INFO)\] ")


def mask(text):
    """Times and sources of SimGrid's lines, quoted names, paths and addresses replaced by
    placeholders (numbers are left to the caller)."""
    text = re.sub(r"\[[0-9.]+\] \S+:\d+: ", "[T] SRC: ", text)
    text = re.sub(r"`[^']*'", "`<S>'", text)
    text = re.sub(r"'[^']*'", "'<S>'", text)
    text = re.sub(r'"[^"]*"', '"<S>"', text)
    text = re.sub(r"(/[\w.+\-]+)+/?", "<PATH>", text)
    return re.sub(r"\b0x[0-9a-fA-F]+\b", "<ADDR>", text)
