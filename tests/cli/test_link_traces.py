"""Link traces. SimGrid 3.32 changes the sharing penalty of the messages crossing a link whose
bandwidth or latency changes, those still in their latency too: under the Lazy optimisation
such a message was lost (the run deadlocked, exit 1, found by the platform fuzzer), under Full
its latency ended at once (a makespan 0.3 s short, below). A bandwidth change touches the
penalty only through network/weight-S (LV08's 20537), a latency change always. So a bandwidth
trace runs under network/weight-S:0 and is refused otherwise, and latency traces are refused."""

import json

import pytest

from cli_tool import refused, simcore

# One master, one worker; 20 tasks of 1 Gflop and 1 MB over a link of 100 ms: the first
# message is in its latency (1.301 s with LV08's factor 13.01) when the trace changes at 1 s.
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">{config}
<zone id="z" routing="Full">
<host id="a" speed="1Gf"/><host id="w" speed="1Gf"/>
<link id="l" bandwidth="50MBps" latency="100ms" {trace}/>
<route src="a" dst="w"><link_ctn id="l"/></route>
</zone>
</platform>
"""
SCENARIO = """<?xml version="1.0"?>
<scenario model="master_worker" seed="1">
  <platform file="p.xml"/>{config}
  <param name="tasks" value="20"/>
  <param name="task_flops" value="1Gf"/>
  <param name="task_bytes" value="1MB"/>
  <param name="workers" value="1"/>
  <param name="master" value="a"/>
</scenario>
"""


def _case(tmp_path, trace="", trace_text="", platform_config="", scenario_config=""):
    (tmp_path / "p.xml").write_text(PLATFORM.format(trace=trace, config=platform_config))
    (tmp_path / "s.xml").write_text(SCENARIO.format(config=scenario_config))
    if trace_text:
        (tmp_path / "trace.txt").write_text(trace_text)
    return tmp_path / "s.xml"


def _makespan(tmp_path, scenario, *args):
    out = tmp_path / "out"
    res = simcore("run", scenario, "--out", out, "--quiet", *args, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    return json.loads((out / "summary.json").read_text())["metrics"]["makespan"]


def test_a_bandwidth_trace_under_weight_s_is_refused_at_its_link(tmp_path):
    scenario = _case(tmp_path, 'bandwidth_file="trace.txt"', "0 5e7\n1 5e7\n")
    for args in (["run", scenario, "--out", tmp_path / "out"], ["validate", scenario], ["platform", tmp_path / "p.xml"]):
        err = refused(*args, cwd=tmp_path)
        assert f"{tmp_path / 'p.xml'}:6: <link bandwidth_file=...> under network/weight-S 20537 (the network model's " \
               "default): SimGrid 3.32 loses a message crossing the link when its bandwidth changes during the " \
               "message's latency" in err, err
        assert "expected network/weight-S:0 (a <config> item or --cfg), or no bandwidth trace" in err
    assert not (tmp_path / "out").exists()
    err = refused("run", scenario, "--cfg=network/weight-S:100", cwd=tmp_path)
    assert "under network/weight-S 100: SimGrid 3.32" in err, err


@pytest.mark.parametrize("where", ["--cfg", "scenario", "platform"])
def test_under_weight_s_0_a_trace_that_changes_nothing_changes_no_result(tmp_path, where):
    cfg = '\n  <config name="network/weight-S" value="0"/>' if where == "scenario" else ""
    pcfg = '\n<config><prop id="network/weight-S" value="0"/></config>' if where == "platform" else ""
    args = ["--cfg=network/weight-S:0"] if where == "--cfg" else []
    plain = _makespan(tmp_path, _case(tmp_path, platform_config=pcfg, scenario_config=cfg), *args)
    unchanged = _makespan(tmp_path, _case(tmp_path, 'bandwidth_file="trace.txt"', "0 5e7\n1 5e7\n", pcfg, cfg), *args)
    assert unchanged == plain == pytest.approx(47.00317, abs=1e-5)
    # 500 kB/s from 1 s on (below the TCP window's bound of about 1.6 MB/s): slower, by less than
    # twice every byte at that rate.
    slow = _makespan(tmp_path, _case(tmp_path, 'bandwidth_file="trace.txt"', "0 5e7\n1 5e5\n", pcfg, cfg), *args)
    assert plain + 10 < slow < plain + 2 * 20 * 1e6 / (0.97 * 5e5)


def test_a_latency_trace_is_refused(tmp_path):
    scenario = _case(tmp_path, 'latency_file="trace.txt"', "0 0.1\n1 0.1\n")
    err = refused("run", scenario, "--cfg=network/weight-S:0", cwd=tmp_path)
    assert f"{tmp_path / 'p.xml'}:6: <link latency_file=\"trace.txt\">: SimGrid 3.32 loses a message crossing the " \
           "link when its latency changes during the message's latency" in err, err
    assert "expected no latency trace" in err
