"""A profile applied to a simulation: units of the rates models read, settings SimGrid
cannot run with, and rules that shadow others. What cannot be used is refused before the
simulation (exit 2, naming the profile's element); nothing is taken in the wrong unit."""

import json
import subprocess

import pytest

from calibration_test_support import (
    POWERS, ROOT, SIMCORE, fitted, run_halo, two_segment_law, write_synthetic_network)

STAR = ROOT / "scenarios" / "master_worker" / "star.xml"
DTL = ROOT / "scenarios" / "dtl" / "two_streams_three_analyses.xml"
CLUSTER = ROOT / "platforms" / "small_cluster.xml"


def profile(tmp_path, name, body):
    path = tmp_path / (name + ".json")
    path.write_text(json.dumps({"schema": "simcore-profile/1", **body}))
    return path


def simcore(*args, cwd=None):
    return subprocess.run([SIMCORE, *map(str, args)], capture_output=True, text=True, cwd=cwd)


def refused(*args):
    res = simcore(*args)
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    return res.stderr


def two_rank_halo(tmp_path, platform, name, value, **more):
    """A halo scenario of 2 ranks in a row on `platform`, with more parameters."""
    scenario = tmp_path / "halo.xml"
    params = "".join(f'  <param name="{k}" value="{v}"/>\n' for k, v in {name: value, **more}.items())
    scenario.write_text(f"""<?xml version="1.0"?>
<scenario model="halo" seed="1">
  <platform file="{platform}"/>
  <param name="ranks" value="2"/>
  <param name="procs" value="2,1,1"/>
{params}</scenario>
""")
    return scenario


DETAILED = {"ranks_per_node": 2, "local_cells": "1,200,200", "periodic": "false", "variables": 1, "iterations": 1,
            "flops_per_cell": 0, "mode": "detailed"}


def test_a_rate_given_in_gbps_is_the_same_rate_as_in_bps(tmp_path):
    """A number with a SimGrid unit is converted: 10 GBps is 1e10 Bps (it was once taken as
    10 B/s, and a halo exchange then took hours)."""
    gbps = profile(tmp_path, "gbps", {"rates": {"memcpy_bandwidth": {"value": 10, "unit": "GBps"}}})
    bps = profile(tmp_path, "bps", {"rates": {"memcpy_bandwidth": {"value": 1e10, "unit": "Bps"}}})
    slow = profile(tmp_path, "slow", {"rates": {"memcpy_bandwidth": {"value": 5, "unit": "GBps"}}})
    t_gbps = run_halo(tmp_path, "gbps", DETAILED, gbps, metric="communication_time_slowest")
    t_bps = run_halo(tmp_path, "bps", DETAILED, bps, metric="communication_time_slowest")
    t_slow = run_halo(tmp_path, "slow", DETAILED, slow, metric="communication_time_slowest")
    assert t_gbps == t_bps
    assert t_gbps < 1e-3  # a 1.6 MB face at 10 GB/s, not at 10 B/s
    assert t_slow > t_gbps  # the copy bandwidth is what the detailed mode charges


@pytest.mark.parametrize("rates, where, what", [
    ({"rates": {"memcpy_bandwidth": "2us"}}, "(rates.memcpy_bandwidth)", "a rate in s; the model reads it as a bandwidth"),
    ({"rates": {"memcpy_bandwidth": 0}}, "(rates.memcpy_bandwidth)", "value 0.0; the model reads it as a bandwidth"),
    ({"hosts": [{"match": ".*", "rates": {"memcpy_bandwidth": 0}}]}, "(hosts[0].rates.memcpy_bandwidth)",
     "value 0.0; the model reads it as a bandwidth such as 10GBps, 100Mbps, 1.25GBps, which must be positive"),
    ({"rates": {"flops_per_cell": {"value": 30, "unit": "KiB"}}}, "(rates.flops_per_cell)",
     "a rate in B; the model reads it as an amount of work"),
])
def test_a_rate_of_the_wrong_kind_or_zero_is_refused_by_the_models_reading_it(tmp_path, rates, where, what):
    """halo and dtl read memcpy_bandwidth (halo flops_per_cell too): a time, or 0 (which
    deadlocked halo's memory bus and aborted dtl), is refused when the model is set up."""
    prof = profile(tmp_path, "bad", rates)
    scenario = two_rank_halo(tmp_path, ROOT / "platforms" / "single_node.xml", "mode", "detailed")
    err = refused("validate", scenario, "--calibration", prof)
    assert f"{prof}:1 {where}: {what}" in err
    if "memcpy" in where:
        err = refused("validate", DTL, "--calibration", prof)
        assert f"{prof}:1 {where}: {what}" in err


