//===- Artifact.cpp - an artifact's manifest, files and machine, checked --===//
#include "sinter/runtime/Artifact.h"

#include "JsonReader.h"
#include "OpenMp.h"
#include "sinter/runtime/CudaDriver.h"
#include "sinter/runtime/Environment.h"
#include "sinter/runtime/Files.h"
#include "sinter/runtime/ProgramFile.h"

#include "absl/strings/str_join.h"

#include <openssl/evp.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace sinter::runtime {

std::string sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  return hexOf(digest, length);
}

std::vector<std::string> cpuFeatures() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      std::vector<std::string> flags;
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string word; words >> word;)
        flags.push_back(word);
      std::sort(flags.begin(), flags.end());
      return flags;
    }
  return {};
}

std::vector<std::string> cpuLevelFeatures(const std::string &level) {
  // The x86-64 psABI's levels, as /proc/cpuinfo names their features.
  std::vector<std::string> v2 = {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"};
  std::vector<std::string> v3 = {"avx", "avx2", "bmi1",  "bmi2", "f16c",
                                 "fma", "abm",  "movbe", "xsave"};
  std::vector<std::string> v4 = {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"};
  std::vector<std::string> features;
  if (level == "x86-64-v2" || level == "x86-64-v3" || level == "x86-64-v4")
    features = v2;
  if (level == "x86-64-v3" || level == "x86-64-v4")
    features.insert(features.end(), v3.begin(), v3.end());
  if (level == "x86-64-v4")
    features.insert(features.end(), v4.begin(), v4.end());
  std::sort(features.begin(), features.end());
  return features;
}

std::vector<std::string> cpuTargetFeatures(const std::string &cpu) {
  if (cpu != "native")
    return cpuLevelFeatures(cpu);
  // The extensions a compiler targets, of this CPU's flags (the rest, such
  // as "hypervisor", say nothing about the code).
  static const char *const kExtensions[] = {
      "abm",         "adx",        "aes",          "amx_bf16",      "amx_int8",
      "amx_tile",    "avx",        "avx2",         "avx512_bf16",   "avx512_fp16",
      "avx512_vnni", "avx512bw",   "avx512cd",     "avx512dq",      "avx512f",
      "avx512ifma",  "avx512vbmi", "avx512_vbmi2", "avx512_bitalg", "avx512_vpopcntdq",
      "avx512vl",    "avx_vnni",   "bmi1",         "bmi2",          "cx16",
      "f16c",        "fma",        "gfni",         "lahf_lm",       "movbe",
      "pclmulqdq",   "popcnt",     "rdrand",       "rdseed",        "sha_ni",
      "sse4_1",      "sse4_2",     "ssse3",        "vaes",          "vpclmulqdq",
      "xsave"};
  std::vector<std::string> have = cpuFeatures(), features;
  for (const char *extension : kExtensions)
    if (std::binary_search(have.begin(), have.end(), std::string(extension)))
      features.push_back(extension);
  std::sort(features.begin(), features.end());
  return features;
}

namespace {

Status refuse(const std::string &dir, const std::string &what) {
  return absl::FailedPreconditionError(absl::StrCat(dir, ": ", what));
}

/// The x86-64 levels this CPU has, highest first.
std::string bestLevel(const std::vector<std::string> &have) {
  for (const char *level : {"x86-64-v4", "x86-64-v3", "x86-64-v2"}) {
    std::vector<std::string> need = cpuLevelFeatures(level);
    if (std::includes(have.begin(), have.end(), need.begin(), need.end()))
      return level;
  }
  return "x86-64";
}

Status readTarget(Reader &reader, const Json &manifest, ArtifactTarget &target) {
  const Json *json = reader.field(manifest, "", "target");
  if (json == nullptr)
    return reader.status();
  target.kind = reader.string(*json, "target", "kind");
  target.triple = reader.string(*json, "target", "triple");
  target.cpu = reader.string(*json, "target", "cpu");
  if (const Json *features = reader.array(*json, "target", "features"))
    for (size_t i = 0; i < features->size() && !reader.failed(); ++i) {
      if (!(*features)[i].is_string())
        reader.fail(Reader::index("target.features", i), "expected a string");
      else
        target.features.push_back((*features)[i].get<std::string>());
    }
  if (const Json *cuda = reader.field(manifest, "", "cuda"))
    if (const Json *archs = reader.array(*cuda, "cuda", "architectures"))
      for (size_t i = 0; i < archs->size() && !reader.failed(); ++i) {
        if (!(*archs)[i].is_string())
          reader.fail(Reader::index("cuda.architectures", i), "expected a string");
        else
          target.cudaArchitectures.push_back((*archs)[i].get<std::string>());
      }
  if (!reader.failed() && target.kind != "cpu" && target.kind != "cuda")
    reader.fail("target.kind", absl::StrCat("\"", target.kind, "\" is not cpu or cuda"));
  return reader.status();
}

Status readOptimizer(Reader &reader, const Json &manifest, ArtifactOptimizer &optimizer) {
  const Json *json = reader.field(manifest, "", "optimizer");
  if (json == nullptr)
    return reader.status();
  optimizer.kind = reader.string(*json, "optimizer", "kind");
  if (const Json *hyper = reader.field(*json, "optimizer", "hyperparameters")) {
    if (!hyper->is_object())
      reader.fail("optimizer.hyperparameters", "expected an object");
    else
      for (const auto &[key, value] : hyper->items())
        optimizer.hyperparameters[key] =
            reader.number(*hyper, "optimizer.hyperparameters", key.c_str());
  }
  if (const Json *schedule = reader.field(*json, "optimizer", "schedule")) {
    constexpr const char *kKinds[] = {"constant", "linear_warmup", "warmup_cosine"};
    int kind = reader.oneOf(*schedule, "optimizer.schedule", "kind", kKinds);
    Schedule &s = optimizer.schedule;
    s.kind = static_cast<Schedule::Kind>(kind < 0 ? 0 : kind);
    s.baseLr = reader.number(*schedule, "optimizer.schedule", "base_lr");
    s.warmupSteps = reader.integer(*schedule, "optimizer.schedule", "warmup_steps", 0,
                                   std::numeric_limits<int64_t>::max());
    s.totalSteps = reader.integer(*schedule, "optimizer.schedule", "total_steps", 0,
                                  std::numeric_limits<int64_t>::max());
    s.minLr = reader.number(*schedule, "optimizer.schedule", "min_lr");
    if (!reader.failed() && s.kind == Schedule::Kind::WarmupCosine && s.totalSteps <= s.warmupSteps)
      reader.fail("optimizer.schedule", "total_steps must be above warmup_steps");
    if (!reader.failed() && s.kind == Schedule::Kind::LinearWarmup && s.warmupSteps == 0)
      reader.fail("optimizer.schedule", "a linear warmup needs warmup_steps above 0");
  }
  return reader.status();
}

/// Whether the dynamic linker can find `soname`: a file of that name in
/// LD_LIBRARY_PATH, the folders of /etc/ld.so.conf(.d), the system's
/// library folders, or Debian's folder for OpenBLAS's OpenMP build (the
/// kernels' RUNPATH). Looked up, not loaded: loading a library here could
/// bind another build of it than the kernels' own.
bool findable(const std::string &soname) {
  std::vector<std::string> folders;
  auto split = [&](const std::string &list) {
    std::istringstream in(list);
    for (std::string folder; std::getline(in, folder, ':');)
      if (!folder.empty())
        folders.push_back(folder);
  };
  if (const char *path = std::getenv("LD_LIBRARY_PATH"))
    split(path);
  std::vector<std::string> configs = {"/etc/ld.so.conf"};
  std::error_code error;
  for (const auto &entry : std::filesystem::directory_iterator("/etc/ld.so.conf.d", error))
    configs.push_back(entry.path().string());
  for (const std::string &config : configs) {
    std::ifstream in(config);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] == '/')
        folders.push_back(line.substr(0, line.find_first_of(" \t#")));
  }
  for (const char *folder :
       {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib",
        "/usr/lib", "/usr/lib/x86_64-linux-gnu/openblas-openmp"})
    folders.push_back(folder);
  for (const std::string &folder : folders)
    if (std::filesystem::exists(folder + "/" + soname, error))
      return true;
  return false;
}

/// Loads the kernel library at `path` as CpuExecutable::load will (after
/// its checksum): a shared library it needs that is not installed is named
/// with its Debian package.
Status checkLibraryLoads(const std::string &dir, const std::string &path,
                         const std::vector<SharedLibrary> &libraries) {
  prepareOpenMp();
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle != nullptr) {
    dlclose(handle); // it stays mapped (RTLD_NODELETE) for the executables
    return absl::OkStatus();
  }
  const char *why = dlerror();
  std::string message = why != nullptr ? why : "unknown reason";
  for (const SharedLibrary &library : libraries)
    if (message.find(library.soname) != std::string::npos)
      return refuse(dir, absl::StrCat("its kernels need ", library.soname,
                                      ", which is not installed: apt install ", library.package));
  return refuse(dir, absl::StrCat("its kernels do not load: ", message));
}

} // namespace

