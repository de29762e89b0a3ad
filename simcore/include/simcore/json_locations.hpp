/* Lines of the keys and values of a JSON text, so that errors found after parsing (nlohmann
 * keeps no positions) can name the line of what they are about. */
#pragma once

#include "simcore/error.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace simcore {

/** The line where each value of a well-formed JSON text starts, by its path: "" for the root,
 *  "hosts[0].rates.copy" for a member of a member of an array element. A member's place is that
 *  of its key. Built on demand, when an error is to be reported. */
class JsonLocations {
public:
  /** `text` must be JSON that nlohmann parsed (a leading UTF-8 byte-order mark is skipped);
   *  it is not kept. */
  explicit JsonLocations(const std::string& text);

  /** 1-based line of the value at `path`; of its nearest enclosing value when the path is not in
   *  the text; nullopt for a text without values. */
  std::optional<std::size_t> line_of(std::string path) const;

  /** The first key given twice in one object: its path and the line of its second occurrence. */
  const std::optional<std::pair<std::string, std::size_t>>& first_duplicate() const { return duplicate_; }

  /** `error` located at "FILE (PATH)" (or "FILE (PATH", or "FILE" for the root) relocated to
   *  "FILE:LINE (PATH)". An "unknown key 'K'" error is placed at the key. Other errors are
   *  returned as they are. */
  InputError locate(const InputError& error, const std::string& file) const;

  /** A location "FILE (PATH)" (or "FILE (PATH", or "FILE") as "FILE:LINE (PATH)", or as it is
   *  when it is not one of those. For the locations kept to report errors later. */
  std::string located(const std::string& where, const std::string& file) const;

private:
  std::map<std::string, std::size_t> lines_;
  std::optional<std::pair<std::string, std::size_t>> duplicate_;
};

} // namespace simcore
