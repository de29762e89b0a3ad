"""Room on disk for the result files, checked before the run: a run whose trace.h5 and CSV
tables are sure not to fit is refused at once (exit 2), not when it ends. Each model declares
its tables' rows and columns (Model::table_sizes); summary.json gives them with the bytes
counted (`disk_need`)."""

import json
import pathlib
import sys

import pytest

from cli_tool import BIN, SOURCE_DIR, simcore

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "support"))
from small_disk import run_on_small_disk  # noqa: E402

STAR = SOURCE_DIR / "scenarios" / "master_worker" / "star.xml"


def with_csv(tmp_path, scenario):
    """A copy of a shipped scenario that writes its tables as CSV too, its paths made absolute."""
    text = scenario.read_text().replace('file="../../', f'file="{SOURCE_DIR}/').replace(
        'value="../../', f'value="{SOURCE_DIR}/').replace('value="data/', f'value="{scenario.parent}/data/')
    if "<output" in text:
        assert 'csv="true"' in text, "a shipped <output> without CSV: give it csv=\"true\" here"
    else:
        text = text.replace("</scenario>", '  <output csv="true"/>\n</scenario>')
    path = tmp_path / f"{scenario.stem}_csv.xml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("scenario", ["master_worker/star.xml", "halo/two_ranks_one_node.xml",
                                      "dtl/insitu_1000x250.xml", "dtl/two_streams_three_analyses.xml",
                                      "batch/hpc2n_easy.xml"])
def test_each_model_declares_its_tables_and_the_need_is_a_lower_bound(tmp_path, scenario):
    """The declared tables are the written ones (the same columns, at most their rows), and the
    bytes counted are at most the files' sizes: a need past a disk's room is a sure refusal."""
    out = tmp_path / "out"
    res = simcore("run", with_csv(tmp_path, SOURCE_DIR / "scenarios" / scenario), "--out", out, "--quiet",
                  cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    summary = json.loads((out / "summary.json").read_text())
    need = summary["disk_need"]
    declared = {t["name"]: t for t in need["tables"]}
    assert declared, "the model declares no table"
    for name, t in declared.items():
        written = summary["tables"][name]
        assert t["columns"] == len(written["columns"]), name
        assert 0 < t["rows"] <= written["rows"], name
    trace_data = sum(8 * t["rows"] * t["columns"] for t in declared.values())
    csv_data = sum(2 * t["rows"] * t["columns"] for t in declared.values())
    assert need["bytes"] == trace_data + csv_data
    trace = (out / "trace.h5").stat().st_size
    csv = sum((out / f"{name}.csv").stat().st_size for name in declared)
    assert trace_data <= trace and csv_data <= csv
    # The trace's count is close: its values, without HDF5's own records.
    assert trace_data >= 0.5 * trace or trace < 64 * 1024


def test_a_run_whose_results_cannot_fit_is_refused_before_it_starts(tmp_path):
    """1e6 tasks make 48 MB of trace and 57 MB counted with the CSV tables; the disk holds 1 MiB.
    The run took 10 s and then failed while writing."""
    scenario = with_csv(tmp_path, STAR)
    res, left = run_on_small_disk(tmp_path, "1m", [BIN, "run", scenario, "--set", "tasks=1000000",
                                                   "--out", "{disk}/out", "--quiet"], cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    err = res.stderr.strip()
    assert err.startswith("simcore: error: ") and (
        "/disk/out: the results need at least 57 MiB (60000480 B) on disk (trace.h5 at 8 B a value: tasks 1000000 "
        "rows x 6 columns, workers 16 rows x 3 columns; the CSV tables at 2 B a value: tasks 1000000 rows x 6 "
        "columns, workers 16 rows x 3 columns), and the output folder's file system has 1 MiB (1048576 B) free; "
        "expected a folder with room for them") in err, err
    assert left == []


def test_validate_refuses_it_too_and_an_earlier_result_stays_whole(tmp_path):
    """The scenario's own <output dir> on the small disk: validate refuses at its line; a run
    that fits writes its result, and a run that would not fit leaves that result as it was."""
    disk = tmp_path / "disk"  # where run_on_small_disk mounts it
    text = with_csv(tmp_path, STAR).read_text().replace('<output csv="true"/>',
                                                        f'<output csv="true" dir="{disk}/out"/>')
    scenario = tmp_path / "on_disk.xml"
    scenario.write_text(text)
    line = next(i for i, l in enumerate(text.splitlines(), 1) if "<output" in l)
    script = ('"$0" validate "$1" --set tasks=1000000; echo "validate=$?"; "$0" run "$1" --quiet; echo "small=$?"; '
              'cp "$2"/out/summary.json "$2"/before.json; "$0" run "$1" --set tasks=1000000 --quiet; '
              'echo "large=$?"; cmp "$2"/out/summary.json "$2"/before.json && echo same')
    res, left = run_on_small_disk(tmp_path, "1m", ["sh", "-c", script, BIN, scenario, "{disk}"], cwd=tmp_path)
    assert "validate=2" in res.stdout and "small=0" in res.stdout and "large=2" in res.stdout, (res.stdout,
                                                                                                res.stderr)
    assert "same" in res.stdout
    errors = res.stderr.strip().splitlines()
    assert len(errors) == 2, errors
    assert all(e.startswith(f"simcore: error: {scenario}:{line} (<output dir=") for e in errors), errors
    assert sorted(left) == ["before.json", "out", "out/summary.json", "out/tasks.csv", "out/trace.h5",
                            "out/workers.csv"]


def test_an_earlier_result_counts_as_room_unless_removing_it_frees_nothing(tmp_path):
    """1,500 KiB hold one trace of 20,000 tasks (0.97 MB), not two. A second run in the same
    folder replaces the first one's files, so it may start and ends well; where the earlier
    trace.h5 is a second link to a file kept beside it, removing it frees nothing, and the run
    is refused before it starts (the check counted it as room)."""
    script = ('"$0" run "$1" --set tasks=20000 --out "$2/out" --quiet; echo "first=$?"; '
              '"$0" run "$1" --set tasks=20000 --out "$2/out" --quiet; echo "again=$?"; '
              'ln "$2/out/trace.h5" "$2/kept.h5"; '
              '"$0" run "$1" --set tasks=20000 --out "$2/out" --quiet; echo "linked=$?"')
    res, left = run_on_small_disk(tmp_path, "1500k", ["sh", "-c", script, BIN, STAR, "{disk}"], cwd=tmp_path)
    assert "first=0" in res.stdout and "again=0" in res.stdout and "linked=2" in res.stdout, (res.stdout,
                                                                                              res.stderr)
    assert "/disk/out: the results need at least 1 MiB (960384 B) on disk (trace.h5 at 8 B a value: tasks 20000 " \
        "rows x 6 columns, workers 16 rows x 3 columns), and the output folder's file system has " in res.stderr, \
        res.stderr
    assert sorted(left) == ["kept.h5", "out", "out/summary.json", "out/trace.h5"]
