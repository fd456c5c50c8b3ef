//===- fuzz_program.cpp - compiled steps read from files -----------------===//
//
// Any bytes as a serialized Program (sinter/runtime/ProgramFile.h): read,
// or refused with a Status. A Program that is read is whole
// (validateProgram), and written and read again it is the same Program: a
// reader that accepted what its writer cannot reproduce would be lossy.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "sinter/runtime/ProgramFile.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace sinter::runtime;
  using sinter::StatusOr;
  StatusOr<Program> read = readProgram(sinter::fuzz::bytesOf(data, size), "program.json");
  if (!read.ok())
    return 0;
  if (!validateProgram(*read).ok()) {
    std::fprintf(stderr, "a Program was read that validateProgram refuses\n");
    std::abort();
  }
  StatusOr<Program> again = readProgram(writeProgram(*read), "again.json");
  if (!again.ok() || !(*again == *read)) {
    std::fprintf(stderr, "written and read again, the Program differs\n");
    std::abort();
  }
  return 0;
}
