/* A message buffer of calib_pingpong where a program's first allocation of its size lies. */
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace calibration {

/** glibc's default mapping threshold: a fresh program's malloc maps a block of at least this
 *  size and puts smaller ones on the heap. */
constexpr std::size_t kMmapThreshold = 128 * 1024;

/** A written message buffer (so that no page is the kernel's shared zero page), on the heap
 *  below kMmapThreshold and on pages of its own from it on. Chosen here rather than left to
 *  malloc: glibc raises its threshold each time a mapped block is freed and serves a request
 *  from free heap space that fits, so after the first sizes a benchmark's buffers would land
 *  where no program's first allocation of that size does. */
class MessageBuffer {
public:
  MessageBuffer() = default;
  MessageBuffer(const MessageBuffer&) = delete;
  MessageBuffer& operator=(const MessageBuffer&) = delete;
  ~MessageBuffer() { release(); }

  /** Replaces the buffer by one of n bytes, each set to `fill`; false when there is no memory. */
  bool allocate(std::size_t n, int fill)
  {
    release(); // freed first, as a program that reallocates would
    if (n >= kMmapThreshold) {
      void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      bytes_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
      mapped_ = true;
    } else {
      bytes_ = static_cast<char*>((std::malloc)(n > 0 ? n : 1)); // (name): not SMPI's macro
      mapped_ = false;
    }
    if (bytes_ == nullptr)
      return false;
    size_ = n;
    std::memset(bytes_, fill, n);
    return true;
  }
  char* data() const { return bytes_; }

private:
  void release()
  {
    if (bytes_ != nullptr && mapped_)
      munmap(bytes_, size_);
    else if (bytes_ != nullptr)
      (std::free)(bytes_);
    bytes_ = nullptr;
    size_ = 0;
  }
  char* bytes_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
};

} // namespace calibration
