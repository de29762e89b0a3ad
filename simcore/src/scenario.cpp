#include "simcore/scenario.hpp"
#include "simcore/sha256.hpp"
#include "simcore/error.hpp"
#include "simcore/model_registry.hpp"

#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace simcore {

namespace {

/** Locates XML nodes as "file:line" from their byte offset. */
class Locator {
public:
  Locator(std::string file, const std::string& text) : file_(std::move(file))
  {
    for (std::size_t i = 0; i < text.size(); i++)
      if (text[i] == '\n')
        newlines_.push_back(i);
  }
  std::string at_offset(std::ptrdiff_t offset) const
  {
    if (offset < 0)
      return file_;
    auto line = std::upper_bound(newlines_.begin(), newlines_.end(), static_cast<std::size_t>(offset)) -
                newlines_.begin() + 1;
    return file_ + ":" + std::to_string(line);
  }
  std::string at(const pugi::xml_node& n) const { return at_offset(n.offset_debug()); }
  const std::string& file() const { return file_; }

private:
  std::string file_;
  std::vector<std::size_t> newlines_;
};

void check_attributes(const pugi::xml_node& n, const std::set<std::string>& allowed, const Locator& loc)
{
  std::set<std::string> seen;
  for (const auto& a : n.attributes())
    if (!seen.insert(a.name()).second)
      throw InputError(loc.at(n), "<" + std::string(n.name()) + "> has attribute '" + a.name() +
                                      "' twice; expected it at most once");
  for (const auto& a : n.attributes())
    if (!allowed.count(a.name())) {
      std::string list;
      for (const auto& s : allowed)
        list += (list.empty() ? "" : ", ") + s;
      throw InputError(loc.at(n), "<" + std::string(n.name()) + "> has unknown attribute '" + a.name() +
                                      "'; expected: " + list);
    }
}

std::string required_attribute(const pugi::xml_node& n, const char* name, const Locator& loc)
{
  auto a = n.attribute(name);
  if (!a || std::string(a.value()).empty())
    throw InputError(loc.at(n), "<" + std::string(n.name()) + "> needs attribute " + name + "=\"...\"; expected it");
  return a.value();
}

std::string existing_file(const std::string& value, const std::string& base_dir, const std::string& what,
                          const std::string& where, const std::string& base_what = "the scenario file")
{
  fs::path p(value);
  if (p.is_relative())
    p = fs::path(base_dir) / p;
  p = p.lexically_normal();
  std::error_code ec;
  if (fs::exists(p, ec) && !fs::is_regular_file(p, ec))
    throw InputError(where, what + " file '" + p.string() + "' is not a regular file; expected a file");
  if (!fs::is_regular_file(p, ec))
    throw InputError(where, what + " file '" + p.string() + "' does not exist; expected a path relative to " + base_what);
  return p.string();
}

} // namespace

namespace {

Section parse_section(const pugi::xml_node& n, const SectionSpec& spec, const Locator& loc, const std::string& base_dir)
{
  const std::string where = loc.at(n);
  std::set<std::string> allowed;
  for (const auto& a : spec.attributes)
    allowed.insert(a.name);
  check_attributes(n, allowed, loc);
  ParamSet attrs(spec.attributes);
  for (const auto& a : n.attributes())
    attrs.set(a.name(), a.value(), where, base_dir);
  attrs.check_complete(where, spec.name);
  Section section(spec.name, where, std::move(attrs));
  for (const auto& c : n.children()) {
    if (c.type() == pugi::node_pcdata && !std::string(c.value()).empty() &&
        std::string(c.value()).find_first_not_of(" \t\r\n") != std::string::npos)
      throw InputError(loc.at(c), "<" + spec.name + "> holds text; expected only elements and attributes");
    if (c.type() != pugi::node_element)
      continue;
    const SectionSpec* child = nullptr;
    for (const auto& cs : spec.children)
      if (cs.name == c.name())
        child = &cs;
    if (!child) {
      std::string list;
      for (const auto& cs : spec.children)
        list += (list.empty() ? "<" : ", <") + cs.name + ">";
      throw InputError(loc.at(c), "unknown element <" + std::string(c.name()) + "> in <" + spec.name +
                                      ">; expected " + (list.empty() ? "none" : list));
    }
    section.add_child(parse_section(c, *child, loc, base_dir));
  }
  return section;
}

} // namespace

std::uint64_t parse_seed(const std::string& text, const std::string& where)
{
  const bool digits = !text.empty() && text.size() <= 20 &&
                      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  errno = 0;
  unsigned long long v = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE)
    throw InputError(where, "seed '" + text + "' is not valid; expected a non-negative integer below 2^64");
  return v;
}

