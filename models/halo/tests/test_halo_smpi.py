"""halo model, SMPI-equivalent mode against SMPI running the real MPI halo program (small cases)."""

import importlib.util
import os
import pathlib
import shutil

import pytest

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ["SIMCORE_BIN"]).resolve().parents[1]
spec = importlib.util.spec_from_file_location("compare_smpi", HERE.parent / "validation" / "compare_smpi.py")
compare_smpi = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_smpi)

needs_smpi = pytest.mark.skipif(shutil.which("smpirun") is None or not (BUILD / "bin" / "halo_mpi_smpi").exists(),
                                reason="smpirun or the smpicxx build of the MPI halo program is missing")


@needs_smpi
@pytest.mark.parametrize("case", compare_smpi.SMALL, ids=lambda c: "%s-%dr-%dpn-%d^3-%dv-%dpt%s" % (c[0][:5], *c[2:7], "" if c[7] else "-unbundled"))
def test_smpi_mode_equals_smpi(case):
    """Every message with SMPI's envelope, detached below SMPI's threshold, on SMPI's network
    model: the same communication time as SMPI to the last printed digit (before the envelope
    was counted, unbundled small messages were 1.5 to 10.3 % short)."""
    smpi, equivalent, detailed = compare_smpi.compare(case, BUILD)
    assert equivalent == pytest.approx(smpi, rel=1e-9)
    assert detailed > 0


# A law with thresholds where the cases' messages are: 8 B corners, 128 B edges (above 127),
# 512 B and 2,048 B faces (above 2,047); 8, 32 and 128 B in the third case.
SMPI_OIS = "0:1e-7:0;127:3e-7:1e-10;2047:1e-6:0"


@needs_smpi
@pytest.mark.parametrize("case", [("small_cluster.xml", "c-", 2, 1, 8, 5, 7, False),
                                  ("small_cluster.xml", "c-", 8, 4, 16, 8, 27, False),
                                  ("small_cluster.xml", "c-", 16, 2, 4, 10, 27, False)],
                         ids=["2r-7pt", "8r-27pt-lanes", "16r-27pt"])
def test_smpi_mode_with_smpi_ois_equals_smpi(case):
    """SMPI's MPI_Isend sleeps smpi/ois before each message: started together (no barrier,
    whose own messages sleep too and let the ranks out apart: 5 to 24 % more there), SMPI
    mode with the same law gives SMPI's time, by the law's reading at every threshold, with
    208 messages a rank handed to lanes in the second case. The law costs the first case
    1.8 x its time without it."""
    smpi, equivalent, _ = compare_smpi.compare(case, BUILD, barrier=False, ois=SMPI_OIS)
    assert equivalent == pytest.approx(smpi, rel=1e-9)
    without = compare_smpi.model_time(BUILD, *case, 3, True)
    assert equivalent > 1.5 * without


@needs_smpi
@pytest.mark.parametrize("overlap", [False, True])
def test_smpi_mode_with_smpi_ois_and_computation_equals_smpi(overlap):
    """With overlap the MPI program computes its interior once its sends are posted, after
    the sleeps before them: so does SMPI mode (it computed it during the sleeps: 1.497 ms an
    iteration where SMPI took 1.924, 22 % short).
    2 ranks, 8^3 cells, periodic (six faces a rank, four to itself), 5 variables unbundled: 30
    sends, 30 us before each; 10^5 flops a cell at 50 Gflop/s."""
    case = ("small_cluster.xml", "c-", 2, 1, 8, 5, 7, False)
    smpi = compare_smpi.smpi_run(BUILD, *case, 3, barrier=False, flops_per_cell=1e5, overlap=overlap, ois="0:30e-6:0")
    model = compare_smpi.model_run(BUILD, *case, 3, True, flops_per_cell=1e5, overlap=overlap, ois="0:30e-6:0")
    assert model["iteration_time"] == pytest.approx(smpi["iteration_time_max"], rel=1e-9)
    if overlap:  # the sleeps, then the interior (6^3 cells), then the rest (8^3 - 6^3 cells)
        assert model["iteration_time"] == pytest.approx(30 * 30e-6 + 512 * 1e5 / 50e9, rel=1e-9)