def test_a_host_speed_on_a_host_with_a_speed_profile_is_refused(tmp_path):
    """SimGrid takes one speed profile a host and the kernel applies a calibrated speed as one:
    on a host whose platform gives it a speed_file that aborted the run (exit 134)."""
    (tmp_path / "avail.txt").write_text("0 1.0\n5 0.5\n")
    platform = tmp_path / "platform.xml"
    platform.write_text("""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="node-0" speed="1Gf" core="2"/>
    <host id="node-1" speed="1Gf" core="2"
          speed_file="avail.txt"/>
  </zone>
</platform>
""")
    scenario = two_rank_halo(tmp_path, platform, "hosts", "node-0")
    every = profile(tmp_path, "every", {"hosts": [{"match": "node-.*", "speed": "2Gf"}]})
    for command in (["validate"], ["run", "--out", tmp_path / "out"]):
        err = refused(command[0], scenario, "--calibration", every, *command[1:])
        assert f"{every}:1 (hosts[0]): a speed for host 'node-1', which the platform gives a speed profile " \
               f"({platform}:6 (speed_file))" in err
    assert not (tmp_path / "out").exists()
    # speed_file="" is no speed profile, as SimGrid reads it.
    platform.write_text(platform.read_text().replace('speed_file="avail.txt"', 'speed_file=""'))
    res = simcore("validate", scenario, "--calibration", every)
    assert res.returncode == 0, res.stderr
    platform.write_text(platform.read_text().replace('speed_file=""', 'speed_file="avail.txt"'))
    # A rule that leaves that host alone is applied.
    first = profile(tmp_path, "first", {"hosts": [{"match": "node-0", "speed": "2Gf"}]})
    res = simcore("run", scenario, "--calibration", first, "--out", tmp_path / "ok")
    assert res.returncode == 0, res.stderr


def test_on_a_cluster_the_scenarios_loopback_setting_wins_over_the_profiles(tmp_path):
    """The profile's network/loopback-* reach a <cluster>'s loopback links; a --cfg (or a
    scenario's <config>) given after them wins there as it does on SimGrid's own loopback,
    and summary.json records the value simulated."""
    params = {"ranks_per_node": 2, "local_cells": "1,300,300", "periodic": "false", "variables": 1,
              "iterations": 1, "flops_per_cell": 0, "mode": "smpi"}
    fast = profile(tmp_path, "fast", {"simgrid_config": {"network/loopback-bw": "26e9", "network/loopback-lat": "0"}})
    slow = profile(tmp_path, "slow", {"simgrid_config": {"network/loopback-bw": "1e9", "network/loopback-lat": "0"}})
    t_fast = run_halo(tmp_path, "fast", params, fast, platform=CLUSTER)
    t_slow = run_halo(tmp_path, "slow", params, slow, platform=CLUSTER)
    t_cfg = run_halo(tmp_path, "cfg", params, fast, platform=CLUSTER, extra=["--cfg=network/loopback-bw:1e9"])
    assert t_slow > 10 * t_fast
    assert t_cfg == t_slow
    summary = json.loads((tmp_path / "cfg" / "summary.json").read_text())
    assert summary["simgrid_config"]["network/loopback-bw"] == "1e9"


