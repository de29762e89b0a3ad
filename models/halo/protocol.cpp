#include "protocol.hpp"

#include <algorithm>

namespace halo {

const char* to_string(Protocol p)
{
  switch (p) {
    case Protocol::Eager: return "eager";
    case Protocol::Rendezvous: return "rendezvous";
    case Protocol::SingleCopy: return "single-copy";
    case Protocol::Pipelined: return "pipelined";
  }
  return "?";
}

Protocol static_protocol(double bytes, bool intra, const Protocols& p)
{
  if (intra)
    return bytes <= p.intra_eager_limit ? Protocol::Eager : Protocol::SingleCopy;
  return bytes <= p.inter_eager_limit ? Protocol::Eager : p.inter_large;
}

Protocol smpi_protocol(double bytes, const Protocols& p)
{
  return bytes < p.inter_eager_limit ? Protocol::Eager : Protocol::Rendezvous;
}

double predicted_time(Protocol p, const TransferOutlook& t, const Protocols& s)
{
  // The receiving node finishes when its NIC and its memory bus are both done: a protocol
  // adds latencies on the network path, or copies to the bus (alone at full speed among the
  // node's total, or at the end shared by the node's ranks).
  // A copy goes no faster than one core copies, however idle the bus (t.copy_least).
  const double alone = std::max(t.bytes / t.memory_bandwidth, t.copy_least);
  const double shared = std::max(t.bytes / t.memory_bandwidth * std::max(t.bus_users, 1.0), t.copy_least);
  if (t.intra) {
    if (p == Protocol::Eager) {
      // Into the shared buffer, in flight, out of it; to itself, straight into the receive.
      const double copies = t.self ? 1 : 2;
      return std::max(copies * shared, t.bus_seconds + copies * alone) + t.eager_in_flight;
    }
    return std::max(t.single_copy_startup.value_or(s.single_copy_startup) + std::max(shared, t.single_copy_least),
                    t.bus_seconds + std::max(alone, t.single_copy_least));
  }
  const double handshake = 2 * (t.latency + s.control_bytes / t.bandwidth);
  const double network = t.latency + t.nic_seconds;
  const double after_handshake = handshake + network;
  switch (p) {
    case Protocol::Eager: return std::max(network + shared, t.bus_seconds + alone);
    case Protocol::Rendezvous: return std::max(after_handshake, t.bus_seconds);
    case Protocol::Pipelined: {
      const double chunk = std::min(s.chunk_size, t.bytes) / t.bytes;
      return std::max(after_handshake + shared * chunk, t.bus_seconds + alone);
    }
    case Protocol::SingleCopy: break;
  }
  return 0;
}

Protocol dynamic_protocol(const TransferOutlook& t, const Protocols& s)
{
  Protocol best = static_protocol(t.bytes, t.intra, s);
  // Depart from the static choice only for a clear predicted gain: the prediction sees loads,
  // not the order in which transfers meet on the network.
  double best_time = predicted_time(best, t, s) * (1 - s.dynamic_margin);
  const Protocol candidates[2][3] = {{Protocol::Eager, Protocol::Rendezvous, Protocol::Pipelined},
                                     {Protocol::Eager, Protocol::SingleCopy, Protocol::SingleCopy}};
  for (Protocol p : candidates[t.intra ? 1 : 0]) {
    const double time = predicted_time(p, t, s);
    if (time < best_time) {
      best = p;
      best_time = time;
    }
  }
  return best;
}

} // namespace halo
