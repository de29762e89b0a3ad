#include "platform_traces.hpp"
#include "simcore/error.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

namespace simcore {

namespace {

/** Checks the text of one trace: `at(line)` locates its line n (from 1), `positive` asks values
 *  above 0 (a speed or bandwidth of 0 made SimGrid 3.32 abort: "The Impossible Did Happen"). */
void check_trace_text(const std::string& text, double periodicity, bool positive,
                      const std::function<std::string(int)>& at, const std::string& what)
{
  std::istringstream lines(text);
  std::string line;
  double last = -1;
  bool loop_after = false; // LOOPAFTER d: the trace starts again d after its last date
  int keyword_line = 0;     // where PERIODICITY or LOOPAFTER was
  int n = 0;
  while (std::getline(lines, line)) {
    ++n;
    std::istringstream fields(line);
    std::string first;
    if (!(fields >> first) || first.front() == '#' || first.front() == '%')
      continue;
    if (first == "PERIODICITY" || first == "LOOPAFTER") {
      // A second one failed an assertion; a negative delay aborted, a negative period never ended.
      std::string extra;
      if (keyword_line > 0)
        throw InputError(at(n), what + ": '" + line + "' after the " + (loop_after ? "LOOPAFTER" : "PERIODICITY") +
                                    " of line " + std::to_string(keyword_line) +
                                    "; expected one PERIODICITY or LOOPAFTER a trace");
      if (!(fields >> periodicity) || (fields >> extra) || !(periodicity > 0) || !std::isfinite(periodicity))
        throw InputError(at(n), what + ": '" + line + "'; expected " + first + " and a time in s above 0");
      loop_after = first == "LOOPAFTER";
      keyword_line = n;
      continue;
    }
    char* end = nullptr;
    const double date = std::strtod(first.c_str(), &end);
    std::string value_text, extra;
    double value = 0;
    bool number = *end == '\0' && static_cast<bool>(fields >> value_text) && !(fields >> extra);
    if (number) {
      value = std::strtod(value_text.c_str(), &end);
      number = *end == '\0' && std::isfinite(date) && std::isfinite(value);
    }
    if (!number)
      throw InputError(at(n), what + ": line '" + line + "'; expected DATE VALUE, two finite numbers");
    // A negative date or value failed an assertion (an abort); so did dates out of order.
    if (date < 0 || date < last)
      throw InputError(at(n), what + ": line '" + line + "' has date " + first + (date < 0 ? "" : " before the line above") +
                                  "; expected dates from 0 on, in order");
    if (value < 0 || (positive && value == 0))
      throw InputError(at(n), what + ": line '" + line + "' has value " + value_text + "; expected values " +
                                  (positive ? "above 0 (a speed or bandwidth of 0 stops SimGrid 3.32)" : "of 0 or more"));
    last = date;
  }
  // A period shorter than the last date aborted ("Profile loop conditions are not realizable");
  // 1e-9 s repeated the trace so often the run never ended.
  // A periodicity of 0 or below (the DTD's default: -1) repeats nothing.
  if (periodicity > 0 && !(periodicity >= std::max(loop_after ? 0.0 : last, 1e-3) && std::isfinite(periodicity))) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", periodicity);
    throw InputError(at(0), what + ": periodicity " + text + " s; expected 0 (no repetition), " +
                                (loop_after ? "or a delay of at least 1 ms" : "or a time of at least the last date and 1 ms"));
  }
}

} // namespace

