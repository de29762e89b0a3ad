/* The traces of a platform (<trace> elements, speed_file and bandwidth_file), checked before
 * SimGrid 3.32 reads them: it aborts, hangs or loses messages on some (private to simcore/src:
 * the platform loader). */
#pragma once

#include <pugixml.hpp>

#include <functional>
#include <string>

namespace simcore {

/** Every trace a platform uses: where SimGrid finds its file (the working directory or the
 *  platform's folder, by a relative path), its lines (DATE VALUE, dates from 0 and in order, values above 0 for speeds
 *  and bandwidths), its periodicity (0, or at least its last date and 1 ms), one use a file and
 *  one speed trace a host; latency traces and bandwidth or latency <trace_connect> refused.
 *  InputError at the element's line, or at the trace file's. */
void check_platform_traces(const pugi::xml_document& doc, const std::string& platform_path,
                           const std::function<std::string(const pugi::xml_node&)>& where);

} // namespace simcore
