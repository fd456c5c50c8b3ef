//===- fuzz_job.cpp - job files through readJobFile and parseJob ---------===//
//
// Any bytes as a job file: the reader and the checks either accept it or
// refuse it with a JobError naming the key; nothing else may escape.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "Job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sinter::fuzz::InputFile file(sinter::fuzz::bytesOf(data, size), "job.json");
  try {
    nlohmann::json document = sinter::tools::readJobFile(file.path());
    if (document.is_object())
      (void)sinter::tools::parseJob(document);
  } catch (const sinter::tools::JobError &) {
  }
  return 0;
}