void check_platform_traces(const pugi::xml_document& doc, const std::string& platform_path,
                           const std::function<std::string(const pugi::xml_node&)>& where)
{
  // <trace_connect>: SimGrid 3.32 connects a trace to a link after sealing it ("Cannot set a
  // bandwidth profile once the Link is sealed": an abort); bandwidth_file on the <link> works.
  std::map<std::string, std::string> kind_of_trace; // <trace id> -> kind it is connected as
  std::map<std::string, std::string> speed_trace_of; // host -> where its speed trace comes from
  for (const auto& hit : doc.select_nodes("//trace_connect")) {
    const pugi::xml_node n = hit.node();
    const std::string kind = n.attribute("kind").value();
    if (kind == "BANDWIDTH" || kind == "LATENCY")
      throw InputError(where(n), "<trace_connect kind=\"" + kind + "\">: SimGrid 3.32 cannot set a link's " +
                                     (kind == "BANDWIDTH" ? "bandwidth" : "latency") +
                                     " trace this way (it aborts); expected " +
                                     (kind == "BANDWIDTH" ? "bandwidth_file=\"...\" on the <link>" : "no latency trace"));
    kind_of_trace[n.attribute("trace").value()] = kind;
    if (kind == "SPEED") {
      // "Cannot set a second speed trace to Host a": an abort.
      const std::string host = n.attribute("element").value();
      if (const auto first = speed_trace_of.find(host); first != speed_trace_of.end())
        throw InputError(where(n), "a second <trace_connect kind=\"SPEED\"> for host '" + host + "' (the first at " +
                                       first->second + "); expected one speed trace a host");
      speed_trace_of[host] = where(n);
    }
  }
  // Inline traces.
  std::map<std::string, std::string> trace_ids; // "Refusing to define trace t twice": an abort
  for (const auto& hit : doc.select_nodes("//trace")) {
    const pugi::xml_node n = hit.node();
    const std::string id = n.attribute("id").value();
    const std::string at = where(n);
    // "Trace 't' must have either a content, or point to a file on disk": an abort.
    if (std::string(n.text().get()).find_first_not_of(" \t\r\n") == std::string::npos)
      throw InputError(at, "<trace id=\"" + id + "\"> without lines; expected its DATE VALUE lines inside it");
    if (const auto [first, fresh] = trace_ids.emplace(id, at); !fresh)
      throw InputError(at, "a second <trace id=\"" + id + "\"> (the first at " + first->second +
                               "); expected unique trace ids");
    if (n.attribute("file") && std::string(n.attribute("file").value()) != "")
      throw InputError(at, "<trace id=\"" + id + "\" file=...>; expected the trace's lines inside the element "
                           "(or speed_file or bandwidth_file on its host or link)");
    // SimGrid 3.32 reads the period with std::stod: past a double either way ("1e-400s"), its
    // exception ended the run (exit 1).
    const char* period_text = n.attribute("periodicity").value();
    errno = 0;
    const double period = std::strtod(period_text, nullptr);
    if (errno == ERANGE || !std::isfinite(period))
      throw InputError(at, "<trace id=\"" + id + "\" periodicity=\"" + period_text +
                               "\">: a number a double cannot hold; expected a period in seconds");
    const auto kind = kind_of_trace.find(id);
    check_trace_text(n.text().get(), period,
                     kind != kind_of_trace.end() && kind->second == "SPEED", [&at](int) { return at; },
                     "<trace id=\"" + id + "\">");
  }
  // Trace files.
  std::map<std::string, std::string> file_users;
  for (const auto& hit : doc.select_nodes("//*[@speed_file] | //*[@availability_file] | //*[@bandwidth_file] | "
                                          "//*[@latency_file]")) {
    const pugi::xml_node n = hit.node();
    for (const char* attribute : {"speed_file", "availability_file", "bandwidth_file", "latency_file"}) {
      const std::string file = n.attribute(attribute).value();
      if (file.empty())
        continue;
      const std::string at = where(n);
      const std::string what = "<" + std::string(n.name()) + " " + attribute + "=\"" + file + "\">";
      // A latency changed while a message crossed the link lost it: the run deadlocked.
      if (std::string(attribute) == "latency_file")
        throw InputError(at, what + ": SimGrid 3.32 loses a message crossing the link when its latency changes "
                                    "during the message's latency (the run deadlocks; under network/optim:Full the "
                                    "latency ends at once); expected no latency trace");
      if (std::string(n.name()) == "host" && speed_trace_of.count(n.attribute("id").value()))
        throw InputError(at, what + " and a <trace_connect kind=\"SPEED\"> at " +
                                 speed_trace_of[n.attribute("id").value()] +
                                 " for one host (SimGrid 3.32 aborts); expected one speed trace a host");
      if (const auto [first, fresh] = file_users.emplace(file, at); !fresh)
        throw InputError(at, what + ": the file is used at " + first->second +
                                 " already (SimGrid 3.32 aborts on a second use); expected a file per trace");
      // SimGrid 3.32 opens "./" + the name, then the platform's folder + the name: never a
      // file by absolute path ("Cannot open file", an abort).
      namespace fs = std::filesystem;
      std::error_code ec;
      const fs::path folder = fs::absolute(platform_path, ec).parent_path();
      fs::path path(file);
      if (!path.is_absolute() && !fs::is_regular_file(path, ec))
        path = folder / file;
      if (fs::path(file).is_absolute() || !fs::is_regular_file(path, ec))
        throw InputError(at, what + ": " +
                                 (fs::path(file).is_absolute()
                                      ? std::string("an absolute path")
                                      : "no such file in the working directory (" + fs::current_path(ec).string() +
                                            ") or the platform's folder (" + folder.string() + ")") +
                                 "; expected a path relative to the working directory or the platform's folder, "
                                 "where SimGrid 3.32 looks for trace files");
      std::ifstream in(path, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const std::string shown = path.string();
      check_trace_text(text, 0, true,
                       [&shown, &at](int line) { return line > 0 ? shown + ":" + std::to_string(line) : at; },
                       "trace file '" + file + "'");
    }
  }
}

} // namespace simcore
