#include "simcore/name_pattern.hpp"
#include "simcore/error.hpp"

#include <vector>

namespace simcore {

namespace {

/** What makes `pattern` unsafe for std::regex, or "" (see compile_name_pattern). Escapes and
 *  bracket expressions are skipped whole; a quantifier's `?` (lazy) is no quantifier of its own. */
std::string unsafe_reason(const std::string& p)
{
  if (p.size() > kMaxNamePattern)
    return "it has " + std::to_string(p.size()) + " characters; expected at most " + std::to_string(kMaxNamePattern);
  std::vector<bool> repeats{false}; // per open group (and the whole pattern): holds a repetition
  bool last_group_repeats = false;  // the atom just before: a group that holds a repetition
  bool after_quantifier = false;
  for (std::size_t i = 0; i < p.size(); i++) {
    const char c = p[i];
    const bool was_after_quantifier = after_quantifier;
    after_quantifier = false;
    if (c == '\\') {
      i++;
      last_group_repeats = false;
    } else if (c == '[') {
      std::size_t j = i + 1;
      if (j < p.size() && p[j] == '^')
        j++;
      if (j < p.size() && p[j] == ']')
        j++;
      for (; j < p.size() && p[j] != ']'; j++)
        if (p[j] == '\\')
          j++;
      i = j;
      last_group_repeats = false;
    } else if (c == '(') {
      repeats.push_back(false);
      if (repeats.size() - 1 > kMaxNamePatternDepth)
        return "its groups nest more than " + std::to_string(kMaxNamePatternDepth) + " deep";
      last_group_repeats = false;
    } else if (c == ')') {
      if (repeats.size() > 1) {
        last_group_repeats = repeats.back();
        repeats.pop_back();
        repeats.back() = repeats.back() || last_group_repeats;
      }
    } else if (c == '*' || c == '+' || c == '{' || c == '?') {
      if (c == '?' && was_after_quantifier)
        continue; // lazy: "*?"
      bool many = c != '?';
      if (c == '{') { // {m}, {m,} or {m,n}: many unless it allows one at most
        const auto close = p.find('}', i);
        const std::string body = close == std::string::npos ? "" : p.substr(i + 1, close - i - 1);
        const auto comma = body.find(',');
        const std::string upper = comma == std::string::npos ? body : body.substr(comma + 1);
        many = upper.empty() || upper.find_first_not_of("01") != std::string::npos;
        if (close != std::string::npos)
          i = close;
      }
      if (many && last_group_repeats)
        return "a repeated group holds a repetition itself (as in \"(a+)+\"), which std::regex matches in "
               "exponential time; expected a pattern without nested repetition";
      repeats.back() = true;
      last_group_repeats = false;
      after_quantifier = true;
    } else {
      last_group_repeats = false;
    }
  }
  return "";
}

} // namespace

std::regex compile_name_pattern(const std::string& pattern, const std::string& where, const std::string& what)
{
  const std::string shown = pattern.size() > 80 ? pattern.substr(0, 77) + "..." : pattern;
  if (const std::string reason = unsafe_reason(pattern); !reason.empty())
    throw InputError(where, what + " '" + shown + "' is refused: " + reason);
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InputError(where, what + " '" + shown + "' is not a valid regular expression (" + e.what() +
                                "); expected an ECMAScript regular expression such as node-[0-9]+ (or .* for all)");
  }
}

} // namespace simcore