StatusOr<std::unique_ptr<Artifact>> Artifact::open(const std::string &path, bool forThisMachine) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  std::string dir = error ? path : absolute.lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  if (!std::filesystem::is_directory(dir, error))
    return absl::NotFoundError(
        absl::StrCat(dir, " is not an artifact: no such folder (sinter-compile writes one)"));
  std::string manifestPath = dir + "/manifest.json";
  StatusOr<std::string> text = readWholeFile(manifestPath, "artifact");
  if (!text.ok())
    return absl::NotFoundError(absl::StrCat(
        dir, " is not an artifact: it has no manifest.json (sinter-compile writes one)"));
  Json manifest;
  try {
    manifest = Json::parse(*text);
  } catch (const Json::exception &parse) {
    return absl::InvalidArgumentError(
        absl::StrCat(manifestPath, ": not a JSON document (", parseErrorOf(parse), ")"));
  }
  if (!manifest.is_object() || !manifest.contains("format") ||
      manifest["format"] != kArtifactFormat)
    return absl::InvalidArgumentError(
        absl::StrCat(manifestPath, ": not a Sinter artifact's manifest (its \"format\" is ",
                     manifest.is_object() && manifest.contains("format") ? manifest["format"].dump()
                                                                         : std::string("missing"),
                     ", expected \"", kArtifactFormat, "\")"));
  Reader reader(manifestPath);
  int64_t version = reader.integer(manifest, "", "version", 1, std::numeric_limits<int>::max());
  SINTER_RETURN_IF_ERROR(reader.status());
  if (version > kArtifactFormatVersion)
    return absl::FailedPreconditionError(
        absl::StrCat(manifestPath, ": format version ", version,
                     " is newer than this Sinter reads (", kArtifactFormatVersion,
                     "): load it with a newer libsinter_runtime, or compile the "
                     "model again with this Sinter's sinter-compile"));

  auto artifact = std::unique_ptr<Artifact>(new Artifact());
  artifact->dir_ = dir;
  SINTER_RETURN_IF_ERROR(readTarget(reader, manifest, artifact->target_));
  SINTER_RETURN_IF_ERROR(readOptimizer(reader, manifest, artifact->optimizer_));
  const Json *seed = reader.field(manifest, "", "seed");
  if (seed != nullptr && !seed->is_number_unsigned())
    reader.fail("seed", "expected an integer of 0 to 2^64-1");
  else if (seed != nullptr)
    artifact->seed_ = seed->get<uint64_t>();
  artifact->model_ = reader.string(manifest, "", "model");
  if (const Json *libraries = reader.array(manifest, "", "shared_libraries"))
    for (size_t i = 0; i < libraries->size() && !reader.failed(); ++i) {
      std::string at = Reader::index("shared_libraries", i);
      artifact->libraries_.push_back({reader.string((*libraries)[i], at, "soname"),
                                      reader.string((*libraries)[i], at, "package")});
    }
  // Every file, by its SHA-256; nothing outside the folder.
  std::map<std::string, std::string> hashes;
  if (const Json *files = reader.field(manifest, "", "files")) {
    if (!files->is_object())
      reader.fail("files", "expected an object of file names to SHA-256 digests");
    else
      for (const auto &[name, digest] : files->items()) {
        if (!digest.is_string() || digest.get<std::string>().size() != 64)
          reader.fail(Reader::join("files", name.c_str()), "expected a SHA-256 in hex");
        else if (name.empty() || name[0] == '/' || name.find("..") != std::string::npos)
          reader.fail(Reader::join("files", name.c_str()), "names a file outside the artifact");
        else
          hashes[name] = digest.get<std::string>();
      }
  }
  SINTER_RETURN_IF_ERROR(reader.status());

  // A CUDA artifact's cubins, by function and architecture (Note [CUDA
  // artifacts]).
  const ArtifactTarget &target = artifact->target_;
  std::map<std::string, std::map<std::string, std::string>> cubins;
  if (const Json *cuda = reader.field(manifest, "", "cuda"))
    if (const Json *images = reader.field(*cuda, "cuda", "cubins")) {
      if (!images->is_object())
        reader.fail("cuda.cubins", "expected an object of function names");
      else
        for (const auto &[function, files] : images->items()) {
          std::string at = Reader::join("cuda.cubins", function.c_str());
          if (!files.is_object()) {
            reader.fail(at, "expected an object of architectures");
            continue;
          }
          for (const auto &[arch, file] : files.items())
            cubins[function][arch] = reader.string(files, at, arch.c_str());
        }
    }
  SINTER_RETURN_IF_ERROR(reader.status());
  if (target.kind == "cuda" && target.cudaArchitectures.empty())
    return refuse(dir, "its target is cuda but cuda.architectures names none");

  // This machine: the GPU's architecture (a CUDA artifact off the
  // simulator), or the CPU's features and the shared libraries (the CPU's
  // kernels, and the simulator's build of the CUDA kernels), before any
  // file is read in full.
  const bool onGpu = target.kind == "cuda" && forThisMachine && !environment().cuda_simulator;
  std::string gpuArch;
  if (onGpu) {
    std::string archs = absl::StrJoin(target.cudaArchitectures, ", ");
    StatusOr<std::vector<cuda::DeviceInfo>> gpus = cuda::listDevices();
    if (!gpus.ok())
      return refuse(dir, absl::StrCat("its CUDA code (", archs,
                                      ") needs a GPU: ", gpus.status().message(),
                                      "; SINTER_CUDA_SIMULATOR=1 runs it on the CUDA simulator"));
    const cuda::DeviceInfo &gpu = gpus->front();
    gpuArch = cudaImageFor(target.cudaArchitectures, gpu.computeCapabilityMajor,
                           gpu.computeCapabilityMinor);
    if (gpuArch.empty()) {
      std::string own = absl::StrCat("sm_", gpu.computeCapabilityMajor, gpu.computeCapabilityMinor);
      return refuse(dir, absl::StrCat("its CUDA code is for ", archs, " but cuda:0 (", gpu.name,
                                      ") is ", own,
                                      "; compile it again with sinter-compile --target cuda "
                                      "--arch ",
                                      own));
    }
  }
  std::vector<std::string> have =
      forThisMachine && !onGpu ? cpuFeatures() : std::vector<std::string>();
  std::vector<std::string> missing;
  for (const std::string &feature : target.features)
    if (!std::binary_search(have.begin(), have.end(), feature))
      missing.push_back(feature);
  if (!missing.empty() && !have.empty())
    return refuse(dir, absl::StrCat("its kernels were built for ", target.cpu,
                                    ", which needs CPU "
                                    "features this CPU lacks: ",
                                    absl::StrJoin(missing, ", "),
                                    "; compile it again with sinter-compile --cpu ",
                                    bestLevel(have), " (or --cpu native on this machine)"));
  for (const SharedLibrary &library : artifact->libraries_)
    if (forThisMachine && !onGpu && !findable(library.soname))
      return refuse(dir, absl::StrCat("its kernels need ", library.soname,
                                      ", which is not installed: apt install ", library.package));
  for (const auto &[name, digest] : hashes) {
    StatusOr<std::string> bytes = readWholeFile(dir + "/" + name, "artifact");
    if (!bytes.ok())
      return refuse(dir, absl::StrCat("the manifest lists ", name,
                                      ", which is missing: copy the whole artifact folder"));
    std::string actual = sha256Hex(*bytes);
    if (actual != digest)
      return refuse(dir, absl::StrCat(name, " has SHA-256 ", actual, ", the manifest says ", digest,
                                      ": the file changed after sinter-compile wrote it; "
                                      "copy the artifact again or compile it again"));
  }
  for (const char *state : {"weights.safetensors", "optimizer.safetensors"})
    if (!hashes.count(state))
      return refuse(dir, absl::StrCat("the manifest lists no ", state));

  if (const Json *functions = reader.field(manifest, "", "functions")) {
    if (!functions->is_object() || functions->empty())
      reader.fail("functions", "expected an object of function names");
    else
      for (const auto &[name, entry] : functions->items()) {
        std::string at = Reader::join("functions", name.c_str());
        std::string file = reader.string(entry, at, "program");
        SINTER_RETURN_IF_ERROR(reader.status());
        if (!hashes.count(file))
          return refuse(dir, absl::StrCat("function ", name, "'s program ", file,
                                          " is not among the manifest's files"));
        StatusOr<Program> program = readProgramFile(dir + "/" + file);
        SINTER_RETURN_IF_ERROR(program.status());
        if (!hashes.count(program->library))
          return refuse(dir, absl::StrCat("function ", name, "'s kernels ", program->library,
                                          " are not among the manifest's files"));
        for (const std::string &arch : target.cudaArchitectures) {
          const std::string &image = cubins[name][arch];
          if (!hashes.count(image))
            return refuse(dir, absl::StrCat("function ", name, "'s code for ", arch, " (",
                                            image.empty() ? "none" : image,
                                            ") is not among the manifest's files"));
        }
        program->library = dir + "/" + (onGpu ? cubins[name][gpuArch] : program->library);
        if (forThisMachine && !onGpu)
          SINTER_RETURN_IF_ERROR(checkLibraryLoads(dir, program->library, artifact->libraries_));
        artifact->names_.push_back(name);
        artifact->programs_.emplace(name, std::move(*program));
      }
  }
  SINTER_RETURN_IF_ERROR(reader.status());
  return artifact;
}

