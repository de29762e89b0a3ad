"""--max-memory: a run past its memory limit ends with exit code 2, a message that names the
scenario, the memory and the limit, and no result file; under it, results are those of a run
without a limit. Loop counts at their maxima need tens of GB (a fuzzing campaign, stop 44): the
system killed such runs, or the machine swapped."""

import json

import pytest

from cli_tool import SOURCE_DIR, refused, simcore

STAR = SOURCE_DIR / "scenarios" / "master_worker" / "star.xml"
# 2e7 tasks take about 320 MiB before the first one is sent (0.2 s).
MANY_TASKS = "tasks=20000000"


def result_files(out):
    return sorted(p.name for p in out.iterdir()) if out.exists() else []


def test_a_run_past_its_limit_ends_with_a_message_and_no_result(tmp_path):
    out = tmp_path / "out"
    err = refused("run", STAR, "--set", MANY_TASKS, "--max-memory", "200MB", "--out", out, cwd=tmp_path)
    assert err.startswith(f"simcore: error: {STAR}: the run took "), err
    assert " of memory, past its limit of 191 MiB (set by --max-memory); expected a smaller scenario" in err, err
    assert "--max-memory SIZE" in err and err.count("\n") == 1, err
    assert result_files(out) == []


def test_an_earlier_result_is_removed_or_kept_whole_never_mixed(tmp_path):
    out = tmp_path / "out"
    assert simcore("run", STAR, "--out", out, "--quiet", cwd=tmp_path).returncode == 0
    before = (out / "summary.json").read_bytes()
    refused("run", STAR, "--set", MANY_TASKS, "--max-memory", "200MB", "--out", out, cwd=tmp_path)
    files = result_files(out)
    assert not [f for f in files if ".tmp." in f], files
    if "summary.json" in files:  # ended before the run began: the earlier result, whole
        assert (out / "summary.json").read_bytes() == before
        assert "trace.h5" in files


def test_validate_is_watched_too(tmp_path):
    err = refused("validate", STAR, "--max-memory", "1MiB", cwd=tmp_path)
    assert "past its limit of 1 MiB (set by --max-memory)" in err, err


def test_under_the_limit_or_without_one_the_results_are_the_same(tmp_path):
    summaries = {}
    for name, limit in [("default", []), ("none", ["--max-memory", "none"]), ("4GiB", ["--max-memory=4GiB"])]:
        out = tmp_path / name
        res = simcore("run", STAR, "--out", out, "--quiet", *limit, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        summaries[name] = json.loads((out / "summary.json").read_text())
    assert summaries["none"]["memory_limit_bytes"] is None
    assert summaries["4GiB"]["memory_limit_bytes"] == 4 * 2**30
    # The default: 90 % of what was available, above what the run took.
    assert summaries["default"]["memory_limit_bytes"] > summaries["default"]["peak_memory_bytes"]
    metrics = [s["metrics"] for s in summaries.values()]
    assert metrics[0] == metrics[1] == metrics[2]
    assert (tmp_path / "none" / "trace.h5").read_bytes() == (tmp_path / "4GiB" / "trace.h5").read_bytes()


@pytest.mark.parametrize("value, expected", [
    ("0", "--max-memory 0: a limit of 0 B; expected a size from 1MiB to 8EiB"),
    ("512KiB", "--max-memory 512KiB: a limit of 524.3 kB; expected a size from 1MiB"),
    ("-2GB", "--max-memory -2GB: a limit of -2 GB; expected"),
    ("1e30", "expected a size from 1MiB to 8EiB"),
    ("lots", "--max-memory lots: 'lots' is not valid"),
    ("", "--max-memory : '' is not valid"),
])
def test_limits_that_are_no_size_are_refused(tmp_path, value, expected):
    for command in ("run", "validate"):
        err = refused(command, STAR, f"--max-memory={value}", cwd=tmp_path)
        assert expected in err, err
    assert not (tmp_path / "results").exists()
