/* The items of a law over message size as SimGrid writes them ("0:1.2;65536:0.9"): split at
 * ';' (private to simcore/src: network factors and message gaps). */
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace simcore {

/** The items of `text` between ';', an empty last one where `text` ends with ';' (for the
 *  caller to refuse: "0:1;" names an item that is not there). */
inline std::vector<std::string> size_law_items(const std::string& text)
{
  std::vector<std::string> entries;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ';');)
    entries.push_back(item);
  if (!text.empty() && text.back() == ';')
    entries.emplace_back();
  return entries;
}

} // namespace simcore
