//===- TensorDump.cpp - tensors as raw files for PyTorch ------------------===//
#include "TensorDump.h"

#include <filesystem>
#include <system_error>

namespace sinter::tools {

TensorDump::TensorDump(const std::string &dir) : dir_(dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  manifest_.open(dir + "/manifest.txt");
  SINTER_CHECK(manifest_.good(), Loc::current(), "cannot write tensors to " + dir);
}

void TensorDump::write(const std::string &kind, const std::string &name, const Tensor &tensor) {
  std::ofstream out(dir_ + "/" + kind + "." + name + ".bin", std::ios::binary);
  bool integer = tensor.dtype() == DType::i64 || tensor.dtype() == DType::i32;
  if (integer) {
    std::vector<int64_t> v = tensor.to_vector<int64_t>();
    out.write(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(int64_t));
  } else {
    std::vector<float> v = tensor.to_vector<float>();
    out.write(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
  }
  manifest_ << kind << ' ' << name << ' ' << (integer ? "i64" : "f32");
  for (int64_t d : tensor.shape())
    manifest_ << ' ' << d;
  manifest_ << '\n';
  SINTER_CHECK(out.good() && manifest_.good(), Loc::current(),
               "cannot write " + kind + "." + name + " to " + dir_);
}

} // namespace sinter::tools