Scenario Scenario::load(const std::string& path_arg)
{
  Scenario sc;
  std::error_code ec;
  // Resolve symbolic links, so that "../" in the file means what the operating system means.
  fs::path path = fs::weakly_canonical(fs::absolute(path_arg, ec), ec);
  // A FIFO or a device (/dev/zero) would block the read, or never end it.
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec) && !fs::is_directory(path, ec))
    throw InputError(path_arg, "is not a regular file; expected an existing XML file");
  std::ifstream in(path, std::ios::binary);
  if (!in || fs::is_directory(path, ec))
    throw InputError(path_arg, "cannot read the scenario file; expected an existing XML file");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  const Locator loc(path_arg, text);
  // pugixml reads UTF-16 and UTF-32 too, but the lines of its errors are counted here in the
  // file's bytes: a UTF-16 file's errors named wrong lines.
  if (const auto nul = text.find('\0'); nul != std::string::npos)
    throw InputError(loc.at_offset(static_cast<std::ptrdiff_t>(nul)),
                     "a NUL byte (UTF-16 or UTF-32 text?); expected an XML file in UTF-8");

  pugi::xml_document doc;
  pugi::xml_parse_result res = doc.load_buffer(text.data(), text.size(), pugi::parse_default | pugi::parse_comments);
  if (!res)
    throw InputError(loc.at_offset(res.offset), std::string("malformed XML (") + res.description() +
                                                    "); expected a <scenario> document");
  pugi::xml_node root = doc.document_element();
  if (std::string(root.name()) != "scenario")
    throw InputError(loc.at(root), "root element is <" + std::string(root.name()) + ">; expected <scenario>");
  // pugixml takes what follows the root element too, and a character reference to NUL ends
  // the text it stands in: both were dropped silently.
  for (auto n = root.next_sibling(); n; n = n.next_sibling())
    if (n.type() == pugi::node_element)
      throw InputError(loc.at(n), "a second root element <" + std::string(n.name()) +
                                      ">; expected one <scenario> per file");
  // Text after the root element (pugixml drops it): what follows the file's last '>'.
  if (const auto last = text.find_last_of('>');
      last != std::string::npos && text.find_first_not_of(" \t\r\n", last + 1) != std::string::npos)
    throw InputError(loc.at_offset(static_cast<std::ptrdiff_t>(text.find_first_not_of(" \t\r\n", last + 1))),
                     "text after the root element; expected the file to end with </scenario>");
  static const std::regex nul_reference("&#(0+|[xX]0+);");
  if (std::smatch m; std::regex_search(text, m, nul_reference))
    throw InputError(loc.at_offset(static_cast<std::ptrdiff_t>(m.position(0))),
                     "the character reference '" + m.str(0) + "' (NUL); expected text without NUL characters");
  check_attributes(root, {"model", "seed"}, loc);

  sc.path_ = path.string();
  sc.base_dir_ = path.parent_path().string();
  sc.sha256_ = sha256_hex(text);
  sc.model_ = required_attribute(root, "model", loc);
  sc.model_origin_ = loc.at(root);
  const ModelInfo* info = ModelRegistry::instance().find(sc.model_);
  if (!info) {
    std::string list;
    for (const auto* m : ModelRegistry::instance().all())
      list += (list.empty() ? "" : ", ") + m->name;
    throw InputError(loc.at(root), "unknown model '" + sc.model_ + "'; expected one of: " + list);
  }
  if (auto a = root.attribute("seed"))
    sc.seed_ = parse_seed(a.value(), loc.at(root));
  sc.params_ = ParamSet(info->params);

  std::set<std::string> seen_params, seen_config;
  std::map<std::string, std::string> seen_once; // <description>, <output>: where each was
  bool have_platform = false;
  for (const auto& n : root.children()) {
    if (n.type() == pugi::node_pcdata && std::string(n.value()).find_first_not_of(" \t\r\n") != std::string::npos)
      throw InputError(loc.at(n), "<scenario> holds text; expected only elements");
    if (n.type() != pugi::node_element)
      continue;
    const std::string tag = n.name();
    const std::string where = loc.at(n);
    // The kernel's own elements hold nothing (<description> text only): what was put inside
    // them (a <param> in an <output>) was ignored.
    if (tag == "description" || tag == "platform" || tag == "calibration" || tag == "param" || tag == "config" ||
        tag == "output")
      for (const auto& c : n.children()) {
        const bool text = c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata;
        if (c.type() == pugi::node_element ||
            (text && tag != "description" && std::string(c.value()).find_first_not_of(" \t\r\n") != std::string::npos))
          throw InputError(loc.at(c), "<" + tag + "> holds " +
                                          (c.type() == pugi::node_element ? "an element <" + std::string(c.name()) + ">"
                                                                          : std::string("text")) +
                                          ", which would be ignored; expected " +
                                          (tag == "description" ? "text only" : "attributes only") +
                                          " (each element directly in <scenario>)");
      }
    if (tag == "description" || tag == "output") {
      const auto [first, fresh] = seen_once.emplace(tag, where);
      if (!fresh)
        throw InputError(where, "a second <" + tag + "> (the first is at " + first->second +
                                    "); expected at most one");
    }
    if (tag == "description") {
      check_attributes(n, {}, loc);
      sc.description_ = n.text().get();
    } else if (tag == "platform") {
      check_attributes(n, {"file"}, loc);
      if (have_platform)
        throw InputError(where, "second <platform>; expected exactly one");
      sc.platform_ = existing_file(required_attribute(n, "file", loc), sc.base_dir_, "platform", where);
      have_platform = true;
    } else if (tag == "calibration") {
      check_attributes(n, {"file"}, loc);
      if (!sc.calibration_.empty())
        throw InputError(where, "second <calibration>; expected at most one");
      sc.calibration_ = existing_file(required_attribute(n, "file", loc), sc.base_dir_, "calibration", where);
    } else if (tag == "param") {
      check_attributes(n, {"name", "value"}, loc);
      std::string name = required_attribute(n, "name", loc);
      if (!n.attribute("value"))
        throw InputError(where, "<param name=\"" + name + "\"> needs attribute value=\"...\"; expected it");
      if (!seen_params.insert(name).second)
        throw InputError(where, "parameter '" + name + "' is given twice; expected each parameter at most once");
      sc.params_.set(name, n.attribute("value").value(), where, sc.base_dir_);
    } else if (tag == "config") {
      check_attributes(n, {"name", "value"}, loc);
      std::string name = required_attribute(n, "name", loc);
      if (!n.attribute("value"))
        throw InputError(where, "<config name=\"" + name + "\"> needs attribute value=\"...\"; expected it");
      if (!seen_config.insert(name).second)
        throw InputError(where, "SimGrid configuration '" + name + "' is given twice; expected each item at most once");
      sc.config_.push_back(ConfigItem{name, n.attribute("value").value(), where});
    } else if (tag == "output") {
      check_attributes(n, {"dir", "trace", "csv"}, loc);
      if (auto a = n.attribute("dir")) {
        sc.output_dir_ = a.value();
        sc.output_origin_ = where;
      }
      if (auto a = n.attribute("trace")) {
        std::string t = a.value();
        if (t != "true" && t != "false")
          throw InputError(where, "<output trace=\"" + t + "\"> is not valid; expected true or false");
        sc.write_trace_ = (t == "true");
      }
      if (auto a = n.attribute("csv")) {
        std::string t = a.value();
        if (t != "true" && t != "false")
          throw InputError(where, "<output csv=\"" + t + "\"> is not valid; expected true or false");
        sc.write_csv_ = (t == "true");
      }
    } else {
      const SectionSpec* spec = nullptr;
      for (const auto& s : info->sections)
        if (s.name == tag)
          spec = &s;
      if (!spec) {
        std::string list;
        for (const auto& s : info->sections)
          list += ", <" + s.name + ">";
        throw InputError(where, "unknown element <" + tag +
                                    ">; expected <description>, <platform>, <calibration>, <param>, <config>, <output>" +
                                    list);
      }
      sc.sections_.push_back(parse_section(n, *spec, loc, sc.base_dir_));
    }
  }
  if (!have_platform)
    throw InputError(loc.at(root), "no <platform file=\"...\"/>; expected exactly one");
  sc.params_.check_complete(loc.at(root));
  if (sc.output_dir_.empty())
    sc.output_dir_ = (fs::path("results") / path.stem()).string();
  return sc;
}

const ModelInfo& Scenario::model() const
{
  const ModelInfo* info = ModelRegistry::instance().find(model_);
  if (!info)
    throw InternalError("model '" + model_ + "' vanished from the registry");
  return *info;
}

void Scenario::set(const std::string& name, const std::string& value, const std::string& where)
{
  params_.set(name, value, where, fs::current_path().string());
}

void Scenario::set_calibration(const std::string& path, const std::string& where)
{
  if (path.empty()) {
    calibration_.clear();
    return;
  }
  calibration_ = existing_file(path, fs::current_path().string(), "calibration", where, "the working directory");
}

void Scenario::set_assignment(const std::string& assignment)
{
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set " + assignment, "expected name=value");
  set(assignment.substr(0, eq), assignment.substr(eq + 1), "--set " + assignment);
}

} // namespace simcore