def test_a_loopback_bandwidth_of_zero_is_refused_wherever_it_is_set(tmp_path):
    zero = profile(tmp_path, "zero", {"simgrid_config": {"network/loopback-bw": "0"}})
    scenario = ROOT / "scenarios" / "halo" / "two_ranks_one_node.xml"
    assert f"{zero}:1 (simgrid_config.network/loopback-bw): SimGrid configuration 'network/loopback-bw' = '0'; " \
           "expected a bandwidth from 1 to 1e18 B/s" in refused("validate", scenario, "--calibration", zero)
    assert "--cfg=network/loopback-bw:0: SimGrid configuration 'network/loopback-bw' = '0'; expected a bandwidth " \
           "from 1 to 1e18 B/s" in refused("validate", scenario, "--cfg=network/loopback-bw:0")
    # A negative latency SimGrid took as 0, silently; 1e308 took the clock to inf.
    for lat in ("-1", "1e308"):
        assert f"--cfg=network/loopback-lat:{lat}: SimGrid configuration 'network/loopback-lat' = '{lat}'; expected " \
               "a latency from 0 to 1e6 s" in refused("validate", scenario, f"--cfg=network/loopback-lat:{lat}")


@pytest.mark.parametrize("body, where, expected", [
    # SimGrid aborted ("The Impossible Did Happen") on a denormal bandwidth.
    ({"links": [{"match": ".*", "bandwidth": 1e-310}]}, "links[0]", "expected a bandwidth from 1 B/s to 1e18 B/s"),
    # The clock reached inf: "simulation deadlocked at t=inf ... a bug of model 'halo'", exit 1.
    ({"links": [{"match": ".*", "latency": 1e308}]}, "links[0]", "expected a latency from 0 to 1e6 s"),
    ({"network_factors": {"intra-node": {"bandwidth": "0:4.9e-324"}}}, "network_factors.intra-node.bandwidth",
     "the factor from 1e-12 to 1e12"),
    # A gap of inf seconds aborted SimGrid ("duration is not finite").
    ({"message_gaps": {"intra-node": "0:1e308:0"}}, "message_gaps.intra-node",
     "seconds from -1 to 1, seconds per byte from 0 to 1"),
    # SimGrid took the model's name and aborted once it built the platform.
    ({"simgrid_config": {"network/model": "Foo"}}, "simgrid_config.network/model",
     "SimGrid configuration 'network/model' = 'Foo'; expected one of LV08, Constant, SMPI, IB, CM02"),
    # A pattern libstdc++ matched for minutes.
    ({"hosts": [{"match": "(((.*)*)*)*(x)", "speed": "1Gf"}]}, "hosts[0]",
     "a repeated group holds a repetition itself"),
])
def test_values_simgrid_cannot_run_with_are_refused_before_the_run(tmp_path, body, where, expected):
    bad = profile(tmp_path, "bad", body)
    scenario = ROOT / "scenarios" / "halo" / "two_ranks_one_node.xml"
    out = tmp_path / "out"
    err = refused("run", scenario, "--calibration", bad, "--out", out, "--quiet")
    assert f"{bad}:1 ({where}): " in err and expected in err, err
    assert not out.exists()


def test_a_scenario_pattern_simgrid_cannot_match_safely_is_refused(tmp_path):
    scenario = ROOT / "scenarios" / "halo" / "two_ranks_one_node.xml"
    err = refused("validate", scenario, "--set", "hosts=(a+)+")
    assert "parameter 'hosts' = '(a+)+' is refused: a repeated group holds a repetition itself" in err, err


def test_a_shared_link_named_like_a_loopback_takes_the_link_rules(tmp_path):
    """A link between two hosts whose name ends in _loopback was taken for a loopback: the
    profile's link rule skipped it (and warned that it matched no link)."""
    platform = tmp_path / "two.xml"
    platform.write_text("""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="node-0" speed="1Gf"/>
    <host id="node-1" speed="1Gf"/>
    <link id="uplink_loopback" bandwidth="10GBps" latency="1us"/>
    <route src="node-0" dst="node-1"><link_ctn id="uplink_loopback"/></route>
  </zone>
</platform>
""")
    slow = profile(tmp_path, "slow", {"links": [{"match": ".*", "bandwidth": "100MBps", "latency": "1ms"}]})
    scenario = two_rank_halo(tmp_path, platform, "local_cells", "16,16,16", periodic="false", iterations=2,
                             ranks_per_node=1, mode="smpi")
    res = simcore("run", scenario, "--calibration", slow, "--out", tmp_path / "out", "--json")
    assert res.returncode == 0, res.stderr
    assert "matches no link" not in res.stderr
    comm = json.loads(res.stdout)["metrics"]["communication_time_slowest"]
    assert comm > 1e-3  # the rule's 1 ms latency, not the platform's 1 us


