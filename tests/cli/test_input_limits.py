"""Input the kernel accepted and SimGrid then aborted on, hung with or misread, found by a
review on 2026-12-07: each is now refused before the run (exit 2, naming what), and nothing
of an earlier result survives a failed run."""

import json
import os

import pytest

from cli_tool import SOURCE_DIR, refused, simcore

STAR = SOURCE_DIR / "scenarios" / "master_worker" / "star.xml"
HALO = SOURCE_DIR / "scenarios" / "halo" / "two_ranks_one_node.xml"


@pytest.mark.parametrize("item, expected", [
    # SIGFPE inside SimGrid's ns-3 build, even for validate.
    ("network/model:ns-3", "'network/model' = 'ns-3'; expected one of LV08, Constant, SMPI, IB, CM02"),
    ("maxmin/precision:-1", "expected a precision from 1e-15 to 0.1"),         # segfault
    ("contexts/stack-size:0", "expected a stack size from 16 to 1048576 KiB"),  # segfault
    ("network/bandwidth-factor:0", "expected a factor from 1e-12 to 1e12"),     # abort in the run
    ("cpu/optim:Foo", "'cpu/optim' = 'Foo'; expected one of Lazy, Full"),       # abort
    ("surf/precision:0", "expected a precision from 1e-15 to 1e-3 s"),           # never ended
    # Found by fuzzing on 2026-12-07, each an abort in the run (SIGTRAP for the breakpoint).
    ("cpu/optim:TI", "'cpu/optim' = 'TI'; expected one of Lazy, Full"),          # multi-core hosts
    ("network/maxmin-selective-update:no", "expected yes (SimGrid 3.32 aborts without it"),
    ("cpu/maxmin-selective-update:no", "expected yes (SimGrid 3.32 aborts without it"),
    ("smpi/host-speed:0", "'smpi/host-speed' = '0'; expected a positive speed"),
    ("plugin:nosuch", "'plugin' = 'nosuch'; expected one of host_energy, link_energy"),
    ("debug/breakpoint:0", "'debug/breakpoint' is not one simcore runs with"),
    ("model-check/replay:1", "'model-check/replay' is not one simcore runs with"),
    ("tracing/platform:yes", "'tracing/platform' is not one simcore runs with"),
    ("network/TCP-gamma:1 2", "= '1 2'; expected a value without spaces"),
    ("0,0,0:1", "name '0,0,0'; expected letters, digits"),
])
def test_simgrid_settings_it_cannot_run_with_are_refused(tmp_path, item, expected):
    for command in (["validate"], ["run", "--out", tmp_path / "out"]):
        err = refused(command[0], STAR, f"--cfg={item}", *command[1:], cwd=tmp_path)
        assert f"--cfg={item}: SimGrid configuration" in err and expected in err, err
    assert not (tmp_path / "out").exists()


