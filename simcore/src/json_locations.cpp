#include "simcore/json_locations.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <string_view>
#include <vector>

namespace simcore {

namespace {

std::string member_path(const std::string& object, const std::string& key)
{
  return object.empty() ? key : object + "." + key;
}

std::string element_path(const std::string& array, std::size_t index)
{
  return array + "[" + std::to_string(index) + "]";
}

/** Offset just past the string token that opens at `open` (a '"'). */
std::size_t string_end(const std::string& text, std::size_t open)
{
  std::size_t i = open + 1;
  while (i < text.size() && text[i] != '"')
    i += text[i] == '\\' ? 2 : 1;
  return std::min(i + 1, text.size());
}

} // namespace

JsonLocations::JsonLocations(const std::string& text)
{
  struct Frame {
    bool object;
    std::string path;
    std::size_t index = 0;
    std::set<std::string> keys;
    bool deep = false; ///< below kMaxDepth: its values are not recorded
  };
  // The paths of a deep nesting would take memory quadratic in its depth; no error names one.
  constexpr std::size_t kMaxDepth = 64;
  std::vector<Frame> open; // an explicit stack: nesting depth is the input's to choose
  std::string value_path;  // path of the next value
  bool expect_key = false;
  std::size_t i = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  const auto deep = [&] { return !open.empty() && open.back().deep; };
  std::size_t line = 1; // of text[i]
  const auto record = [&] {
    if (!deep())
      lines_.emplace(value_path, line);
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ':') {
      line += c == '\n';
      i++;
    } else if (c == '{' || c == '[') {
      record();
      const bool too_deep = deep() || open.size() >= kMaxDepth;
      open.push_back(Frame{c == '{', too_deep ? std::string() : value_path, 0, {}, too_deep});
      expect_key = c == '{';
      if (c == '[' && !too_deep)
        value_path = element_path(open.back().path, 0);
      i++;
    } else if (c == '}' || c == ']') {
      if (!open.empty())
        open.pop_back();
      expect_key = false;
      i++;
    } else if (c == ',') {
      if (!open.empty() && open.back().object)
        expect_key = true;
      else if (!open.empty() && !deep())
        value_path = element_path(open.back().path, ++open.back().index);
      i++;
    } else if (c == '"') {
      const std::size_t end = string_end(text, i);
      if (expect_key && !open.empty() && !deep()) {
        std::string key;
        try { // nlohmann decodes the escapes as it did when it parsed the text
          key = nlohmann::json::parse(text.substr(i, end - i)).get<std::string>();
        } catch (const nlohmann::json::exception&) {
          key = text.substr(i + 1, end - i - 2);
        }
        value_path = member_path(open.back().path, key);
        if (!open.back().keys.insert(key).second && !duplicate_)
          duplicate_.emplace(value_path, line);
      }
      expect_key = false;
      record();
      line += static_cast<std::size_t>(std::count(text.begin() + static_cast<long>(i), text.begin() + static_cast<long>(end), '\n'));
      i = end;
    } else { // a number, true, false or null
      record();
      while (i < text.size() && std::string_view(",}] \t\r\n").find(text[i]) == std::string_view::npos)
        i++;
    }
  }
}

std::optional<std::size_t> JsonLocations::line_of(std::string path) const
{
  for (;;) {
    if (const auto it = lines_.find(path); it != lines_.end())
      return it->second;
    if (path.empty())
      return std::nullopt;
    const auto cut = path.find_last_of(".[");
    path.resize(cut == std::string::npos ? 0 : cut);
  }
}

namespace {

/** The PATH of "FILE (PATH)", "FILE (PATH" or "FILE" (""); nullopt for another location. */
std::optional<std::string> path_in(const std::string& where, const std::string& file)
{
  if (where == file)
    return std::string();
  if (where.rfind(file + " (", 0) != 0)
    return std::nullopt;
  std::string path = where.substr(file.size() + 2);
  if (!path.empty() && path.back() == ')')
    path.pop_back();
  return path;
}

std::string with_line(const std::string& file, std::size_t line, const std::string& path)
{
  return file + ":" + std::to_string(line) + (path.empty() ? "" : " (" + path + ")");
}

} // namespace

std::string JsonLocations::located(const std::string& where, const std::string& file) const
{
  const auto path = path_in(where, file);
  const auto line = path ? line_of(*path) : std::nullopt;
  return line ? with_line(file, *line, *path) : where;
}

InputError JsonLocations::locate(const InputError& error, const std::string& file) const
{
  const auto path = path_in(error.where(), file);
  if (!path)
    return error;
  std::string target = *path;
  const std::string unknown = "unknown key '";
  if (error.detail().rfind(unknown, 0) == 0) {
    const auto close = error.detail().find('\'', unknown.size());
    if (close != std::string::npos)
      target = member_path(*path, error.detail().substr(unknown.size(), close - unknown.size()));
  }
  const auto line = line_of(target);
  return line ? InputError(with_line(file, *line, *path), error.detail()) : error;
}

} // namespace simcore
