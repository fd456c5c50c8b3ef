//===- CollectiveOrder.cpp - the ranks start the same collectives ---------===//
#include "CollectiveOrder.h"

#include "sinter/runtime/ByteCount.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace sinter::runtime {

/// Note [The collectives as run]
/// Each collective pairs with the one every other rank starts in the same
/// position. The frontend compares the collectives the ranks recorded, in the
/// graph's order (Note [The same step on every rank] in
/// frontends/cpp/lib/Distributed.cpp); the order they start in is the
/// schedule's, and the schedule also depends on the ops around them. Where
/// those differ between ranks (a constant that only one rank's graph folds,
/// a slice that is empty on one rank), two ranks can start the same
/// collectives in different orders: collectives of equal size then exchange
/// each other's data without a word, and collectives of different sizes end
/// inside Gloo with an abort. So the first run of each executable, in each
/// process group of more than one rank, compares the collectives its program
/// starts, in order (kind, reduction, element type, bytes, world): one
/// all-gather of their count and a hash, and only when those differ one of
/// every rank's list, so that every rank fails with the same message naming
/// the first collective that differs. Every rank comes here at the same
/// point: its first run of the step that the frontend has just compared.
namespace {

constexpr size_t kWords = 5;

void appendRecord(const Program &program, const Program::Step &step, std::vector<int64_t> &words) {
  using Kind = Program::Step::Kind;
  words.push_back(static_cast<int64_t>(step.kind));
  words.push_back(step.kind == Kind::AllGather ? -1 : static_cast<int64_t>(step.reduce));
  words.push_back(static_cast<int64_t>(step.elementType));
  words.push_back(program.buffers[step.outputs[0]].bytes);
  words.push_back(step.ranks);
}

std::string describeRecord(const int64_t *word) {
  using Kind = Program::Step::Kind;
  auto kind = static_cast<Kind>(word[0]);
  std::string name = kind == Kind::AllReduce       ? "all_reduce"
                     : kind == Kind::ReduceScatter ? "reduce_scatter"
                                                   : "all_gather";
  if (kind != Kind::AllGather)
    absl::StrAppend(&name, " (", std::string(reduceOpName(static_cast<ReduceOp>(word[1]))), ")");
  return absl::StrCat(name, " of ", formatByteCount(word[3]), " of ",
                      std::string(elementTypeName(static_cast<ElementType>(word[2]))));
}

StatusOr<std::vector<int64_t>> gather(Communicator &communicator, std::vector<int64_t> mine) {
  std::vector<int64_t> all(mine.size() * static_cast<size_t>(communicator.size()));
  auto bytes = static_cast<int64_t>(mine.size() * sizeof(int64_t));
  SINTER_RETURN_IF_ERROR(communicator.wait(communicator.allGather(
      mine.data(), all.data(), bytes, "comparing the collectives the ranks' steps start")));
  return all;
}

std::mutex checkedMutex;
std::set<std::pair<const Executable *, const Communicator *>> checked;

} // namespace

Status compareCollectiveOrder(const Program &program, Communicator &communicator) {
  using Kind = Program::Step::Kind;
  std::vector<int64_t> records;
  for (const Program::Step &step : program.steps)
    if (step.kind == Kind::AllReduce || step.kind == Kind::ReduceScatter ||
        step.kind == Kind::AllGather)
      appendRecord(program, step, records);
  auto count = static_cast<int64_t>(records.size() / kWords);
  uint64_t hash = 14695981039346656037ull; // FNV-1a: the same in every process
  for (int64_t word : records)
    hash = (hash ^ static_cast<uint64_t>(word)) * 1099511628211ull;
  SINTER_ASSIGN_OR_RETURN(std::vector<int64_t> heads,
                          gather(communicator, {count, static_cast<int64_t>(hash)}));
  int size = communicator.size();
  bool same = true;
  int64_t most = 0;
  for (int r = 0; r < size; ++r) {
    same = same && heads[2 * r] == heads[0] && heads[2 * r + 1] == heads[1];
    most = std::max(most, heads[2 * r]);
  }
  if (same)
    return absl::OkStatus();
  records.resize(static_cast<size_t>(most) * kWords, 0);
  SINTER_ASSIGN_OR_RETURN(std::vector<int64_t> all, gather(communicator, records));
  auto record = [&](int r, int64_t i) {
    return all.data() + (static_cast<size_t>(r) * static_cast<size_t>(most) + i) * kWords;
  };
  auto has = [&](int r, int64_t i) { return i < heads[2 * r]; };
  int64_t first = 0;
  for (; first < most; ++first) {
    bool differs = false;
    for (int r = 1; r < size; ++r)
      differs = differs || has(r, first) != has(0, first) ||
                (has(0, first) &&
                 !std::equal(record(r, first), record(r, first) + kWords, record(0, first)));
    if (differs)
      break;
  }
  std::string each;
  for (int r = 0; r < size; ++r)
    absl::StrAppend(&each, r == 0 ? "" : "; ", "rank ", r, ": ",
                    has(r, first) ? describeRecord(record(r, first))
                                  : absl::StrCat("none (it starts ", heads[2 * r], ")"));
  return absl::FailedPreconditionError(absl::StrCat(
      "the ranks' compiled steps start their collectives in different orders, so they would "
      "exchange mismatched buffers: collective #",
      first, " differs (", each,
      "). The ranks recorded the same collectives but their steps were compiled differently: "
      "the ops around them differ between ranks (a value or a slice that depends on the "
      "rank); compute the same graph on every rank and let only the data differ"));
}

Status checkCollectiveOrderOnce(const Executable *executable, const Program &program,
                                Communicator *communicator) {
  if (communicator == nullptr || communicator->size() == 1 ||
      std::none_of(program.steps.begin(), program.steps.end(),
                   [](const Program::Step &step) { return step.collective(); }))
    return absl::OkStatus();
  {
    std::lock_guard<std::mutex> lock(checkedMutex);
    if (checked.count({executable, communicator}))
      return absl::OkStatus();
  }
  SINTER_RETURN_IF_ERROR(compareCollectiveOrder(program, *communicator));
  std::lock_guard<std::mutex> lock(checkedMutex);
  checked.insert({executable, communicator});
  return absl::OkStatus();
}

void forgetCollectiveOrder(const Executable *executable) {
  std::lock_guard<std::mutex> lock(checkedMutex);
  auto it = checked.lower_bound({executable, nullptr});
  while (it != checked.end() && it->first == executable)
    it = checked.erase(it);
}

void forgetCollectiveOrder(const Communicator *communicator) {
  std::lock_guard<std::mutex> lock(checkedMutex);
  std::erase_if(checked, [&](const auto &entry) { return entry.second == communicator; });
}

} // namespace sinter::runtime
