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


# --- what a model is sure to need: refused before the run --------------------------------

DTL = SOURCE_DIR / "scenarios" / "dtl" / "two_streams_three_analyses.xml"
HALO = SOURCE_DIR / "scenarios" / "halo" / "two_ranks_two_nodes.xml"


@pytest.mark.parametrize("scenario, size, limit, what", [
    # 4e6 tasks: 168 MiB once set up, the tasks table 244 MiB more (the run peaks at 413 MiB).
    (STAR, "tasks=4000000", "300MiB", "the tasks table (4000000 tasks x 64 B)"),
    # 1e7 steps: 3.4e9 operations (6.8e6 at 2e4 steps, which peaked at 1.51 GiB beside a need of 1.42 GiB).
    (DTL, "steps=10000000", "64GiB", "3408000000 operations x 216 B and 29000000 transaction rows x 96 B"),
    (HALO, "iterations=10000000", "200MiB", "the iterations table (10000000 iterations x 48 B)"),
])
def test_a_run_sure_to_pass_its_limit_is_refused_before_it_starts(tmp_path, scenario, size, limit, what):
    """A run whose records grow with its steps, tasks or iterations was ended only when it
    passed its limit (minutes in, at 22 GB by default here). What the model is sure to record
    is now counted once it is set up: validate says so, and run refuses it as bad input,
    leaving an earlier result in the folder whole."""
    err = refused("validate", scenario, "--set", size, "--max-memory", limit, cwd=tmp_path)
    assert err.startswith(f"simcore: error: {scenario}: the run needs at least "), err
    assert f" once set up, and " in err and f" for {what}; past its limit of " in err, err
    assert "(set by --max-memory); expected a smaller scenario" in err and err.count("\n") == 1, err
    out = tmp_path / "out"
    assert simcore("run", scenario, "--out", out, "--quiet", cwd=tmp_path).returncode == 0
    before = {name: (out / name).read_bytes() for name in result_files(out)}
    err = refused("run", scenario, "--set", size, "--max-memory", limit, "--out", out, cwd=tmp_path)
    # The same message, but for the memory taken once set up, which moves by a MiB from run to run.
    assert err.startswith(f"simcore: error: {scenario}: the run needs at least "), err
    assert f" for {what}; past its limit of " in err and err.count("\n") == 1, err
    assert {name: (out / name).read_bytes() for name in result_files(out)} == before


@pytest.mark.parametrize("scenario, size", [
    (STAR, "tasks=2000000"),
    (DTL, "steps=1000"),
    (HALO, "iterations=300000"),
])
def test_what_a_model_is_sure_to_need_is_a_lower_bound_of_what_its_run_takes(tmp_path, scenario, size):
    """summary.json says what the run took once set up and what its model counted it would
    need beyond that; the run's peak is at least their sum (5 % left to the allocator, which
    may hand back freed memory the count assumed still held)."""
    out = tmp_path / "out"
    res = simcore("run", scenario, "--set", size, "--out", out, "--quiet", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    s = json.loads((out / "summary.json").read_text())
    need = s["memory_need"]["bytes"]
    assert need > 8 * 2**20, s["memory_need"]  # large enough to tell
    assert s["peak_memory_bytes"] >= s["set_up_memory_bytes"] + 0.95 * need, (s["peak_memory_bytes"], s["set_up_memory_bytes"], s["memory_need"])
