//===- ByteCount.cpp - byte counts as people write and read them ----------===//
#include "sinter/runtime/ByteCount.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

namespace sinter::runtime {

int64_t parseByteCount(const std::string &text) {
  static const std::pair<const char *, int64_t> kSuffixes[] = {
      {"GiB", int64_t{1} << 30}, {"MiB", int64_t{1} << 20}, {"KiB", int64_t{1} << 10},
      {"G", int64_t{1} << 30},   {"M", int64_t{1} << 20},   {"K", int64_t{1} << 10}};
  std::string digits = text;
  int64_t unit = 1;
  for (const auto &[suffix, scale] : kSuffixes) {
    size_t n = std::strlen(suffix);
    if (digits.size() > n && digits.compare(digits.size() - n, n, suffix) == 0) {
      digits.resize(digits.size() - n);
      unit = scale;
      break;
    }
  }
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || errno != 0 || value <= 0 ||
      value > std::numeric_limits<int64_t>::max() / unit)
    return -1;
  return value * unit;
}

std::string formatByteCount(int64_t bytes) {
  char text[32];
  if (bytes < 1024)
    std::snprintf(text, sizeof text, "%lld bytes", static_cast<long long>(bytes));
  else if (bytes < (int64_t{1} << 20))
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  else
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / 1048576.0);
  return text;
}

} // namespace sinter::runtime