def test_a_speed_ratio_simgrid_cannot_run_is_refused(tmp_path):
    """1e-300 flop/s against the platform's 1 Gf: a ratio below the smallest normal double
    (SimGrid then aborted with "The Impossible Did Happen")."""
    tiny = profile(tmp_path, "tiny", {"hosts": [{"match": ".*", "speed": 1e-300}]})
    err = refused("validate", ROOT / "scenarios" / "halo" / "two_ranks_one_node.xml", "--calibration", tiny)
    assert f"{tiny}:1 (hosts[0]): speed 1e-300 flop/s against host 'node-0''s 1000000000.0 flop/s in the platform: " \
           "a ratio SimGrid cannot run" in err


def test_network_factors_under_a_model_without_factors_are_refused(tmp_path):
    prof = profile(tmp_path, "constant", {"simgrid_config": {"network/model": "Constant"},
                                          "network_factors": {"inter-node": {"bandwidth": "0:0.5"}}})
    err = refused("validate", ROOT / "scenarios" / "halo" / "two_ranks_one_node.xml", "--calibration", prof)
    assert f"{prof}:1 (network_factors): the network model cannot take factors" in err


def test_each_link_setting_comes_from_the_first_rule_that_has_it(tmp_path):
    """A latency rule first and a bandwidth rule after it, both over every link: each link
    takes both, as one rule with both gives (a link once took only the first rule's)."""
    both = ROOT / "tests" / "data" / "calibration" / "star_2x.json"
    split = profile(tmp_path, "split", {
        "hosts": [{"match": "node-[0-9]+", "speed": "2Gf"}],
        "links": [{"match": "star_.*", "latency": "10us"}, {"match": ".*", "bandwidth": "2.5GBps"}],
        "simgrid_config": {"network/latency-factor": "1", "network/bandwidth-factor": "1"}})
    makespans = []
    for name, prof in (("both", both), ("split", split)):
        res = simcore("run", STAR, "--calibration", prof, "--json", "--quiet", "--out", tmp_path / name)
        assert res.returncode == 0, res.stderr
        makespans.append(json.loads(res.stdout)["metrics"]["makespan"])
    assert makespans[0] == makespans[1]


def test_a_host_rule_that_earlier_rules_shadow_is_reported(tmp_path):
    """A broad pattern first takes every host: the specific rule after it is never used, and
    the run says so. A later rule that adds a rate the earlier one lacks is used."""
    shadowed = profile(tmp_path, "shadowed", {"hosts": [{"match": ".+", "speed": "2Gf"},
                                                        {"match": "node-0", "speed": "3Gf"}]})
    res = simcore("validate", ROOT / "scenarios" / "halo" / "two_ranks_one_node.xml", "--calibration", shadowed)
    assert res.returncode == 0, res.stderr
    assert f"host rule 'node-0' ({shadowed}:1 (hosts[1])) is never used" in res.stderr
    adds = profile(tmp_path, "adds", {"hosts": [{"match": ".+", "speed": "2Gf"},
                                                {"match": "node-0", "speed": "3Gf",
                                                 "rates": {"memcpy_bandwidth": "5GBps"}}]})
    res = simcore("validate", ROOT / "scenarios" / "halo" / "two_ranks_one_node.xml", "--calibration", adds)
    assert res.returncode == 0, res.stderr
    assert "never used" not in res.stderr


