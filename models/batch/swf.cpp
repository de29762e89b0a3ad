#include "swf.hpp"

#include <simcore/error.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace batch {

namespace {

const char* const kFieldNames[18] = {"job number",       "submit time",      "wait time",        "run time",
                                     "allocated processors", "average CPU time", "used memory",
                                     "requested processors", "requested time", "requested memory", "status",
                                     "user id",          "group id",         "application",      "queue",
                                     "partition",        "preceding job",    "think time"};

double parse_number(const std::string& token, const std::string& where, int field)
{
  const char* s = token.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !std::isfinite(v) || token.find_first_of("xXnNiI") != std::string::npos)
    throw simcore::InputError(where, "field " + std::to_string(field + 1) + " (" + kFieldNames[field] + ") is '" +
                                         token + "'; expected a number (-1 when unknown)");
  return v;
}

std::int64_t as_integer(double v, const std::string& token, const std::string& where, int field)
{
  if (v != std::floor(v))
    throw simcore::InputError(where, "field " + std::to_string(field + 1) + " (" + kFieldNames[field] + ") is '" +
                                         token + "'; expected an integer (-1 when unknown)");
  return static_cast<std::int64_t>(v);
}

void read_header(const std::string& line, SwfHeader& h)
{
  // "; MaxProcs: 240"
  const auto colon = line.find(':');
  if (colon == std::string::npos)
    return;
  std::string key = line.substr(1, colon - 1);
  key.erase(0, key.find_first_not_of(" \t"));
  key.erase(key.find_last_not_of(" \t") + 1);
  const std::string value = line.substr(colon + 1);
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (end == value.c_str())
    return;
  if (key == "MaxProcs")
    h.max_procs = static_cast<std::int64_t>(v);
  else if (key == "MaxNodes")
    h.max_nodes = static_cast<std::int64_t>(v);
  else if (key == "UnixStartTime")
    h.unix_start_time = v;
  else if (key == "TimeZone")
    h.timezone = v;
}

} // namespace

SwfTrace read_swf(const std::string& path, const SwfOptions& o)
{
  std::ifstream in(path);
  if (!in)
    throw simcore::InputError(path, "cannot open the workload file; expected a Standard Workload Format file");
  SwfTrace trace;
  std::string line;
  std::int64_t n = 0;
  double first_submit = -1;
  while (std::getline(in, line)) {
    n++;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos)
      continue;
    if (line[start] == ';') {
      read_header(line.substr(start), trace.header);
      continue;
    }
    const std::string where = path + ":" + std::to_string(n);
    std::istringstream fields(line);
    std::vector<std::string> tokens;
    std::string t;
    while (fields >> t)
      tokens.push_back(t);
    if (tokens.size() < 18)
      throw simcore::InputError(where, "has " + std::to_string(tokens.size()) +
                                           " fields; expected the 18 fields of SWF 2.2 (-1 when unknown)");
    if (tokens.size() > 18)
      trace.extra_field_lines++;
    double v[18];
    for (int f = 0; f < 18; f++)
      v[f] = parse_number(tokens[f], where, f);
    SwfRecord r;
    r.id = as_integer(v[0], tokens[0], where, 0);
    r.submit = v[1];
    r.wait = v[2];
    r.run = v[3];
    r.allocated_procs = as_integer(v[4], tokens[4], where, 4);
    r.avg_cpu = v[5];
    r.used_memory = v[6];
    r.requested_procs = as_integer(v[7], tokens[7], where, 7);
    r.requested_time = v[8];
    r.requested_memory = v[9];
    r.status = as_integer(v[10], tokens[10], where, 10);
    r.user = as_integer(v[11], tokens[11], where, 11);
    r.group = as_integer(v[12], tokens[12], where, 12);
    r.application = as_integer(v[13], tokens[13], where, 13);
    r.queue = as_integer(v[14], tokens[14], where, 14);
    r.partition = as_integer(v[15], tokens[15], where, 15);
    r.preceding_job = as_integer(v[16], tokens[16], where, 16);
    r.think_time = v[17];
    r.line = n;
    if (r.submit < 0)
      throw simcore::InputError(where, "field 2 (submit time) is " + tokens[1] + "; expected a time >= 0");
    if (r.submit < o.window_start || (o.window_end >= 0 && r.submit >= o.window_end))
      continue;
    if (!o.keep_cancelled && (r.status == 0 || r.status == 5)) {
      trace.dropped_status++;
      continue;
    }
    if (first_submit < 0)
      first_submit = r.submit;
    trace.records.push_back(r);
    if (o.first_jobs > 0 && static_cast<std::int64_t>(trace.records.size()) >= o.first_jobs)
      break;
  }
  // Load scaling: inter-arrival times divided by the factor, from the first kept job.
  if (o.load_factor != 1 && !trace.records.empty()) {
    const double t0 = trace.records.front().submit;
    for (auto& r : trace.records)
      r.submit = t0 + (r.submit - t0) / o.load_factor;
  }
  return trace;
}

} // namespace batch
