// Host buffers for large synthetic tensors: gigabytes of weights are faulted in a 2 MiB
// transparent huge page at a time (madvise), not 4 KiB, which on our VMs took most of the
// time of making a checkpoint.
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace fusedmoe::ref {

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHugePage = size_t{2} << 20;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < 2 * kHugePage) {
      void* p = std::malloc(bytes == 0 ? 1 : bytes);
      if (p == nullptr) throw std::bad_alloc();
      return static_cast<T*>(p);
    }
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(p, rounded, MADV_HUGEPAGE);  // advisory: a refusal only costs speed
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

/// A byte buffer that uses huge pages when it is large.
using ByteBuffer = std::vector<uint8_t, HugePageAllocator<uint8_t>>;

}  // namespace fusedmoe::ref
