//===- World.cpp - which rank this process is, from its launcher ----------===//
//
// Note [Finding the world] in sinter/runtime/World.h.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/World.h"

#include "absl/strings/str_cat.h"

#include <charconv>
#include <optional>

namespace sinter::runtime {

namespace {

class Variables {
public:
  explicit Variables(const std::function<const char *(const char *)> &lookup) : lookup_(lookup) {}

  bool has(const char *name) const { return lookup_(name) != nullptr; }
  std::string text(const char *name) const {
    const char *value = lookup_(name);
    return value != nullptr ? value : "";
  }
  /// The variable as an integer in [low, high]; `fallback` when unset.
  StatusOr<int> number(const char *name, int low, int high, std::optional<int> fallback) const {
    const char *value = lookup_(name);
    if (value == nullptr || *value == '\0') {
      if (fallback)
        return *fallback;
      return absl::InvalidArgumentError(absl::StrCat(name, " is not set"));
    }
    std::string_view text = value;
    int parsed = 0;
    auto [end, code] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (code != std::errc() || end != text.data() + text.size() || parsed < low || parsed > high)
      return absl::InvalidArgumentError(absl::StrCat(name, "='", std::string(text),
                                                     "' is not a number from ", low, " to ", high));
    return parsed;
  }

private:
  const std::function<const char *(const char *)> &lookup_;
};

constexpr int kMaxWorld = 1 << 20;

Status checkRanks(const World &world, const char *rankName, const char *sizeName) {
  if (world.rank >= world.size)
    return absl::InvalidArgumentError(
        absl::StrCat(rankName, "=", world.rank, " is not below ", sizeName, "=", world.size));
  if (world.localRank >= world.localSize)
    return absl::InvalidArgumentError(absl::StrCat(
        "local rank ", world.localRank, " is not below the local world size ", world.localSize));
  return absl::OkStatus();
}

} // namespace

StatusOr<std::string> firstSlurmHost(std::string_view list) {
  // Up to the first comma outside brackets.
  size_t end = 0;
  int depth = 0;
  for (; end < list.size(); ++end) {
    if (list[end] == '[')
      ++depth;
    else if (list[end] == ']')
      --depth;
    else if (list[end] == ',' && depth == 0)
      break;
  }
  std::string_view first = list.substr(0, end);
  size_t open = first.find('[');
  if (open == std::string_view::npos) {
    if (first.empty())
      return absl::InvalidArgumentError("SLURM_JOB_NODELIST is empty");
    return std::string(first);
  }
  size_t close = first.find(']', open);
  if (close == std::string_view::npos || open == 0)
    return absl::InvalidArgumentError(
        absl::StrCat("SLURM_JOB_NODELIST='", std::string(list), "' is not a Slurm host list"));
  std::string_view range = first.substr(open + 1, close - open - 1);
  range = range.substr(0, range.find(','));
  range = range.substr(0, range.find('-'));
  if (range.empty() || range.find_first_not_of("0123456789") != std::string_view::npos)
    return absl::InvalidArgumentError(
        absl::StrCat("SLURM_JOB_NODELIST='", std::string(list), "' is not a Slurm host list"));
  return absl::StrCat(std::string(first.substr(0, open)), std::string(range),
                      std::string(first.substr(close + 1)));
}

StatusOr<World> worldFromEnvironment(const std::function<const char *(const char *)> &lookup) {
  Variables vars(lookup);
  World world;
  SINTER_ASSIGN_OR_RETURN(int port, vars.number("MASTER_PORT", 1, 65535, 29500));
  world.storePort = port;
  if (vars.has("RANK")) {
    bool sinterRun = vars.text("SINTER_STORE_HOSTED") == "1";
    world.launcher = sinterRun ? "sinter-run" : "torchrun";
    SINTER_ASSIGN_OR_RETURN(world.size, vars.number("WORLD_SIZE", 1, kMaxWorld, std::nullopt));
    SINTER_ASSIGN_OR_RETURN(world.rank, vars.number("RANK", 0, kMaxWorld, std::nullopt));
    SINTER_ASSIGN_OR_RETURN(world.localRank, vars.number("LOCAL_RANK", 0, kMaxWorld, world.rank));
    SINTER_ASSIGN_OR_RETURN(world.localSize,
                            vars.number("LOCAL_WORLD_SIZE", 1, kMaxWorld, world.size));
    SINTER_ASSIGN_OR_RETURN(world.nodeRank, vars.number("GROUP_RANK", 0, kMaxWorld, 0));
    SINTER_RETURN_IF_ERROR(checkRanks(world, "RANK", "WORLD_SIZE"));
    if (world.size > 1 && !vars.has("MASTER_ADDR"))
      return absl::InvalidArgumentError("RANK is set but MASTER_ADDR is not: where is rank 0?");
    if (vars.has("MASTER_ADDR"))
      world.masterAddress = vars.text("MASTER_ADDR");
    world.runId = sinterRun ? vars.text("SINTER_RUN_ID") : vars.text("TORCHELASTIC_RUN_ID");
    SINTER_ASSIGN_OR_RETURN(
        world.restart,
        vars.number(sinterRun ? "SINTER_RESTART" : "TORCHELASTIC_RESTART_COUNT", 0, kMaxWorld, 0));
    if (!sinterRun) {
      if (world.storePort == 65535)
        return absl::InvalidArgumentError(
            "MASTER_PORT=65535 leaves no port for the store beside torchrun's (MASTER_PORT + 1)");
      world.storePort += 1;
    }
    world.hostsStore = !sinterRun && world.rank == 0;
  } else if (vars.has("SLURM_PROCID")) {
    world.launcher = "srun";
    SINTER_ASSIGN_OR_RETURN(world.size, vars.number("SLURM_NTASKS", 1, kMaxWorld, std::nullopt));
    SINTER_ASSIGN_OR_RETURN(world.rank, vars.number("SLURM_PROCID", 0, kMaxWorld, std::nullopt));
    SINTER_ASSIGN_OR_RETURN(world.localRank, vars.number("SLURM_LOCALID", 0, kMaxWorld, 0));
    SINTER_ASSIGN_OR_RETURN(world.nodeRank, vars.number("SLURM_NODEID", 0, kMaxWorld, 0));
    // "2(x3),1": this node's count is the first number when all are equal;
    // SLURM_NTASKS_PER_NODE when the user gave it.
    std::string perNode = vars.has("SLURM_NTASKS_PER_NODE") ? vars.text("SLURM_NTASKS_PER_NODE")
                                                            : vars.text("SLURM_TASKS_PER_NODE");
    int local = 0;
    std::from_chars(perNode.data(), perNode.data() + perNode.size(), local);
    world.localSize = local > 0 ? local : world.size;
    SINTER_RETURN_IF_ERROR(checkRanks(world, "SLURM_PROCID", "SLURM_NTASKS"));
    if (vars.has("MASTER_ADDR")) {
      world.masterAddress = vars.text("MASTER_ADDR");
    } else if (world.size > world.localSize) {
      std::string list = vars.has("SLURM_JOB_NODELIST") ? vars.text("SLURM_JOB_NODELIST")
                                                        : vars.text("SLURM_NODELIST");
      SINTER_ASSIGN_OR_RETURN(world.masterAddress, firstSlurmHost(list));
    }
    world.runId = vars.text("SLURM_JOB_ID");
    world.hostsStore = world.rank == 0;
  } else if (vars.has("OMPI_COMM_WORLD_RANK") || vars.has("PMIX_RANK")) {
    world.launcher = "mpirun";
    bool ompi = vars.has("OMPI_COMM_WORLD_RANK");
    const char *rankName = ompi ? "OMPI_COMM_WORLD_RANK" : "PMIX_RANK";
    const char *sizeName = ompi ? "OMPI_COMM_WORLD_SIZE" : "WORLD_SIZE";
    SINTER_ASSIGN_OR_RETURN(world.size, vars.number(sizeName, 1, kMaxWorld, std::nullopt));
    SINTER_ASSIGN_OR_RETURN(world.rank, vars.number(rankName, 0, kMaxWorld, std::nullopt));
    SINTER_ASSIGN_OR_RETURN(world.localRank,
                            vars.number("OMPI_COMM_WORLD_LOCAL_RANK", 0, kMaxWorld, world.rank));
    SINTER_ASSIGN_OR_RETURN(world.localSize,
                            vars.number("OMPI_COMM_WORLD_LOCAL_SIZE", 1, kMaxWorld, world.size));
    SINTER_ASSIGN_OR_RETURN(world.nodeRank,
                            vars.number("OMPI_COMM_WORLD_NODE_RANK", 0, kMaxWorld, 0));
    SINTER_RETURN_IF_ERROR(checkRanks(world, rankName, sizeName));
    if (vars.has("MASTER_ADDR"))
      world.masterAddress = vars.text("MASTER_ADDR");
    else if (world.size > world.localSize)
      return absl::InvalidArgumentError(absl::StrCat(
          "started by mpirun across ", world.size / world.localSize,
          " or more machines without MASTER_ADDR: set it to the address of rank 0's machine "
          "(mpirun -x MASTER_ADDR=...)"));
    world.runId = vars.text("OMPI_MCA_orte_jobid");
    world.hostsStore = world.rank == 0;
  }
  return world;
}

} // namespace sinter::runtime
