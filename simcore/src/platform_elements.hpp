/* Rules on single platform elements that SimGrid 3.32 parses and then aborts or crashes on
 * (private to simcore/src: the platform loader). */
#pragma once

#include <pugixml.hpp>

#include <functional>
#include <string>

namespace simcore {

/** One root zone; a host's `pstate` within its speeds; one bandwidth a link; a cluster's `bb_lat` only with a
 *  `bb_bw`; a `latency` on every link; `<peer>` only in a Vivaldi zone; `<host_link>` naming
 *  links of the platform (a split-duplex link by its `_UP` and `_DOWN` halves); a `<zoneRoute>`
 *  between zones inside the one that declares it. InputError at the element's line. */
void check_platform_elements(const pugi::xml_document& doc,
                             const std::function<std::string(const pugi::xml_node&)>& where);

} // namespace simcore
