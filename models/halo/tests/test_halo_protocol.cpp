/* halo: the static thresholds and the dynamic policy's predicted completions. */
#include "../protocol.hpp"

#include <catch2/catch.hpp>

using halo::Protocol;

TEST_CASE("halo static protocol: thresholds per channel, the limit itself is eager", "[halo]")
{
  halo::Protocols p;
  REQUIRE(halo::static_protocol(65536, false, p) == Protocol::Eager);
  REQUIRE(halo::static_protocol(65537, false, p) == Protocol::Rendezvous);
  REQUIRE(halo::static_protocol(4096, true, p) == Protocol::Eager);
  REQUIRE(halo::static_protocol(4097, true, p) == Protocol::SingleCopy);
  p.inter_large = Protocol::Pipelined;
  REQUIRE(halo::static_protocol(1e6, false, p) == Protocol::Pipelined);
}

TEST_CASE("halo SMPI mode protocol: detached strictly below the threshold, on both channels", "[halo]")
{
  halo::Protocols p;
  REQUIRE(halo::smpi_protocol(65535, p) == Protocol::Eager);
  REQUIRE(halo::smpi_protocol(65536, p) == Protocol::Rendezvous);
  REQUIRE(halo::smpi_protocol(12800, p) == Protocol::Eager); // a single copy in the detailed mode
  p.inter_eager_limit = 0;
  REQUIRE(halo::smpi_protocol(1, p) == Protocol::Rendezvous);
  REQUIRE(halo::smpi_protocol(0, p) == Protocol::Rendezvous);
}

TEST_CASE("halo predicted completions: closed forms of each protocol", "[halo]")
{
  halo::Protocols p;
  p.control_bytes = 0;
  p.chunk_size = 1000;
  p.single_copy_startup = 2e-6;
  halo::TransferOutlook t;
  t.bytes = 10000;
  t.latency = 1e-6;
  t.bandwidth = 1e9;
  t.nic_seconds = 10000 / 1e9;
  t.memory_bandwidth = 1e10;
  t.bus_users = 4;
  t.bus_seconds = 0;
  const double copy = 10000 / 1e10;
  CHECK(halo::predicted_time(Protocol::Eager, t, p) == Approx(1e-6 + 1e-5 + 4 * copy));
  CHECK(halo::predicted_time(Protocol::Rendezvous, t, p) == Approx(3e-6 + 1e-5));
  CHECK(halo::predicted_time(Protocol::Pipelined, t, p) == Approx(3e-6 + 1e-5 + 4 * copy / 10));
  // A loaded bus dominates: the eager copy adds to what the bus already has to move.
  t.bus_seconds = 1e-3;
  CHECK(halo::predicted_time(Protocol::Eager, t, p) == Approx(1e-3 + copy));
  CHECK(halo::predicted_time(Protocol::Rendezvous, t, p) == Approx(1e-3));
  t.intra = true;
  t.bus_seconds = 0;
  CHECK(halo::predicted_time(Protocol::Eager, t, p) == Approx(2 * 4 * copy));
  CHECK(halo::predicted_time(Protocol::SingleCopy, t, p) == Approx(2e-6 + 4 * copy));
  // A single copy no faster than the fitted rate (2 GB/s here): slower than its bus share; the
  // eager copies keep the bus's rates.
  t.single_copy_least = 10000 / 2e9;
  CHECK(halo::predicted_time(Protocol::SingleCopy, t, p) == Approx(2e-6 + 10000 / 2e9));
  CHECK(halo::predicted_time(Protocol::Eager, t, p) == Approx(2 * 4 * copy));
  // The start-up at the message's size where the fit gives one (its segment's latency).
  t.single_copy_startup = 0.5e-6;
  CHECK(halo::predicted_time(Protocol::SingleCopy, t, p) == Approx(0.5e-6 + 10000 / 2e9));
  // An eager message in flight between its copies (what the detailed mode charges): added.
  t.eager_in_flight = 3e-6;
  CHECK(halo::predicted_time(Protocol::Eager, t, p) == Approx(2 * 4 * copy + 3e-6));
  t.bus_seconds = 1e-3;
  CHECK(halo::predicted_time(Protocol::Eager, t, p) == Approx(1e-3 + 2 * copy + 3e-6));
  // A message to itself: one copy, straight into the posted receive (MPI's self transport).
  t.bus_seconds = 0;
  t.eager_in_flight = 0;
  t.self = true;
  CHECK(halo::predicted_time(Protocol::Eager, t, p) == Approx(4 * copy));
}

TEST_CASE("halo dynamic policy: leaves the static choice only for a clear gain", "[halo]")
{
  halo::Protocols p;
  halo::TransferOutlook t;
  t.bytes = 100000; // static: rendezvous
  t.bandwidth = 1e10;
  t.nic_seconds = 1e-5;
  t.memory_bandwidth = 1e11;
  t.bus_users = 1;
  t.latency = 1e-4; // handshakes of 200 us against a 1 us copy: eager by far
  REQUIRE(halo::dynamic_protocol(t, p) == Protocol::Eager);
  t.latency = 2e-6; // eager predicted a little faster only: kept
  REQUIRE(halo::predicted_time(Protocol::Eager, t, p) < halo::predicted_time(Protocol::Rendezvous, t, p));
  REQUIRE(halo::dynamic_protocol(t, p) == Protocol::Rendezvous);
  p.dynamic_margin = 0;
  REQUIRE(halo::dynamic_protocol(t, p) == Protocol::Eager);
}
