/* Regular expressions over names (hosts, links) that users write in scenarios and profiles. */
#pragma once

#include <regex>
#include <string>

namespace simcore {

/** `pattern` compiled as an ECMAScript std::regex, or InputError at `where` saying what is wrong
 *  with `what` (e.g. "parameter 'hosts' = '...'"). libstdc++'s std::regex compiles and matches by
 *  recursion and backtracking, so besides malformed patterns it refuses those it cannot match
 *  safely: longer than kMaxNamePattern characters, groups nested deeper than
 *  kMaxNamePatternDepth, and a group repeated by `*`, `+` or `{m,n}` that itself holds a
 *  repetition ("(a+)+", "(.*)*": exponential time on a name that does not match). */
std::regex compile_name_pattern(const std::string& pattern, const std::string& where, const std::string& what);

inline constexpr std::size_t kMaxNamePattern = 1000;
inline constexpr std::size_t kMaxNamePatternDepth = 16;

} // namespace simcore
