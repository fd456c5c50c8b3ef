//===- FuzzInput.h - a fuzzer's input as a file, for readers of paths ---===//
#ifndef SINTER_TESTS_FUZZ_FUZZINPUT_H
#define SINTER_TESTS_FUZZ_FUZZINPUT_H

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace sinter::fuzz {

/// `bytes` written to a file of this process's own (in /dev/shm when it
/// exists), removed again when it goes: Sinter's readers take paths.
class InputFile {
public:
  InputFile(std::string_view bytes, const std::string &name) {
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    path_ = std::string(dir) + "/sinter-fuzz-" + std::to_string(getpid()) + "-" + name;
    FILE *file = std::fopen(path_.c_str(), "wb");
    if (file == nullptr) {
      std::perror(path_.c_str());
      std::abort();
    }
    std::fwrite(bytes.data(), 1, bytes.size(), file);
    std::fclose(file);
  }
  ~InputFile() { std::remove(path_.c_str()); }
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

inline std::string_view bytesOf(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

} // namespace sinter::fuzz

#endif // SINTER_TESTS_FUZZ_FUZZINPUT_H
