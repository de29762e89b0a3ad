/* The routes a platform declares in its zones, and what Vivaldi and Wi-Fi zones need, checked
 * before SimGrid 3.32 reads them: it aborts, crashes or never ends on some (private to
 * simcore/src: the platform loader). */
#pragma once

#include <pugixml.hpp>

#include <functional>
#include <string>

namespace simcore {

/** In each zone, a `<route>` or `<zoneRoute>` declared twice (a symmetrical one counting for
 *  both directions) or a symmetrical one from a point to itself outside a Full zone; a Wi-Fi
 *  zone or link; `coordinates` other than three finite numbers of at most 1e8 (ms), and a host
 *  of a Vivaldi zone without them. InputError at the element's line. */
void check_zone_routes(const pugi::xml_document& doc, const std::function<std::string(const pugi::xml_node&)>& where);

} // namespace simcore