def _platform(tmp_path, zone_attrs, config=""):
    platform = tmp_path / "p.xml"
    platform.write_text(f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">{config}
  <zone id="node" {zone_attrs}>
    <host id="node-0" speed="1Gf" core="2"/>
  </zone>
</platform>
""")
    scenario = tmp_path / "s.xml"
    scenario.write_text(HALO.read_text().replace(
        next(line for line in HALO.read_text().splitlines() if "<platform" in line),
        f'  <platform file="{platform}"/>'))
    return platform, scenario


def test_a_platform_config_item_simgrid_aborts_on_is_refused_at_its_line(tmp_path):
    """A platform's own <config> went straight to SimGrid: debug/breakpoint was SIGTRAP."""
    platform, scenario = _platform(tmp_path, 'routing="Full"',
                                   '\n  <config>\n    <prop id="debug/breakpoint" value="0"/>\n  </config>')
    for args in (["platform", platform], ["run", scenario, "--out", tmp_path / "out"]):
        err = refused(*args, cwd=tmp_path)
        assert f"{platform}:5: SimGrid configuration 'debug/breakpoint' is not one simcore runs with" in err, err
    assert not (tmp_path / "out").exists()


def test_a_platform_config_item_simgrid_does_not_know_is_bad_input_at_its_line(tmp_path):
    """SimGrid threw 'Bad config key' with a list of every key: an internal error (exit 1),
    as for SimGrid's own example platforms cloud.xml and config_tracing.xml."""
    platform, scenario = _platform(tmp_path, 'routing="Full"',
                                   '\n  <config>\n    <prop id="tracing/buffer" value="yes"/>\n  </config>')
    for args in (["platform", platform], ["run", scenario, "--out", tmp_path / "out"]):
        err = refused(*args, cwd=tmp_path)
        assert f"{platform}:5: SimGrid configuration 'tracing/buffer' is not one SimGrid knows; expected an item " \
               "listed by SimGrid's --help-cfg" in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("routing", ["Dijkstra", "DijkstraCache"])
def test_a_dijkstra_zone_without_routes_is_refused(tmp_path, routing):
    """SimGrid 3.32 crashed (SIGSEGV in xbt_graph_node_get_data) routing a rank to itself there."""
    platform, scenario = _platform(tmp_path, f'routing="{routing}"')
    err = refused("run", scenario, "--out", tmp_path / "out", cwd=tmp_path)
    assert f'{platform}:4: <zone routing="{routing}"> without <route>; expected routes between its hosts' in err, err
    platform, scenario = _platform(tmp_path, 'routing="Floyd"')  # the same zone, routed otherwise
    assert simcore("run", scenario, "--out", tmp_path / "out", cwd=tmp_path).returncode == 0


def test_a_platform_without_hosts_or_that_is_no_file_is_refused(tmp_path):
    """A platform without a host (or a cluster of radical 5-3) crashed the model that took its
    first host; a folder or a device was "a platform file that does not exist"."""
    platform = tmp_path / "empty.xml"
    platform.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                        "<platform version=\"4.1\">\n</platform>\n")
    scenario = tmp_path / "s.xml"
    scenario.write_text(STAR.read_text().replace(
        next(line for line in STAR.read_text().splitlines() if "<platform" in line), f'  <platform file="{platform}"/>'))
    err = refused("run", scenario, "--out", tmp_path / "out", cwd=tmp_path)
    assert f"{platform}:3: the platform holds no host; expected at least one <host>" in err, err
    assert not (tmp_path / "out").exists()
    assert "/dev/zero: is not a regular file; expected a SimGrid XML platform" in refused("platform", "/dev/zero",
                                                                                          cwd=tmp_path)
    assert f"{tmp_path}: is a folder; expected a SimGrid XML platform" in refused("platform", tmp_path, cwd=tmp_path)


@pytest.mark.parametrize("body, expected", [
    # Each aborted inside SimGrid 3.32's parser or at the platform's first use (exit 134).
    ('<cluster id="c" prefix="n-" suffix="" radical="0-2" speed="1Gf" core="0f" bw="1GBps" lat="1us"/>',
     "<cluster> core='0f'; expected a whole number of cores from 1 to 1048576"),
    ('<cluster id="c" prefix="n-" suffix="" radical="0-2" speed="0f" bw="1GBps" lat="1us"/>',
     "<cluster> speed='0f'; expected a speed from 1 flop/s to 1e21 flop/s"),
    ('<cluster id="c" prefix="n-" suffix="" radical="0-2" speed="1Gf" bw="0Bps" lat="1us"/>',
     "<cluster> bw='0Bps'; expected a bandwidth from 1 B/s to 1e18 B/s"),
    # These two ended "deadlocked at t=inf", exit 1.
    ('<cluster id="c" prefix="n-" suffix="" radical="0-2" speed="1e-300f" bw="1GBps" lat="1us"/>',
     "<cluster> speed='1e-300f'; expected a speed from 1 flop/s to 1e21 flop/s"),
    ('<cluster id="c" prefix="n-" suffix="" radical="0-2" speed="1Gf" bw="1GBps" lat="inf"/>',
     "<cluster> lat='inf'; expected a latency from 0 to 1e6 s"),
    ('<cluster id="c" prefix="n-" suffix="" radical="99999999999" speed="1Gf" bw="1GBps" lat="1us"/>',
     "<cluster> radical='99999999999'; expected numbers and ranges such as 0-15,32"),  # exit 1 (stoi)
    ('<zone id="z" routing="ClusterFatTree"><host id="a" speed="1Gf"/></zone>',
     '<zone routing="ClusterFatTree">; expected one of Full, Floyd, Dijkstra, DijkstraCache, None, Vivaldi, Wifi'),
    ('<zone id="z" routing="None"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>'
     '<link id="l" bandwidth="1GBps" latency="1us"/><route src="a" dst="b"><link_ctn id="l"/></route></zone>',
     'a route in a <zone routing="None">, which takes none'),
    ('<zone id="z" routing="Full"><host id="a" speed="1Gf,0Gf"/></zone>', "<host> speed='1Gf,0Gf'; expected a speed"),
    ('<zone id="z" routing="Full"><host id="a" speed="1Gf"/><trace id="t" periodicity="1">0 1\n1 -1\n</trace>'
     '<trace_connect kind="SPEED" trace="t" element="a"/></zone>',
     "<trace id=\"t\">: line '1 -1' has value -1; expected values above 0"),
    ('<zone id="z" routing="Full"><host id="a" speed="1Gf"/><include file="x.xml"/></zone>',
     "<include> (SimGrid 3.32 aborts on it); expected the platform in one file"),
])
def test_platform_values_simgrid_aborts_on_are_refused_at_their_line(tmp_path, body, expected):
    platform = tmp_path / "p.xml"
    platform.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                        f"<platform version=\"4.1\">\n{body}\n</platform>\n")
    err = refused("platform", platform, cwd=tmp_path)
    assert f"{platform}:4: " in err and expected in err, err


