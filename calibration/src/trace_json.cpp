#include "calibration/trace_json.hpp"

#include <simcore/error.hpp>
#include <simcore/json_locations.hpp>
#include <simcore/file_to_replace.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <limits>
#include <sstream>
#include <unistd.h>

namespace calibration {

namespace {

using nlohmann::json;

enum class Kind { kObject, kArray, kString };

const char* expected(Kind kind)
{
  return kind == Kind::kObject ? "an object" : kind == Kind::kArray ? "an array" : "a string";
}

/** object[key], which must exist and be of `kind`; `path` names `object` in the messages. */
const json& member(const json& object, const char* key, Kind kind, const std::string& where, const std::string& path)
{
  const auto it = object.find(key);
  if (it == object.end())
    throw simcore::InputError(where, path + ": no '" + key + "'; expected " + expected(kind));
  const bool ok = kind == Kind::kObject ? it->is_object() : kind == Kind::kArray ? it->is_array() : it->is_string();
  if (!ok)
    throw simcore::InputError(where, path + "." + key + " is " + it->type_name() + "; expected " + expected(kind));
  return *it;
}

std::map<std::string, std::string> text_map(const json& object, const std::string& where, const std::string& path)
{
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : object.items()) {
    if (!v.is_string())
      throw simcore::InputError(where, path + "." + k + " is " + v.type_name() + "; expected a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

Dataset dataset_of(const json& d, const std::string& where, const std::string& path)
{
  if (!d.is_object())
    throw simcore::InputError(where, path + " is " + std::string(d.type_name()) + "; expected an object");
  Dataset out;
  out.unit = member(d, "unit", Kind::kString, where, path).get<std::string>();
  const json& shape = member(d, "shape", Kind::kArray, where, path);
  if (shape.empty() || shape.size() > 2)
    throw simcore::InputError(where, path + ".shape has " + std::to_string(shape.size()) +
                                         " dimensions; expected 1 or 2");
  std::size_t count = 1;
  for (const auto& s : shape) {
    if (!s.is_number_unsigned())
      throw simcore::InputError(where, path + ".shape holds " + s.dump() + "; expected counts (integers >= 0)");
    const auto dim = s.get<std::size_t>();
    if (dim != 0 && count > std::numeric_limits<std::uint32_t>::max() / dim)
      throw simcore::InputError(where, path + ".shape " + shape.dump() + " is too large; expected fewer than 2^32 values");
    out.shape.push_back(dim);
    count *= dim;
  }
  const json& values = member(d, "values", Kind::kArray, where, path);
  if (values.size() != count)
    throw simcore::InputError(where, path + ".values holds " + std::to_string(values.size()) +
                                         " numbers; expected " + std::to_string(count) + " (the product of its shape)");
  out.values.reserve(count);
  for (std::size_t i = 0; i < values.size(); i++) {
    const json& v = values[i];
    if (v.is_number())
      out.values.push_back(v.get<double>());
    else if (v.is_null() || v == "nan")
      out.values.push_back(std::numeric_limits<double>::quiet_NaN());
    else if (v == "inf" || v == "-inf")
      out.values.push_back(v == "inf" ? HUGE_VAL : -HUGE_VAL);
    else
      throw simcore::InputError(where, path + ".values[" + std::to_string(i) + "] is " + v.type_name() +
                                           "; expected a number (or \"nan\", \"inf\", \"-inf\")");
  }
  return out;
}

} // namespace

bool is_json_trace_path(const std::string& path)
{
  if (path.size() < 5)
    return false;
  std::string ext = path.substr(path.size() - 5);
  for (char& c : ext)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".json";
}

std::string trace_to_json_text(const Trace& trace)
{
  json root;
  root["attributes"] = trace.attributes;
  json benchmarks = json::object();
  for (const auto& [name, b] : trace.benchmarks) {
    json datasets = json::object();
    for (const auto& [dname, d] : b.datasets) {
      json values = json::array();
      for (double v : d.values) // JSON has no NaN nor infinity: those go as text
        values.push_back(std::isfinite(v) ? json(v) : json(std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"));
      datasets[dname] = {{"unit", d.unit}, {"shape", d.shape}, {"values", std::move(values)}};
    }
    benchmarks[name] = {{"parameters", b.parameters}, {"datasets", std::move(datasets)}};
  }
  root["benchmarks"] = std::move(benchmarks);
  // Text that is not UTF-8 (a CPU model from an odd /proc) is kept with U+FFFD in its place.
  return root.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

namespace {

/** `text` parsed, and the first key given twice in one object ("" if none): nlohmann keeps the
 *  last of them silently. */
json parse_noting_duplicates(const std::string& text, std::string& duplicate)
{
  std::vector<std::set<std::string>> seen;
  return json::parse(text, [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start)
      seen.emplace_back();
    else if (event == json::parse_event_t::object_end && !seen.empty())
      seen.pop_back();
    else if (event == json::parse_event_t::key && !seen.empty() && !seen.back().insert(parsed.get<std::string>()).second &&
             duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  });
}

/** The trace a parsed document holds; errors name `where` and the element, at the head of the message. */
Trace trace_from_json(const json& root, const std::string& where);

} // namespace

Trace trace_from_json_text(const std::string& text, const std::string& where)
{
  json root;
  std::string duplicate;
  try {
    root = parse_noting_duplicates(text, duplicate);
  } catch (const json::parse_error& e) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(std::min<std::size_t>(e.byte, text.size())), '\n');
    throw simcore::InputError(where + ":" + std::to_string(line), std::string("not JSON that a trace can hold (") +
                                                                      e.what() + "); expected a calibration trace");
  } catch (const json::exception& e) { // out_of_range (a number beyond a double)
    throw simcore::InputError(where, std::string("not JSON that a trace can hold (") + e.what() +
                                         "); expected a calibration trace");
  }
  if (!duplicate.empty()) {
    const simcore::JsonLocations locations(text);
    const auto& twice = locations.first_duplicate();
    throw simcore::InputError(twice ? where + ":" + std::to_string(twice->second) : where,
                              "the key '" + duplicate + "' twice in one object; expected each name once");
  }
  try {
    return trace_from_json(root, where);
  } catch (const simcore::InputError& e) {
    // The element is named at the head of the message ("benchmarks.stream.datasets.size.shape
    // has ..."): give its line too.
    if (e.where() != where)
      throw;
    const std::string& detail = e.detail();
    std::string path = detail.substr(0, detail.find_first_of(": "));
    if (path == "trace")
      path.clear();
    const auto line = simcore::JsonLocations(text).line_of(path);
    if (!line)
      throw;
    throw simcore::InputError(where + ":" + std::to_string(*line), detail);
  }
}

namespace {

/** " (No space left on device)" for an errno; empty for 0. */
std::string reason(int error)
{
  return error ? std::string(" (") + std::strerror(error) + ")" : std::string();
}

Trace trace_from_json(const json& root, const std::string& where)
{
  if (!root.is_object())
    throw simcore::InputError(where, std::string("the document is ") + root.type_name() + "; expected an object");
  Trace t;
  t.attributes = text_map(member(root, "attributes", Kind::kObject, where, "trace"), where, "attributes");
  if (!t.attributes.count("schema"))
    throw simcore::InputError(where, std::string("attributes: no 'schema'; expected '") + kTraceSchema + "'");
  if (t.attributes["schema"] != kTraceSchema)
    throw simcore::InputError(where, "attributes.schema is '" + t.attributes["schema"] + "'; expected '" +
                                         kTraceSchema + "'");
  for (const auto& [name, b] : member(root, "benchmarks", Kind::kObject, where, "trace").items()) {
    const std::string path = "benchmarks." + name;
    if (!b.is_object())
      throw simcore::InputError(where, path + " is " + std::string(b.type_name()) + "; expected an object");
    Benchmark bm;
    bm.name = name;
    bm.parameters = text_map(member(b, "parameters", Kind::kObject, where, path), where, path + ".parameters");
    for (const auto& [dname, d] : member(b, "datasets", Kind::kObject, where, path).items())
      bm.datasets[dname] = dataset_of(d, where, path + ".datasets." + dname);
    t.benchmarks[name] = std::move(bm);
  }
  return t;
}

} // namespace

void write_trace_json(const std::string& path, const Trace& trace)
{
  const std::string text = trace_to_json_text(trace); // before any file exists
  // Two names that differ only in bytes that are not UTF-8 become one once those are replaced
  // by U+FFFD: one of them would be lost when the file is read back.
  std::string duplicate;
  parse_noting_duplicates(text, duplicate);
  if (!duplicate.empty())
    throw simcore::InputError(path, "two names read '" + duplicate + "' once their bytes that are not UTF-8 are "
                                    "replaced; expected names that stay apart in JSON");
  const std::filesystem::path target = simcore::file_to_replace(path);
  const std::string tmp = target.string() + ".tmp." + std::to_string(getpid());
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary);
    if (!out)
      throw simcore::InputError(path, "cannot create the trace file" + reason(errno) + "; expected a writable path");
    out << text;
    out.close();
    if (!out) {
      const int error = errno;
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw simcore::InputError(path, "cannot write the trace file" + reason(error) +
                                          "; expected a folder with room for its " + std::to_string(text.size()) +
                                          " bytes");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw simcore::InputError(path, "cannot write the trace file (" + ec.message() +
                                        "); expected a path that may be replaced");
  }
}

Trace read_trace_json(const std::string& path)
{
  if (std::filesystem::is_directory(path))
    throw simcore::InputError(path, "is a folder; expected a calibration trace file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw simcore::InputError(path, "no such trace file");
  std::ostringstream text;
  text << in.rdbuf();
  return trace_from_json_text(text.str(), path);
}

} // namespace calibration
