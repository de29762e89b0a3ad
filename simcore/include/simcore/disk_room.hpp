/* Room on disk for a run's result files, checked before the run: a run of hours whose
 * results cannot be written is refused at once instead of failing when it ends. */
#pragma once

#include "simcore/model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace simcore {

/** What the result files are sure to take on disk, and how it was counted. */
struct DiskNeed {
  std::uint64_t bytes = 0;
  std::string what; ///< "trace.h5 at 8 B a value: tasks 1000000 rows x 6 columns, ..."
};

/** A lower bound of the bytes the result files of `tables` take: in trace.h5 (`trace`) 8 B a
 *  value, in each CSV table (`csv`) 2 B a value (at least one character and a separator).
 *  Saturates at UINT64_MAX. */
DiskNeed result_disk_need(const std::vector<TableSize>& tables, bool trace, bool csv);

/** Bytes this process may still write on the file system that holds `dir` (or would hold it:
 *  its nearest existing parent): the blocks free to users, or all free blocks for root;
 *  nullopt where statvfs cannot say, or gives a file system of no blocks (some network and
 *  FUSE file systems do). */
std::optional<std::uint64_t> free_disk_bytes(const std::string& dir);

/** InputError at `where` when `need` passes what the output folder `dir` has free, counting
 *  the files of an earlier result there (earlier_result_files(): its summary.json, trace.h5 and
 *  the CSV tables its summary names), which the run removes first, where removing them frees
 *  their bytes (a regular file of one link). Checks nothing where the free space is unknown. */
void require_disk_room(const std::string& dir, const std::string& where, const DiskNeed& need);

} // namespace simcore