int cudaArchitectureNumber(const std::string &arch) {
  std::string digits;
  if (arch.rfind("sm_", 0) == 0)
    digits = arch.substr(3);
  else if (arch.rfind("compute_", 0) == 0)
    digits = arch.substr(8);
  if (digits.size() < 2 || digits.size() > 3 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  int number = std::stoi(digits);
  return number >= 50 ? number : 0;
}

StatusOr<std::vector<std::string>> cudaArchitectureList(const std::string &list) {
  std::vector<std::string> architectures;
  if (list.empty())
    return architectures;
  for (size_t start = 0; start <= list.size();) {
    size_t comma = std::min(list.find(',', start), list.size());
    std::string arch = list.substr(start, comma - start);
    if (cudaArchitectureNumber(arch) == 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "'", arch, "' is not sm_NN (a cubin: sm_80, sm_90) or compute_NN (PTX: compute_90)"));
    architectures.push_back(std::move(arch));
    start = comma + 1;
  }
  return architectures;
}

std::string cudaImageFor(const std::vector<std::string> &architectures, int major, int minor) {
  int own = major * 10 + minor;
  std::string sameMajor, ptx;
  int sameMajorAt = -1, ptxAt = -1;
  for (const std::string &arch : architectures) {
    int number = cudaArchitectureNumber(arch);
    if (number == 0)
      continue;
    if (arch.rfind("sm_", 0) == 0) {
      if (number == own)
        return arch;
      if (number / 10 == major && number < own && number > sameMajorAt)
        sameMajor = arch, sameMajorAt = number;
    } else if (number <= own && number > ptxAt) {
      ptx = arch, ptxAt = number;
    }
  }
  return !sameMajor.empty() ? sameMajor : ptx;
}

const Program *Artifact::function(const std::string &name) const {
  auto it = programs_.find(name);
  return it == programs_.end() ? nullptr : &it->second;
}

} // namespace sinter::runtime