@needs_smpi
def test_mpi_program_refuses_a_grid_that_does_not_match(tmp_path):
    import subprocess

    (tmp_path / "hosts").write_text("c-0\nc-1\n")
    res = subprocess.run(["smpirun", "-np", "2", "-platform", str(compare_smpi.ROOT / "platforms" / "small_cluster.xml"),
                          "-hostfile", str(tmp_path / "hosts"), "--log=root.thres:critical",
                          str(BUILD / "bin" / "halo_mpi_smpi"), "--procs", "2,2,1"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode != 0
    assert "the process grid holds 4 ranks, not 2" in res.stderr + res.stdout


NATIVE = BUILD / "bin" / "halo_mpi"


@pytest.mark.skipif(shutil.which("mpirun") is None or not NATIVE.exists(), reason="no native MPI build (mpicxx)")
def test_native_mpi_program_runs_with_the_model_decomposition():
    import json
    import subprocess

    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    res = subprocess.run(["mpirun", "--oversubscribe", "-np", "4", str(NATIVE), "--local", "8,8,8", "--iterations",
                          "3", "--stencil", "27"], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["ranks"] == 4 and out["procs"] == [2, 2, 1]  # MPI_Dims_create, as the model's balanced grid
    assert len(out["per_iteration_max"]) == 3
    assert 0 < out["communication_time_mean"] <= out["communication_time_max"]


@needs_smpi
def test_smpi_mode_equals_smpi_once_ranks_start_together():
    """216 ranks on the fat tree, 8 a node, 27-point: after SMPI's MPI_Barrier the ranks start
    their iterations at different times, the model starts them together, and the flows that
    contend then differ (0.69 % apart). Started together (no barrier, no warm-up), SMPI mode
    is SMPI's time again."""
    case = next(c for c in compare_smpi.CASES if c[0] == "fat_tree.xml" and c[2] == 216)
    apart = compare_smpi.compare(case, BUILD)
    assert abs(apart[1] - apart[0]) > 1e-3 * apart[0]
    together = compare_smpi.compare(case, BUILD, barrier=False)
    assert together[1] == pytest.approx(together[0], rel=1e-9)


@needs_smpi
@pytest.mark.parametrize("case", [("small_cluster.xml", "c-", 8, 1, 32, 5, 7, True),
                                  ("small_cluster.xml", "c-", 8, 4, 16, 8, 27, False)], ids=["7pt", "27pt-unbundled"])
@pytest.mark.parametrize("flops_per_cell, overlap", [(10, False), (1000, True)], ids=["compute-first", "overlap"])
def test_smpi_mode_iteration_with_computation_equals_smpi(case, flops_per_cell, overlap):
    """The MPI program computes under SMPI (smpi_execute_flops at the host's 50 Gflop/s): all
    of it before the exchange, or the interior during it and the cells within the halo width
    of a face after it. Its time per iteration (ranks started together) is SMPI mode's, and
    in closed form: the exchange then all cells' flops, or the interior hiding the exchange."""
    smpi = compare_smpi.smpi_run(BUILD, *case, 3, barrier=False, flops_per_cell=flops_per_cell, overlap=overlap)
    model = compare_smpi.model_run(BUILD, *case, 3, True, flops_per_cell=flops_per_cell, overlap=overlap)
    assert model["iteration_time"] == pytest.approx(smpi["iteration_time_max"], rel=1e-9)
    local = case[4]
    compute = local ** 3 * flops_per_cell / 50e9
    if overlap:
        interior = (local - 2) ** 3 * flops_per_cell / 50e9
        assert interior > model["communication_time_slowest"]  # the exchange is hidden
        assert model["iteration_time"] == pytest.approx(compute, rel=1e-12)
    else:
        assert model["iteration_time"] == pytest.approx(model["communication_time_slowest"] + compute, rel=1e-12)
