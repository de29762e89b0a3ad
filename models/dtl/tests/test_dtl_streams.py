"""dtl with <stream> elements: several streams, several reader apps, explicit blocks."""

import pathlib

import pytest

import simcore

HERE = pathlib.Path(__file__).resolve().parent
TWO_HOSTS = HERE / "data" / "two_hosts.xml"
L, B = 10e-6, 1e9


def scenario(tmp_path, body, **params):
    p = dict(steps=1, sim_ranks=1, sim_hosts="a", sim_ranks_per_host=64, sim_flops_per_element=0)
    p.update(params)
    lines = ['<?xml version="1.0"?>', '<scenario model="dtl" seed="1">', '  <platform file="%s"/>' % TWO_HOSTS]
    lines += ['  <param name="%s" value="%s"/>' % (k, v) for k, v in p.items()]
    lines += ['  <config name="network/latency-factor" value="1"/>',
              '  <config name="network/bandwidth-factor" value="1"/>']
    lines += ["  " + line for line in body.strip("\n").splitlines()]
    lines.append("</scenario>")
    path = tmp_path / ("s%d.xml" % len(list(tmp_path.glob("s*.xml"))))
    path.write_text("\n".join(lines) + "\n")
    return path


READER = '<reader name="{name}" ranks="{ranks}" hosts="b" ranks_per_host="64" flops_per_element="0" {extra}/>'


def test_two_streams_one_link_serialise(tmp_path):
    body = """
<stream name="temperature" shape="1000,250">
  %s
</stream>
<stream name="pressure" shape="500,500">
  %s
</stream>
""" % (READER.format(name="viz", ranks=1, extra=""), READER.format(name="stats", ranks=1, extra=""))
    res = simcore.load(scenario(tmp_path, body)).run()
    # The publisher ends each stream's step before the next: 2 x (L + 2 MB / B).
    assert res.metrics["makespan"] == pytest.approx(2 * (L + 2e6 / B), rel=1e-12)
    assert res.metrics["streams"] == 2
    readers = res.series["readers"]
    assert list(readers["stream"]) == [0, 1] and list(readers["bytes_received"]) == [2e6, 2e6]
    assert res.summary["sections"][0]["attributes"]["shape"] == [1000, 250]


def test_two_readers_of_one_stream_with_their_own_selection_and_rate(tmp_path):
    body = """
<stream name="field" shape="100,80,60">
  %s
  %s
</stream>
""" % (READER.format(name="all", ranks=3, extra='every="2"'),
       READER.format(name="slab", ranks=2, extra='selection_start="0,0,10" selection_count="100,80,5"'))
    res = simcore.load(scenario(tmp_path, body, steps=5, sim_ranks=6)).run()
    readers = res.series["readers"]
    full = 100 * 80 * 60 * 8
    assert list(readers["ranks"]) == [3, 2]
    assert list(readers["bytes_received"]) == [3 * full, 5 * (100 * 80 * 5 * 8)]  # transactions 0, 2, 4 / all 5


def test_explicit_uneven_blocks_are_used_and_checked(tmp_path):
    blocks = """
<stream name="field" shape="10,4">
  <block rank="0" start="0,0" count="7,4"/>
  <block rank="1" start="7,0" count="3,4"/>
  %s
</stream>
""" % READER.format(name="viz", ranks=2, extra="")
    res = simcore.load(scenario(tmp_path, blocks, sim_ranks=2)).run()
    ops = res.series["operations"]
    pub = ops["side"] == 0
    assert list(ops["bytes"][pub]) == [7 * 4 * 8, 3 * 4 * 8]  # per publisher: what its block sends
    assert res.metrics["bytes_received"] == 10 * 4 * 8

    overlap = blocks.replace('start="7,0" count="3,4"', 'start="6,0" count="4,4"')
    path = scenario(tmp_path, overlap, sim_ranks=2)
    with pytest.raises(simcore.InputError) as e:
        simcore.load(path).run()
    assert str(e.value) == ("%s:13: <block> of rank 1 overlaps rank 0's on [6:7, 0:4); expected disjoint blocks"
                            % path)

    outside = blocks.replace('start="7,0" count="3,4"', 'start="7,0" count="4,4"')
    path = scenario(tmp_path, outside, sim_ranks=2)
    with pytest.raises(simcore.InputError, match=r":13: <block> \[7:11, 0:4\) lies outside the array \[0:10, 0:4\)"):
        simcore.load(path).run()

    missing = blocks.replace('  <block rank="1" start="7,0" count="3,4"/>\n', "")
    path = scenario(tmp_path, missing, sim_ranks=2)
    with pytest.raises(simcore.InputError, match=r":11: <stream name=\"field\"> gives <block>s but none for rank 1"):
        simcore.load(path).run()


def test_stream_elements_replace_the_simple_form(tmp_path):
    body = '<stream name="s" shape="10">\n  %s\n</stream>' % READER.format(name="r", ranks=1, extra="")
    path = scenario(tmp_path, body, shape="20")
    with pytest.raises(simcore.InputError) as e:
        simcore.load(path).run()
    assert "parameter 'shape' belongs to the simple form; with <stream> elements, expected it on the <stream>" in str(e.value)
    assert str(e.value).startswith("%s:" % path)


