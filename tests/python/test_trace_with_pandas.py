"""trace.h5 needs no custom reader: h5py and pandas read its tables as they are."""

import h5py
import numpy as np
import pandas as pd

import simcore

from conftest import STAR_SCENARIO


def test_pandas_reads_a_table_straight_from_h5py(tmp_path):
    res = simcore.load(STAR_SCENARIO).with_params(tasks=30, workers=4).run(out=tmp_path / "run")
    with h5py.File(tmp_path / "run" / "trace.h5", "r") as f:
        df = pd.DataFrame(f["tasks"][()])
        units = {c: f["tasks"].attrs["unit:" + c] for c in df.columns}
    assert list(df.columns) == ["task", "worker", "flops", "send_start", "send_end", "compute_end"]
    assert len(df) == 30
    assert df["task"].dtype == np.int64 and df["compute_end"].dtype == np.float64
    assert df.groupby("worker").size().tolist() == [8, 8, 7, 7]
    assert df["compute_end"].max() == res.metrics["makespan"]
    assert units["compute_end"] == "s" and units["flops"] == "flop" and units["task"] == ""
    # Result.table() gives the same structured array.
    assert pd.DataFrame(res.table("tasks")).equals(df)