def test_the_constant_network_model_on_a_platform_with_links_is_refused(tmp_path):
    """SimGrid aborted on the platform's first link."""
    err = refused("validate", STAR, "--cfg=network/model:Constant", cwd=tmp_path)
    assert "platforms/star.xml:" in err and "under network/model Constant, which has no links" in err, err


@pytest.mark.parametrize("spec", ["foo", "a.b.thres:debug", "no_loc xbt_cfg.thres:info"])
def test_log_settings_simgrid_cannot_parse_are_refused(tmp_path, spec):
    """SimGrid aborted the process on them."""
    err = refused("validate", STAR, f"--log={spec}", cwd=tmp_path)
    assert f"command line: '--log={spec}': item" in err and "expected CATEGORY.thres:LEVEL" in err, err
    assert simcore("validate", STAR, "--log=no_loc", cwd=tmp_path).returncode == 0
    assert simcore("validate", STAR, "--log=root.thres:critical xbt_cfg.fmt:%m%n", cwd=tmp_path).returncode == 0


def test_a_subnormal_quantity_is_refused(tmp_path):
    """1e-310 B/s took the clock to infinity: "internal error ... a bug of model 'halo'", exit 1."""
    err = refused("run", HALO, "--set", "mode=detailed", "--set", "memory_bandwidth=1e-310", "--out", tmp_path / "o",
                  cwd=tmp_path)
    assert "'1e-310' is below the smallest normal double" in err, err
    assert "'1e-320' is below the smallest normal double" in refused("validate", STAR, "--set", "task_bytes=1e-320",
                                                                     cwd=tmp_path)
    assert simcore("validate", HALO, "--set", "memory_bandwidth=1", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("setting, expected", [
    # Each took the clock to infinity: an abort ("duration is not finite") or exit 1 blaming
    # the model ("deadlocked at t=inf"). Found by fuzzing on 2026-12-07.
    ("message_gap=1e308", "'message_gap' = '1e308' is beyond what a simulation can use; expected a time up to 1e9 s"),
    ("memory_bandwidth=1e-300", "expected a bandwidth of 0 or from 1 B/s to 1e18 B/s"),
    ("memory_bandwidth=2e18", "expected a bandwidth of 0 or from 1 B/s to 1e18 B/s"),
    ("flops_per_cell=1e308", "'flops_per_cell' = '1e308' is out of range; expected a value between 0 and 1e+12"),
])
def test_quantities_past_what_a_simulation_can_use_are_refused(tmp_path, setting, expected):
    err = refused("run", HALO, "--set", "mode=detailed", "--set", setting, "--out", tmp_path / "o", cwd=tmp_path)
    assert expected in err, err
    assert not (tmp_path / "o").exists()


def test_a_scenario_that_is_no_regular_file_is_refused(tmp_path):
    """A FIFO or /dev/zero blocked the read forever."""
    fifo = tmp_path / "fifo.xml"
    os.mkfifo(fifo)
    assert "fifo.xml: is not a regular file; expected an existing XML file" in refused("validate", fifo, cwd=tmp_path)
    assert "/dev/zero: is not a regular file" in refused("validate", "/dev/zero", cwd=tmp_path)


def _star_copy(tmp_path, edit):
    text = STAR.read_text().replace('file="../../platforms/star.xml"', f'file="{SOURCE_DIR}/platforms/star.xml"')
    path = tmp_path / "s.xml"
    path.write_text(edit(text))
    return path


def test_a_nul_character_reference_and_a_second_root_are_refused(tmp_path):
    """pugixml ended a value at &#0; ("5&#0;junk" ran as 5) and dropped a second root element."""
    nul = _star_copy(tmp_path, lambda t: t.replace('</scenario>', '  <param name="tasks" value="5&#0;junk"/>\n</scenario>'))
    assert "s.xml:" in (err := refused("validate", nul, cwd=tmp_path)) and "the character reference '&#0;' (NUL)" in err
    two = _star_copy(tmp_path, lambda t: t + '<scenario model="nope"/>\n')
    assert "a second root element <scenario>; expected one <scenario> per file" in refused("validate", two, cwd=tmp_path)


def test_a_folder_where_the_summary_goes_is_found_before_the_run(tmp_path):
    (tmp_path / "o" / "summary.json" / "x").mkdir(parents=True)
    err = refused("run", STAR, "--out", tmp_path / "o", cwd=tmp_path)
    assert "summary.json: is a folder" in err, err
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["summary.json"]  # no trace.h5 written


def test_the_csv_tables_of_an_earlier_run_do_not_outlive_it(tmp_path):
    """A later run kept the earlier run's CSV files beside its own result (or, where it failed
    during the simulation, beside none)."""
    csv = _star_copy(tmp_path, lambda t: t.replace('</scenario>', '  <output csv="true"/>\n</scenario>'))
    out = tmp_path / "o"
    assert simcore("run", csv, "--out", out, "--quiet", cwd=tmp_path).returncode == 0
    tables = sorted(p.name for p in out.glob("*.csv"))
    assert tables == sorted(json.loads((out / "summary.json").read_text())["outputs"]["csv"])
    assert simcore("run", STAR, "--out", out, "--quiet", cwd=tmp_path).returncode == 0
    assert not list(out.glob("*.csv"))
    assert "csv" not in json.loads((out / "summary.json").read_text())["outputs"]


def test_model_parameters_past_their_arrays_or_integers_are_refused(tmp_path):
    """dtl: a decimation of 10 strides wrote past its array of 3 (a segfault at validate);
    batch: cores_per_node = 2^63 - 1 overflowed into "-120 cores", exit 0."""
    dtl = SOURCE_DIR / "scenarios" / "dtl" / "staging_two_clusters.xml"
    err = refused("validate", dtl, "--set", "decimation=1,1,1,1,1,1,1,1,1,1", cwd=tmp_path)
    assert "parameter 'decimation' has 10 values; expected one stride per dimension of the variable, at most 3" in err
    batch = SOURCE_DIR / "scenarios" / "batch" / "hpc2n_easy.xml"
    err = refused("validate", batch, "--set", "cores_per_node=9223372036854775807", cwd=tmp_path)
    assert "parameter 'cores_per_node'" in err and "expected a value between 0 and 1048576" in err, err


def test_an_output_folder_named_in_the_scenario_is_refused_at_its_line(tmp_path):
    """The error named only the folder, not the <output dir> that gave it."""
    path = _star_copy(tmp_path, lambda t: t.replace('</scenario>', '  <output dir="/dev/null"/>\n</scenario>'))
    line = 1 + path.read_text().split("\n").index('  <output dir="/dev/null"/>')
    err = refused("run", path, cwd=tmp_path)
    assert f"s.xml:{line} (<output dir=\"/dev/null\">): output folder: '/dev/null' is not a directory" in err, err
    # --out wins, and is named as given.
    err = refused("run", path, "--out", "/dev/null/x", cwd=tmp_path)
    assert "/dev/null/x: output folder: '/dev/null' is not a directory" in err, err


def test_a_scenario_in_utf16_is_refused(tmp_path):
    """pugixml read it, but its errors named lines counted in its bytes (line 4 for line 10)."""
    path = tmp_path / "u16.xml"
    path.write_bytes(STAR.read_text().encode("utf-16"))
    assert "u16.xml:1: a NUL byte (UTF-16 or UTF-32 text?); expected an XML file in UTF-8" in \
        refused("validate", path, cwd=tmp_path)
    # A stray NUL in a UTF-8 file: at its line.
    text = STAR.read_text()
    stray = tmp_path / "stray.xml"
    stray.write_bytes(text.replace("<platform", "<platform\0", 1).encode())
    line = 1 + text[:text.index("<platform")].count("\n")
    assert f"stray.xml:{line}: a NUL byte (UTF-16 or UTF-32 text?)" in refused("validate", stray, cwd=tmp_path)


def test_more_actors_than_the_system_can_hold_at_once_are_refused(tmp_path):
    """40,000 ranks: SimGrid aborted ("Failed to protect stack"), each actor's stack taking two
    of the 65,530 memory mappings Linux allows a process by default."""
    scenario = tmp_path / "s.xml"
    scenario.write_text(f'<?xml version="1.0"?>\n<scenario model="halo" seed="1">\n'
                        f'  <platform file="{SOURCE_DIR}/platforms/fat_tree.xml"/>\n'
                        '  <param name="ranks" value="40000"/>\n  <param name="local_cells" value="2,2,2"/>\n'
                        '  <param name="iterations" value="1"/>\n  <param name="ranks_per_node" value="625"/>\n'
                        '</scenario>\n')
    err = refused("run", scenario, "--out", tmp_path / "o", cwd=tmp_path)
    assert f"{scenario}: model 'halo' runs more than " in err and " actors at once (each has a stack" in err, err
    assert err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("edit, line, expected", [
    # Each ran with the element or text ignored (exit 0): found by fuzzing on 2026-12-07.
    (lambda t: t.replace('<param name="tasks" value="200"/>',
                         '<output dir="o">\n    <param name="tasks" value="3"/>\n  </output>'), 8,
     "<output> holds an element <param>, which would be ignored; expected attributes only"),
    (lambda t: t.replace('</scenario>', '  <config name="network/TCP-gamma" value="4194304">x</config>\n</scenario>'),
     11, "<config> holds text, which would be ignored; expected attributes only"),
    (lambda t: t.replace('</scenario>', '</scenario>\ngarbage'), 12,
     "text after the root element; expected the file to end with </scenario>"),
    (lambda t: t.replace('</scenario>', '  loose text\n</scenario>'), 11, "<scenario> holds text; expected only elements"),
    (lambda t: t.replace('</scenario>', '  <output trace="false"/>\n  <output csv="true"/>\n</scenario>'), 12,
     "a second <output> (the first is at"),
    (lambda t: t.replace('</scenario>', '  <config name="network/TCP-gamma" value="1"/>\n'
                                        '  <config name="network/TCP-gamma" value="2"/>\n</scenario>'), 12,
     "SimGrid configuration 'network/TCP-gamma' is given twice; expected each item at most once"),
])
def test_what_the_scenario_would_ignore_is_refused_at_its_line(tmp_path, edit, line, expected):
    path = _star_copy(tmp_path, edit)
    err = refused("validate", path, cwd=tmp_path)
    assert f"s.xml:{line}: {expected}" in err, (err, path.read_text())


def validated_at(tmp_path, text, marker):
    """Validates scenario `text` (its platform paths made absolute), which must be refused:
    the file, the line of `marker` in it and the error."""
    text = text.replace('file="../../platforms/', f'file="{SOURCE_DIR}/platforms/')
    path = tmp_path / "s.xml"
    path.write_text(text)
    return path, 1 + text[:text.index(marker)].count("\n"), refused("validate", path, cwd=tmp_path)


def test_a_default_the_platform_cannot_take_is_refused_at_the_scenario_element(tmp_path):
    """A parameter left to its default was located at the file alone, "s.xml (default of
    'ranks')": the model's defaults come with its name, at the <scenario> element's line."""
    text = (SOURCE_DIR / "scenarios" / "halo" / "two_ranks_one_node.xml").read_text()
    text = "\n".join(l for l in text.splitlines() if 'name="ranks"' not in l and 'name="procs"' not in l)
    path, line, err = validated_at(tmp_path, text, "<scenario ")
    assert err.startswith(f"simcore: error: {path}:{line} (default of 'ranks'): parameter 'ranks' = 8 needs "), err
    assert "expected at most 2 ranks, or more hosts" in err, err


def test_an_output_folder_name_the_file_system_cannot_hold_is_refused_before_the_run(tmp_path):
    """A name of 300 bytes was refused only when the results were written ("File name too
    long", located at the folder, not at the <output> element), after the whole run."""
    text = STAR.read_text().replace("</scenario>", f'  <output dir="{"x" * 300}"/>\n</scenario>')
    path, line, err = validated_at(tmp_path, text, "<output")
    assert err.startswith(f"simcore: error: {path}:{line} (<output dir=\""), err
    assert "output folder: a name of 300 bytes ('xxxxxxxxxxxxxxxxxxxx...'); expected names of at most 255 bytes" in err
    err = refused("run", STAR, "--out", tmp_path / ("y/" * 2100), cwd=tmp_path)
    assert "output folder: a path of " in err and "expected a path that leaves room for its files' names" in err, err
