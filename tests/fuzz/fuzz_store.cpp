//===- fuzz_store.cpp - the rendezvous store's messages -------------------===//
//
// Any bytes as one frame's payload (what a peer, or anything else that
// connects to the store's port, sends): decodeStoreMessage refuses them with
// a Status or reads a message that writes back to the same bytes, and never
// crashes or allocates what a count claims.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Store.h"

#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view payload(reinterpret_cast<const char *>(data), size);
  auto message = sinter::runtime::decodeStoreMessage(payload);
  if (message.ok() && sinter::runtime::encodeStoreMessage(*message) != payload)
    std::abort();
  return 0;
}
