"""What the fuzzers share: SimGrid's notes on stderr, and error messages with their particulars
masked so that one problem found in many cases is reported once."""

import argparse
import os
import re
import signal
import subprocess
import time

# SimGrid's own notes and warnings ("[0.000000] file:line: [parse/WARNING] Deprecated unit-less
# value ..."): they say something true about the input and are allowed on stderr.
# An actor's note names it first: "[ft-1:analysis-15:(1016) 0.000000] [s4u_actor/INFO] ...".
# SimGrid's account of a deadlock ("[ker_engine/CRITICAL] Oops! Deadlock detected", then the
# actors still waiting) comes before simcore's refusal of a run that deadlocked for a cause of
# the input's (the Constant network model's rounding) and says which messages were left.
SIMGRID_NOTE = re.compile(r"^\[([^\]\s]+ )?[0-9.]+\] (\S+:\d+: )?\[([A-Za-z0-9_]+/(WARNING|INFO)|ker_engine/CRITICAL)\] ")


def mask(text):
    """Times and sources of SimGrid's lines, quoted names, paths and addresses replaced by
    placeholders (numbers are left to the caller)."""
    text = re.sub(r"\[[0-9.]+\] \S+:\d+: ", "[T] SRC: ", text)
    text = re.sub(r"`[^']*'", "`<S>'", text)
    text = re.sub(r"'[^']*'", "'<S>'", text)
    text = re.sub(r'"[^"]*"', '"<S>"', text)
    text = re.sub(r"(/[\w.+\-]+)+/?", "<PATH>", text)
    return re.sub(r"\b0x[0-9a-fA-F]+\b", "<ADDR>", text)


def error_lines(stderr):
    """stderr's lines without SimGrid's notes (nor the lines a note goes on over)."""
    lines, in_note = [], False
    for line in stderr.splitlines():
        if SIMGRID_NOTE.match(line):
            in_note = True
        elif line.startswith("[") or line.startswith("simcore:"):
            in_note = False
        if line.strip() and not in_note:
            lines.append(line)
    return lines


def failure_class(res):
    """(class, lines) for a run `res` (its "rc" and "stderr"): the class the exit code and
    stderr settle whatever the tool: "signal", "exit1", "other" (an exit code simcore never
    gives), "noise" (exit 2 with other than one line); or None for exit 0, or exit 2 with one
    line, which the caller looks at. `lines`: stderr without SimGrid's notes."""
    lines = error_lines(res["stderr"])
    return _settled(res["rc"], lines), lines


def _settled(rc, lines):
    if rc < 0 or rc >= 128:
        return "signal"
    if rc == 0:
        return None
    if rc == 1:
        return "exit1"
    if rc != 2:
        return "other"
    return "noise" if len(lines) != 1 else None


def run_command(cmd, cwd, timeout, stdout=True, env=None, live=None):
    """Runs `cmd` in its own process group (a timeout kills the group: simcore's route-check
    child too). Returns {"cmd", "rc", "stdout" (where asked), "stderr", "timeout", "seconds"}.
    `live`: a (set, lock) pair that holds the process while it runs, for the caller to kill
    on Ctrl-C."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE if stdout else subprocess.DEVNULL,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True, env=env)
    if live:
        with live[1]:
            live[0].add(proc)
    try:
        try:
            out, err = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = proc.communicate()
            timed_out = True
    finally:
        if live:
            with live[1]:
                live[0].discard(proc)
    res = {"cmd": cmd, "rc": proc.returncode, "stderr": err[:65536].decode("utf-8", "replace"),
           "timeout": timed_out, "seconds": time.monotonic() - t0}
    if stdout:
        res["stdout"] = out.decode("utf-8", "replace")
    return res


def signal_name(rc):
    sig = -rc if rc < 0 else rc - 128
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def sh_quote(s):
    if s and re.fullmatch(r"[\w./=:,+@%-]+", s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


def fuzzer_parser(doc, cases, timeout, keep_help, seeds_help):
    """A parser with the common options and --source (the repository, whose files `seeds_help`
    names are the seeds), described by the first paragraph of the tool's `doc`."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    add_common_arguments(ap, cases, timeout, keep_help)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--source", default=os.path.normpath(os.path.join(here, "..", "..")),
                    help=f"the repository (its {seeds_help} are the seeds)")
    return ap


def add_common_arguments(ap, cases, timeout, keep_help):
    """The options every fuzzer takes: --bin, --cases, --seed, --jobs, --timeout, --keep, --quiet."""
    ap.add_argument("--bin", default=os.environ.get("SIMCORE_BIN"), help="simcore binary (default: $SIMCORE_BIN)")
    ap.add_argument("--cases", type=int, default=cases)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=timeout, help="seconds per command")
    ap.add_argument("--keep", help=keep_help)
    ap.add_argument("--quiet", action="store_true", help="no progress lines")


def stages_report(stages, cwd):
    """The text a kept case's .txt gives for its stages: (stage, class, run_command's result)."""
    text = ""
    for stage, cls, r in stages:
        text += (f"\n[{stage}] class {cls}, exit code {r['rc']}, {r['seconds']:.1f} s"
                 f"{' (timed out)' if r['timeout'] else ''}\ncwd: {cwd}\ncommand: "
                 + " ".join(sh_quote(str(c)) for c in r["cmd"]) + "\nstderr:\n" + r["stderr"][:20000] + "\n")
    return text


def stage_summaries(stages, key):
    """What a case's result keeps of its stages: (stage, class, {rc, stderr, seconds, key}),
    `key(result, class)` being the normalised message that groups flagged runs (or None)."""
    return [(s, c, {"rc": r["rc"], "stderr": r["stderr"], "seconds": r["seconds"], "key": key(r, c)})
            for s, c, r in stages]


def flagged_key(res, cls, unmask=lambda text: text):
    """The message that groups runs flagged `cls`: stderr's first two lines (the last two of a
    crash), `unmask` applied (a tool's own particulars), then names, files and numbers masked."""
    lines = [l for l in res["stderr"].splitlines() if l.strip()]
    text = unmask(" | ".join(lines[-2:] if cls in ("signal", "exit1") else lines[:2]))
    text = mask(text)
    text = re.sub(r"\b[\w\-]+\.(xml|swf|json|dat|h5|csv|paje)\b", "<FILE>", text)
    text = re.sub(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?", "<N>", text)
    if cls == "signal":
        text = signal_name(res["rc"]) + ": " + text
    return f"{cls}: " + text[:240]