def test_errors_in_elements_point_at_their_line(tmp_path):
    body = '<stream name="s" shape="10" engine="teleport">\n  %s\n</stream>' % READER.format(name="r", ranks=1, extra="")
    path = scenario(tmp_path, body)
    with pytest.raises(simcore.InputError, match=r":11: parameter 'engine' = 'teleport' is not allowed"):
        simcore.load(path)
    body = '<stream name="s" shape="10">\n  %s\n</stream>' % READER.format(name="r", ranks=1, extra='first="5"')
    path = scenario(tmp_path, body)
    with pytest.raises(simcore.InputError) as e:
        simcore.load(path).run()
    assert str(e.value) == ("%s:12: <reader> attribute 'first' = 5 but the simulation publishes only 1 "
                            "transactions (0 to 0); expected a transaction from 0 to 0" % path)
    body = '<stream name="s" shape="10"/>'
    path = scenario(tmp_path, body)
    with pytest.raises(simcore.InputError, match=r":11: <stream name=\"s\"> has no <reader>; expected at least one"):
        simcore.load(path).run()


VARS = """
<stream name="fields" {attrs}>
  <variable name="temperature" shape="1000,250"/>
  <variable name="pressure" shape="500,500"/>
  {reader}
</stream>
"""


def test_variables_of_one_stream_travel_in_one_transaction(tmp_path):
    body = VARS.format(attrs="", reader=READER.format(name="viz", ranks=1, extra=""))
    res = simcore.load(scenario(tmp_path, body)).run()
    # Both 2 MB pieces share the link in the same transaction: L + 4 MB / B (two streams
    # would take 2 (L + 2 MB / B), see above).
    assert res.metrics["makespan"] == pytest.approx(L + 4e6 / B, rel=1e-12)
    assert res.metrics["channels"] == 2 and res.metrics["transactions"] == 1
    assert list(res.series["operations"]["bytes"]) == [4e6, 4e6]


def test_file_engine_writes_every_variable_in_one_file(tmp_path):
    body = VARS.format(attrs='engine="file"', reader=READER.format(name="viz", ranks=1, extra=""))
    res = simcore.load(scenario(tmp_path, body)).run()
    m, w, r = 1e-3, 1e9, 2e9
    assert res.metrics["simulation_end"] == pytest.approx(2 * m + 4e6 / w, rel=1e-12)
    # The reader opens the one file twice (one piece per variable): 2 x (m + 2 MB/R + L + 2 MB/B + m).
    assert res.metrics["makespan"] == pytest.approx(2 * m + 4e6 / w + 2 * (2 * m + 2e6 / r + L + 2e6 / B), rel=1e-12)


def test_a_reader_selects_per_variable(tmp_path):
    reader = ('<reader name="viz" ranks="2" hosts="b" ranks_per_host="64" flops_per_element="0">\n'
              '    <select variable="pressure" start="100,100" count="50,20"/>\n'
              '  </reader>')
    body = VARS.format(attrs="", reader=reader)
    res = simcore.load(scenario(tmp_path, body, sim_ranks=3)).run()
    assert res.metrics["bytes_received"] == (1000 * 250 + 50 * 20) * 8


@pytest.mark.parametrize("attrs, reader, line, message", [
    ("", '<reader name="r" ranks="1" hosts="b"><select variable="wind"/></reader>', 14,
     "<select variable=\"wind\">: the stream has no such variable; expected one of temperature, pressure"),
    # Without the attribute, the error was located at "default".
    ("", '<reader name="r" ranks="1" hosts="b"><select start="0,0" count="1,1"/></reader>', 14,
     "<select variable=\"\">: the stream has no such variable; expected one of temperature, pressure"),
    ("", '<reader name="r" ranks="1" hosts="b" selection_start="0,0" selection_count="1,1"/>', 14,
     "applies to streams of one variable; this one has 2"),
    ('shape="10,10"', '<reader name="r" ranks="1" hosts="b"/>', 11,
     "<stream> attribute 'shape' with <variable> elements; expected it on each <variable>"),
])
def test_variable_errors(tmp_path, attrs, reader, line, message):
    path = scenario(tmp_path, VARS.format(attrs=attrs, reader=reader))
    with pytest.raises(simcore.InputError) as e:
        simcore.load(path).run()
    assert str(e.value).startswith("%s:%d: " % (path, line))
    assert message in str(e.value)


def test_duplicate_variable_and_misplaced_block(tmp_path):
    dup = VARS.replace('name="pressure"', 'name="temperature"').format(
        attrs="", reader=READER.format(name="viz", ranks=1, extra=""))
    with pytest.raises(simcore.InputError, match=r":13: a second <variable name=\"temperature\">"):
        simcore.load(scenario(tmp_path, dup)).run()
    misplaced = VARS.replace('<variable name="pressure" shape="500,500"/>',
                             '<variable name="pressure" shape="500,500"/>\n  <block rank="0" start="0" count="1"/>')
    with pytest.raises(simcore.InputError, match=r":14: <block> directly in a <stream> with <variable> elements"):
        simcore.load(scenario(tmp_path, misplaced.format(attrs="", reader=READER.format(name="v", ranks=1, extra=""))
                              )).run()
    two = READER.format(name="viz", ranks=1, extra="") + "\n  " + READER.format(name="viz", ranks=1, extra="")
    with pytest.raises(simcore.InputError, match=r":15: a second <reader name=\"viz\"> in <stream name=\"fields\"> "
                                                 r"\(the first is at .*:14\); expected unique reader names"):
        simcore.load(scenario(tmp_path, VARS.format(attrs="", reader=two))).run()


def test_python_models_lists_the_elements():
    dtl = next(m for m in simcore.models() if m["name"] == "dtl")
    (stream,) = dtl["elements"]
    assert stream["element"] == "stream"
    assert [c["element"] for c in stream["children"]] == ["variable", "block", "reader"]
    reader = stream["children"][2]
    assert [c["element"] for c in reader["children"]] == ["select"]
    assert {"name": "ranks", "type": "integer"}.items() <= reader["attributes"][1].items()
