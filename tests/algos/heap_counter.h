// Counts of the program's global operator new and delete calls: a test reads
// them before and after a piece of code to prove it touched no heap. Linking
// heap_counter.cc into a test binary replaces the global operators (malloc
// underneath) for the whole binary.
#pragma once

#include <cstdint>

namespace lanecast::testing {

uint64_t heap_allocations();  // operator new calls so far, every form
uint64_t heap_frees();        // operator delete calls on a non-null pointer

// Heap calls made between construction and a read.
class HeapWatch {
 public:
  HeapWatch() : news_(heap_allocations()), frees_(heap_frees()) {}
  uint64_t allocations() const { return heap_allocations() - news_; }
  uint64_t frees() const { return heap_frees() - frees_; }

 private:
  uint64_t news_, frees_;
};

}  // namespace lanecast::testing
