//===- JsonReader.h - a JSON document read with a path in every message -===//
//
// The runtime's readers of JSON files (Programs, artifact manifests) walk
// the document with a path of keys for their messages ("steps[3].inputs[1]:
// expected an integer, got a string"), take numbers only when they are
// integers within their field's range, and report the first error.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_LIB_JSONREADER_H
#define SINTER_RUNTIME_LIB_JSONREADER_H

#include "sinter/runtime/Status.h"

#include "absl/strings/str_cat.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace sinter::runtime {

using Json = nlohmann::json;

/// A JSON parse error as messages say it: "parse error at line 1, column 2:
/// ...", without nlohmann's "[json.exception.parse_error.101] " tag.
inline std::string parseErrorOf(const Json::exception &error) {
  std::string what = error.what();
  size_t start = what.find("] ");
  return start == std::string::npos ? what : what.substr(start + 2);
}

/// `bytes` in lowercase hex, two digits a byte.
inline std::string hexOf(const unsigned char *bytes, size_t count) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    text += kDigits[bytes[i] >> 4];
    text += kDigits[bytes[i] & 15];
  }
  return text;
}

/// The reader's position in the document, for its messages, and its first
/// error: every getter returns a harmless value once one is recorded, so
/// the walk reads on without checks at every line and reports the first.
class Reader {
public:
  explicit Reader(std::string_view origin) : origin_(origin) {}

  bool failed() const { return !error_.empty(); }
  Status status() const {
    return failed() ? absl::InvalidArgumentError(absl::StrCat(origin_, ": ", error_))
                    : absl::OkStatus();
  }
  void fail(const std::string &path, const std::string &why) {
    if (!failed())
      error_ = absl::StrCat(path.empty() ? "the document" : path, path.empty() ? " " : ": ", why);
  }

  /// `object[key]`, or null after recording that it is missing.
  const Json *field(const Json &object, const std::string &path, const char *key) {
    if (failed())
      return nullptr;
    if (!object.is_object()) {
      fail(path, absl::StrCat("expected an object, got ", object.type_name()));
      return nullptr;
    }
    auto it = object.find(key);
    if (it == object.end()) {
      fail(path, absl::StrCat("has no \"", key, "\""));
      return nullptr;
    }
    return &*it;
  }

  int64_t integer(const Json *json, const std::string &path, int64_t low, int64_t high) {
    if (json == nullptr || failed())
      return low;
    if (!json->is_number_integer()) {
      fail(path, absl::StrCat("expected an integer, got ", describe(*json)));
      return low;
    }
    if (json->is_number_unsigned() &&
        json->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(path, absl::StrCat(json->dump(), " is outside ", low, "..", high));
      return low;
    }
    int64_t value = json->get<int64_t>();
    if (value < low || value > high) {
      fail(path, absl::StrCat(value, " is outside ", low, "..", high));
      return low;
    }
    return value;
  }
  int64_t integer(const Json &object, const std::string &path, const char *key, int64_t low,
                  int64_t high) {
    return integer(field(object, path, key), join(path, key), low, high);
  }

  /// Any 64-bit unsigned integer (seeds and streams).
  uint64_t unsignedInteger(const Json &object, const std::string &path, const char *key) {
    const Json *json = field(object, path, key);
    if (json == nullptr)
      return 0;
    if (!json->is_number_unsigned()) {
      fail(join(path, key), absl::StrCat("expected an integer of 0 to 2^64-1, got ", describe(*json)));
      return 0;
    }
    return json->get<uint64_t>();
  }

  bool boolean(const Json &object, const std::string &path, const char *key) {
    const Json *json = field(object, path, key);
    if (json == nullptr)
      return false;
    if (!json->is_boolean()) {
      fail(join(path, key), absl::StrCat("expected true or false, got ", describe(*json)));
      return false;
    }
    return json->get<bool>();
  }

  std::string string(const Json &object, const std::string &path, const char *key) {
    const Json *json = field(object, path, key);
    if (json == nullptr)
      return {};
    if (!json->is_string()) {
      fail(join(path, key), absl::StrCat("expected a string, got ", describe(*json)));
      return {};
    }
    return json->get<std::string>();
  }

  /// A finite number; with `single`, one a float holds.
  double number(const Json &object, const std::string &path, const char *key,
                bool single = false) {
    const Json *json = field(object, path, key);
    if (json == nullptr)
      return 0;
    if (!json->is_number()) {
      fail(join(path, key), absl::StrCat("expected a number, got ", describe(*json)));
      return 0;
    }
    double value = json->get<double>();
    double largest = single ? std::numeric_limits<float>::max()
                            : std::numeric_limits<double>::max();
    if (!(std::abs(value) <= largest)) {
      fail(join(path, key),
           absl::StrCat(json->dump(), " is not a finite ", single ? "float" : "number"));
      return 0;
    }
    return value;
  }

  /// The array at `object[key]`, or null after recording why not.
  const Json *array(const Json &object, const std::string &path, const char *key) {
    const Json *json = field(object, path, key);
    if (json != nullptr && !json->is_array()) {
      fail(join(path, key), absl::StrCat("expected a list, got ", describe(*json)));
      return nullptr;
    }
    return json;
  }

  template <typename T>
  std::vector<T> integers(const Json &object, const std::string &path, const char *key,
                          int64_t low, int64_t high) {
    std::vector<T> values;
    const Json *list = array(object, path, key);
    if (list == nullptr)
      return values;
    std::string at = join(path, key);
    for (size_t i = 0; i < list->size() && !failed(); ++i)
      values.push_back(static_cast<T>(integer(&(*list)[i], index(at, i), low, high)));
    return values;
  }

  /// `text` as one of `names` (its index), or -1 after recording why not.
  template <size_t N>
  int oneOf(const Json &object, const std::string &path, const char *key,
            const char *const (&names)[N]) {
    std::string text = string(object, path, key);
    if (failed())
      return -1;
    for (size_t i = 0; i < N; ++i)
      if (text == names[i])
        return static_cast<int>(i);
    std::string known;
    for (size_t i = 0; i < N; ++i)
      absl::StrAppend(&known, i ? ", " : "", names[i]);
    fail(join(path, key), absl::StrCat("\"", text, "\" is not one of ", known));
    return -1;
  }

  static std::string join(const std::string &path, const char *key) {
    return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
  }
  static std::string index(const std::string &path, size_t i) {
    return absl::StrCat(path, "[", i, "]");
  }

private:
  static std::string describe(const Json &json) {
    std::string text = json.dump();
    if (text.size() > 40)
      text = text.substr(0, 37) + "...";
    return absl::StrCat(json.type_name(), " ", text);
  }

  std::string origin_;
  std::string error_;
};

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_LIB_JSONREADER_H
