#include "simcore/disk_room.hpp"
#include "simcore/error.hpp"
#include "simcore/memory_guard.hpp"
#include "simcore/result_writer.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

namespace fs = std::filesystem;

namespace simcore {

namespace {

/** a + b, or UINT64_MAX past it. */
std::uint64_t saturated_sum(std::uint64_t a, std::uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/** a x b, or UINT64_MAX past it. */
std::uint64_t saturated_product(std::uint64_t a, std::uint64_t b)
{
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/** "57 MiB (59769984 B)": the rounded size, and the bytes where the two compared sizes may
 *  round alike. */
std::string size_text(std::uint64_t bytes)
{
  return format_memory(bytes) + " (" + std::to_string(bytes) + " B)";
}

} // namespace

DiskNeed result_disk_need(const std::vector<TableSize>& tables, bool trace, bool csv)
{
  DiskNeed need;
  for (const auto& [file, per_value] : {std::pair<const char*, std::uint64_t>{"trace.h5", 8}, {"the CSV tables", 2}}) {
    if (!(per_value == 8 ? trace : csv))
      continue;
    std::string counted;
    for (const auto& t : tables) {
      if (t.rows == 0 || t.columns == 0)
        continue;
      need.bytes = saturated_sum(need.bytes, saturated_product(saturated_product(t.rows, t.columns), per_value));
      counted += (counted.empty() ? "" : ", ") + t.name + " " + std::to_string(t.rows) + " rows x " +
                 std::to_string(t.columns) + " columns";
    }
    if (!counted.empty())
      need.what += (need.what.empty() ? "" : "; ") + std::string(file) + " at " + std::to_string(per_value) +
                   " B a value: " + counted;
  }
  return need;
}

std::optional<std::uint64_t> free_disk_bytes(const std::string& dir)
{
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  if (ec)
    return std::nullopt;
  while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path())
    p = p.parent_path();
  struct statvfs fs_info {};
  // A file system that gives no size (some network and FUSE ones say 0 blocks) says nothing.
  if (::statvfs(p.c_str(), &fs_info) != 0 || fs_info.f_blocks == 0 || fs_info.f_frsize == 0)
    return std::nullopt;
  // Root may write the blocks the file system keeps back from other users.
  const auto blocks = static_cast<std::uint64_t>(::geteuid() == 0 ? fs_info.f_bfree : fs_info.f_bavail);
  return saturated_product(blocks, static_cast<std::uint64_t>(fs_info.f_frsize));
}

void require_disk_room(const std::string& dir, const std::string& where, const DiskNeed& need)
{
  if (need.bytes == 0)
    return;
  const auto free = free_disk_bytes(dir);
  if (!free)
    return;
  // The files of an earlier result in the folder go before this run's are written; a file with
  // another link (or a link to a file elsewhere) frees nothing when it goes.
  std::uint64_t replaced = 0;
  std::error_code ec;
  for (const auto& name : earlier_result_files(dir)) {
    const fs::path file = fs::path(dir) / name;
    if (!fs::is_regular_file(fs::symlink_status(file, ec)) || fs::hard_link_count(file, ec) != 1 || ec)
      continue;
    const std::uintmax_t size = fs::file_size(file, ec);
    if (!ec)
      replaced = saturated_sum(replaced, static_cast<std::uint64_t>(size));
  }
  const std::uint64_t room = saturated_sum(*free, replaced);
  if (need.bytes <= room)
    return;
  const std::string at = where.empty() ? dir : where + " (<output dir=\"" + dir + "\">)";
  throw InputError(at, "the results need at least " + size_text(need.bytes) + " on disk (" + need.what +
                           "), and the output folder's file system has " + size_text(room) +
                           (replaced ? " free, with the earlier result it replaces" : " free") +
                           "; expected a folder with room for them, fewer rows, or <output trace=\"false\"> "
                           "(and csv=\"false\")");
}

} // namespace simcore
