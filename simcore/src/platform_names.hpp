/* The names a platform declares and the names its routes use, checked before SimGrid 3.32
 * reads them: it aborts on a link declared twice, and refuses the rest without a line
 * (private to simcore/src: the platform loader). */
#pragma once

#include <pugixml.hpp>

#include <functional>
#include <string>

namespace simcore {

/** Unique names: of hosts (a `<cluster>`'s or `<cabinet>`'s included) and routers, of zones
 *  (clusters included), of links (a split-duplex link's halves, a cluster's backbone
 *  included). Every route, zone route and bypass route holds a link. Each `<link_ctn>` names
 *  a link, with a direction for a split-duplex one only. A zone route's gateways lie in its
 *  zones. InputError at the element's line, naming the first declaration's line. Cluster
 *  radicals must have been checked already. */
void check_platform_names(const pugi::xml_document& doc,
                          const std::function<std::string(const pugi::xml_node&)>& where);

} // namespace simcore