def test_the_calibration_option_says_what_is_wrong_with_its_path(tmp_path):
    scenario = ROOT / "scenarios" / "halo" / "two_ranks_one_node.xml"
    res = simcore("validate", scenario, "--calibration", tmp_path, cwd=tmp_path)
    assert res.returncode == 2
    assert f"calibration file '{tmp_path}' is not a regular file" in res.stderr
    res = simcore("validate", scenario, "--calibration", "nope.json", cwd=tmp_path)
    assert res.returncode == 2
    assert "does not exist; expected a path relative to the working directory" in res.stderr


def test_a_latency_measured_end_to_end_warns_on_routes_of_several_links(tmp_path):
    """The fitter's inter-node link rule holds the latency of a whole route (scope "route"):
    on platforms/two_nodes.xml a route is one link and the run is silent; on a cluster a route
    crosses a node's up-link, the backbone and the other's down-link, each given that latency,
    and the run says so."""
    trace = tmp_path / "inter.h5"
    write_synthetic_network(trace, POWERS, two_segment_law(2e-6, 3e9, 16384, 9e-6, 1e10), placement="inter-node")
    fit = fitted(tmp_path, trace)
    assert fit["links"] == [{"match": ".*", "bandwidth": fit["links"][0]["bandwidth"],
                             "latency": fit["links"][0]["latency"], "scope": "route"}]
    prof = tmp_path / "inter.json"
    prof.write_text(json.dumps(fit))
    res = simcore("run", ROOT / "scenarios" / "halo" / "two_ranks_two_nodes.xml", "--calibration", prof,
                  "--out", tmp_path / "two_nodes")
    assert res.returncode == 0 and "measured end to end" not in res.stderr, res.stderr
    scenario = two_rank_halo(tmp_path, CLUSTER, "ranks_per_node", 1)
    res = simcore("run", scenario, "--calibration", prof, "--out", tmp_path / "cluster")
    assert res.returncode == 0, res.stderr
    assert f"{prof}: link rule '.*' ({prof}:1 (links[0])) holds a latency measured end to end (scope \"route\"), " \
           "but messages from" in res.stderr and "cross 3 of its links" in res.stderr
    assert res.stderr.count("measured end to end") == 1  # once a run
    # The same values without the scope: the links' own, as a hand-written profile gives them.
    del fit["links"][0]["scope"]
    prof.write_text(json.dumps(fit))
    res = simcore("run", scenario, "--calibration", prof, "--out", tmp_path / "cluster_links")
    assert res.returncode == 0 and "measured end to end" not in res.stderr, res.stderr


def test_the_route_check_routes_no_pair_the_platform_cannot_route(tmp_path):
    """The check sees the routes messages take: on a platform of two zones with no route
    between them (where routing every pair of hosts crashed SimGrid), a run within one zone
    is silent and unharmed. So is the check of every host's route to itself (intra-node
    factors), which skips the zone without routing (it aborted there)."""
    platform = tmp_path / "zones.xml"
    platform.write_text("""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <zone id="a" routing="Full">
      <host id="a-0" speed="1Gf" core="2"/>
      <host id="a-1" speed="1Gf" core="2"/>
      <link id="la" bandwidth="1GBps" latency="1us"/>
      <route src="a-0" dst="a-1"><link_ctn id="la"/></route>
    </zone>
    <zone id="b" routing="None">
      <host id="b-0" speed="1Gf"/>
    </zone>
  </zone>
</platform>
""")
    prof = profile(tmp_path, "route", {"links": [{"match": ".*", "bandwidth": "10GBps", "latency": "2us",
                                                  "scope": "route"}],
                                       "network_factors": {"inter-node": {"latency": "0:1"},
                                                           "intra-node": {"latency": "0:1"}}})
    scenario = two_rank_halo(tmp_path, platform, "hosts", "a-.*")
    scenario.write_text(scenario.read_text().replace('<param name="ranks" value="2"/>',
                                                     '<param name="ranks" value="2"/>\n  <param name="ranks_per_node" value="1"/>'))
    for command in (["validate"], ["run", "--out", tmp_path / "out"]):
        res = simcore(command[0], scenario, "--calibration", prof, *command[1:])
        assert res.returncode == 0 and "measured end to end" not in res.stderr, res.stderr


