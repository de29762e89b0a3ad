/* An in-memory key-value store for the memory-bound calibration benchmark: open addressing
 * over 64-byte buckets (16 x 32-bit or 8 x 64-bit keys), the buckets split into two disjoint
 * regions: two hash functions pick candidate buckets in the primary region, a third one in
 * the secondary region. A key goes to the first of its three buckets with a free slot; a
 * bucket that had to pass a key on records it in a 16-bit overflow filter (one bit chosen by
 * the key), so a lookup reads the second and third buckets only when the filter of the one
 * before says a key like it went on: a miss reads about one bucket, one cache line.
 *
 * A lookup compares a whole bucket at once with AVX-512 where the CPU has it (a scalar loop
 * otherwise, same answers). `find_many` pipelines lookups in groups: the buckets of the next
 * group are fetched ahead, then the values of hits and the buckets of overflowed keys, so that
 * the memory accesses of many lookups overlap. Keys and values live on transparent huge pages
 * where the system allows it (fewer TLB misses on tables far larger than the caches).
 *
 * Inserts and lookups are lock-free and may run concurrently (a compare-and-swap claims a
 * slot, then the value is stored: a lookup racing with the insert of the same key may find
 * the key before its value). Erase frees a slot that a concurrent insert may take while
 * another insert of the same key passes on: run erases apart from inserts. Keys are float or
 * double, compared bit for bit; one bit pattern (a NaN) is reserved for empty slots. */
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace calibration {

template <typename Key> class SimdHashTable {
  static_assert(std::is_same_v<Key, float> || std::is_same_v<Key, double>, "float or double keys");

public:
  using Bits = std::conditional_t<sizeof(Key) == 4, std::uint32_t, std::uint64_t>;
  static constexpr std::size_t kSlots = 64 / sizeof(Key); ///< keys per bucket
  static constexpr Bits kEmpty = ~Bits{0};                ///< a NaN no key may be

  /** `buckets` buckets, `secondary_share` of them (in [0, 1); at least one bucket) in the
   *  secondary region. std::invalid_argument on a share outside that range. */
  explicit SimdHashTable(std::size_t buckets, double secondary_share = 0.125);

  /** False when the key's three buckets are full (an insertion failure) or the key is the
   *  reserved pattern. A key inserted twice keeps its first value. */
  bool insert(Key key, std::uint64_t value);
  /** The value, or false. */
  bool find(Key key, std::uint64_t& value) const;
  /** Removes the key; false when it was absent. Safe against concurrent lookups, not against
   *  concurrent inserts (see above). */
  bool erase(Key key);
  /** Many lookups, pipelined (see above); found[i] = 1 and values[i] set on a hit, found[i]
   *  = 0 otherwise. Returns the number of hits. */
  std::size_t find_many(const Key* keys, std::size_t n, std::uint64_t* values, unsigned char* found) const;

  /** Random 64-byte lines of keys and values that find_many reads to look `key` up: its
   *  first bucket; the value's line on a hit; both other candidates when the first bucket's
   *  filter sends the search on. The filters (two bytes per bucket: 1/32 of the keys, which
   *  stay in the last-level cache) are not counted. Not timed: for a workload's memory bound. */
  std::size_t lines_read(Key key) const;

  /** The lookups of one stage group in find_many, about as many as lie between the prefetch
   *  of a bucket and its probe: rounded up to a multiple of 8, within 8..kMaxDepth. */
  void set_pipeline_depth(std::size_t depth)
  {
    depth_ = depth < 8 ? 8 : (depth > kMaxDepth ? kMaxDepth : (depth + 7) / 8 * 8);
  }
  static constexpr std::size_t kMaxDepth = 128;

  std::size_t buckets() const { return buckets_; }
  std::size_t capacity() const { return buckets_ * kSlots; }
  std::size_t bytes() const { return bytes_for(buckets_); }
  /** The memory of a table of `buckets` buckets: keys, filters and values. */
  static constexpr std::size_t bytes_for(std::size_t buckets)
  {
    return buckets * (64 + 2) + buckets * kSlots * sizeof(std::uint64_t);
  }
  /** Share of the buckets whose overflow filter is not empty. */
  double overflowed_share() const;
  /** Whether the kernel accepted the advice to put the keys on huge pages (with transparent
   *  huge pages disabled it may accept and still use small pages). */
  bool huge_pages() const { return huge_; }
  /** The share of the keys, values and filters that huge pages back now (huge_page_share). */
  double huge_page_share() const;
  bool simd() const { return simd_; }
  /** Force the scalar path (for comparing both on one CPU). */
  void set_simd(bool on) { simd_ = on && simd_available(); }
  static bool simd_available();

  ~SimdHashTable();
  SimdHashTable(const SimdHashTable&) = delete;
  SimdHashTable& operator=(const SimdHashTable&) = delete;

private:
  std::size_t bucket_of(Bits bits, int which) const;
  long find_in(std::size_t bucket, Bits bits) const; ///< slot, or -1
  /** The search from the key's `first` candidate bucket on (0, 1 or 2). */
  bool find_from(Bits bits, std::uint64_t h0, int first, std::uint64_t& value) const;

  std::size_t buckets_, primary_;
  Bits* keys_ = nullptr;               ///< buckets_ x kSlots; atomics through __atomic builtins
  std::uint64_t* values_ = nullptr;    ///< one per slot
  std::uint16_t* overflow_ = nullptr;  ///< one 16-bit filter per bucket
  std::size_t keys_bytes_ = 0, values_bytes_ = 0;
  std::size_t depth_ = 64; // 64 lookups: 450 ns at 7 ns a lookup, above a memory latency of 250 to 300 ns
  bool simd_ = false, huge_ = false;
};

extern template class SimdHashTable<float>;
extern template class SimdHashTable<double>;

/** Memory of `bytes` bytes on transparent huge pages where the kernel allows it (mmap plus
 *  madvise), zero-filled; `huge` tells whether the advice was taken. Free with huge_free. */
void* huge_alloc(std::size_t bytes, bool* huge = nullptr);
void huge_free(void* p, std::size_t bytes);
/** The share of [p, p + bytes) that huge pages back now, from /proc/self/smaps (each mapping's
 *  AnonHugePages, counted in proportion to its overlap with the range); -1 where that file
 *  cannot be read. The advice to use huge pages may be taken and still not met, when the
 *  kernel finds no free 2 MiB blocks. */
double huge_page_share(const void* p, std::size_t bytes);

} // namespace calibration
