//===- Poison.h - AddressSanitizer's view of the runtime's own memory -*- C++ -*-===//
//
// Note [Poisoned arenas]
// The host allocator carves blocks out of large segments, and a step's
// buffers are parts of one arena block, so AddressSanitizer alone sees
// neither a block overrun nor a kernel that reads past its buffer into its
// neighbour's. In an ASan build the runtime tells ASan what it knows:
//  - the allocator poisons a segment's free space and the tail of each block
//    past the bytes asked for, so an overrun of any block is reported;
//  - CpuExecutable::run poisons the arena, and around each launch lets only
//    that launch's buffers be touched: a kernel (compiled with the same
//    sanitizer, HostCompiler.cpp) that reads or writes outside its operands
//    is reported at the access, as is a plan that gives a launch a buffer
//    another launch's value still lives in. Everything is unpoisoned before
//    results are handed out.
// Without ASan these are no-ops. Code that includes LLVM's headers is built
// without the ASan macro (cmake/SinterMLIR.cmake), so only the runtime, which
// includes none, poisons.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_LIB_POISON_H
#define SINTER_RUNTIME_LIB_POISON_H

#include <cstddef>
#include <cstdint>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace sinter::runtime {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kPoisoning = true;
inline void poison(const void *p, int64_t bytes) {
  if (bytes > 0)
    __asan_poison_memory_region(p, static_cast<size_t>(bytes));
}
inline void unpoison(const void *p, int64_t bytes) {
  if (bytes > 0)
    __asan_unpoison_memory_region(p, static_cast<size_t>(bytes));
}
#else
inline constexpr bool kPoisoning = false;
inline void poison(const void *, int64_t) {}
inline void unpoison(const void *, int64_t) {}
#endif

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_LIB_POISON_H