def test_a_link_rule_scope_is_link_or_route(tmp_path):
    prof = profile(tmp_path, "scope", {"links": [{"match": ".*", "latency": "1us", "scope": "path"}]})
    assert f"{prof}:1 (links[0]): scope \"path\"; expected \"link\"" in \
        refused("validate", ROOT / "scenarios" / "halo" / "two_ranks_two_nodes.xml", "--calibration", prof)


def test_a_message_of_a_placement_without_factors_is_reported_once(tmp_path):
    """An intra-node profile used between two nodes: those messages take factors of 1, not
    SimGrid's own (13.01 and 0.97 under its default model), and the run says so once; within
    a node it is silent."""
    trace = tmp_path / "intra.h5"
    write_synthetic_network(trace, POWERS, two_segment_law(0.4e-6, 8e9, 65536, 4e-6, 2e10), placement="intra-node")
    prof = tmp_path / "intra.json"
    prof.write_text(json.dumps(fitted(tmp_path, trace)))
    platform = ROOT / "platforms" / "two_nodes.xml"
    for per_node, warned in ((1, True), (2, False)):
        scenario = two_rank_halo(tmp_path, platform, "ranks_per_node", per_node)
        scenario.write_text(scenario.read_text().replace('<param name="ranks" value="2"/>',
                                                         '<param name="ranks" value="2"/>\n  '
                                                         '<param name="iterations" value="3"/>'))
        res = simcore("run", scenario, "--calibration", prof, "--out", tmp_path / f"out{per_node}")
        assert res.returncode == 0, res.stderr
        assert res.stderr.count("network_factors has no inter-node factors") == (1 if warned else 0), res.stderr


MULTILINE = """{
  "schema": "simcore-profile/1",
  "hosts": [
    {"match": "node-.*", "speed": "2Gf"},
    {
      "match": "other-.*",
      "rates": {"memcpy_bandwidth": "2us"}
    }
  ],
  "links": [
    {"match": ".*",
     "bandwith": "1GBps"}
  ],
  "rates": {
    "memcpy_bandwidth": "10GBps",
    "flops_per_cell": "4MiB"
  }
}
"""


@pytest.mark.parametrize("edit, where, what", [
    # Found when the profile is read: the key's line.
    (lambda t: t, ":12 (links[0])", "unknown key 'bandwith'; expected one of: bandwidth, latency, match, scope"),
    (lambda t: t.replace('"2Gf"', '"-2Gf"'), ":4 (hosts[0])", "speed -2000000000.0 flop/s; expected a positive speed"),
    (lambda t: t.replace('"flops_per_cell": "4MiB"', '"memcpy_bandwidth": "4MiB"'), ":16 (rates.memcpy_bandwidth)",
     "the key 'memcpy_bandwidth' twice in one object; expected each key once"),
    # Found when a model reads the rate, after the profile was read: the same.
    (lambda t: t.replace("bandwith", "bandwidth"), ":16 (rates.flops_per_cell)",
     "a rate in B; the model reads it as an amount of work"),
])
def test_a_profile_written_over_many_lines_is_refused_at_the_line(tmp_path, edit, where, what):
    """Errors found after the JSON is parsed (nlohmann keeps no positions) once named the
    element alone, "p.json (links[0])"; a profile of many lines is refused at the line too."""
    prof = tmp_path / "lines.json"
    prof.write_text(edit(MULTILINE))
    scenario = two_rank_halo(tmp_path, CLUSTER, "mode", "detailed")
    err = refused("validate", scenario, "--calibration", prof)
    assert f"simcore: error: {prof}{where}: {what}" in err, err


def test_a_profile_cut_short_is_refused_at_its_last_line(tmp_path):
    cut = tmp_path / "cut.json"
    cut.write_text(MULTILINE[:MULTILINE.index('"links"')])
    err = refused("validate", STAR, "--calibration", cut)
    assert f"{cut}:10: malformed JSON (" in err, err
