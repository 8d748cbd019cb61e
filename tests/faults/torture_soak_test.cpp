// Contention torture: 12 redlock exec workers, each running many rounds
// against 1, 3 or 5 servers, with a detector inside every critical section.
// The detector keeps, under flock(1), how many holders (readers) and
// writers are inside at once; writers also run a read-sleep-write counter
// that loses updates if two ever overlap, and readers check that the counter
// does not move under them. Expect no violation at all.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

constexpr int k_workers = 12;
constexpr int k_rounds = 30;
constexpr int k_limit = 3;

// The critical section: `section.sh slot|reader|writer`.
const char* const k_section = R"sh(mode=$1
exec 9>>"$D/state.lock"
flock 9
read inside writers < "$D/state"
case $mode in
  slot)
    inside=$((inside + 1))
    [ "$inside" -le "$LIMIT" ] || echo "$inside holders inside (limit $LIMIT)" >> "$D/violations" ;;
  reader)
    [ "$writers" -eq 0 ] || echo "a reader entered with $writers writers inside" >> "$D/violations"
    inside=$((inside + 1)) ;;
  writer)
    [ "$writers" -eq 0 ] && [ "$inside" -eq 0 ] ||
      echo "a writer entered with $inside readers and $writers writers inside" >> "$D/violations"
    writers=$((writers + 1)) ;;
esac
echo "$inside $writers" > "$D/state"
[ "$inside" -le "$(cat "$D/most")" ] || echo "$inside" > "$D/most"
flock -u 9
case $mode in
  writer)
    n=$(cat "$D/counter"); sleep 0.01; echo $((n + 1)) > "$D/counter" ;;
  reader)
    n=$(cat "$D/counter"); sleep 0.01
    [ "$n" = "$(cat "$D/counter")" ] || echo "the counter moved under a reader" >> "$D/violations" ;;
  *)
    sleep 0.01 ;;
esac
flock 9
read inside writers < "$D/state"
case $mode in
  writer) writers=$((writers - 1)) ;;
  *) inside=$((inside - 1)) ;;
esac
echo "$inside $writers" > "$D/state"
echo "$mode" >> "$D/sections"
flock -u 9
)sh";

// One worker: `worker.sh MODE OPTION...` runs $ROUNDS exec rounds.
const char* const k_worker = R"sh(mode=$1
shift
i=0
while [ $i -lt "$ROUNDS" ]; do
  "$RL" exec --wait 120s "$@" torture -- sh "$D/section.sh" "$mode"
  rc=$?
  [ $rc -eq 0 ] || echo "$mode: exec exited $rc" >> "$D/failures"
  i=$((i + 1))
done
)sh";

// "" when `log` is empty, else how many lines it has and the first few.
std::string violations(const std::string& log) {
  if (log.empty()) {
    return "";
  }
  size_t lines = 0;
  size_t cut = std::string::npos;
  for (size_t i = 0; i < log.size(); ++i) {
    if (log[i] == '\n' && ++lines == 5) {
      cut = i + 1;
    }
  }
  return std::to_string(lines) + " violations, the first:\n" + log.substr(0, cut);
}

struct Torture {
  std::vector<std::unique_ptr<RedisServer>> servers;
  TempDir dir;
  std::string urls;

  explicit Torture(int n) {
    for (int i = 0; i < n; ++i) {
      servers.push_back(std::make_unique<RedisServer>());
      urls += (urls.empty() ? "" : ",") + servers.back()->url();
    }
    write_file(path("section.sh"), k_section);
    write_file(path("worker.sh"), k_worker);
    write_file(path("state"), "0 0\n");
    write_file(path("most"), "0\n");
    write_file(path("counter"), "0\n");
  }
  [[nodiscard]] std::string path(const std::string& name) const { return dir.path() + "/" + name; }

  // Runs one worker per entry of `workers` (its mode and exec options) and
  // waits for them all; returns the seconds it took.
  double run_workers(const std::vector<std::vector<std::string>>& workers) {
    Env env{{"REDLOCK_URL", urls},
            {"D", dir.path()},
            {"RL", redlock_binary()},
            {"ROUNDS", std::to_string(k_rounds)},
            {"LIMIT", std::to_string(k_limit)}};
    const double start = now_seconds();
    std::vector<std::unique_ptr<Child>> children;
    for (const auto& w : workers) {
      std::vector<std::string> args{path("worker.sh")};
      args.insert(args.end(), w.begin(), w.end());
      children.push_back(std::make_unique<Child>(args, env, "sh"));
    }
    std::string errors;
    for (auto& c : children) {
      Result r = c->wait(Seconds(240));
      EXPECT_EQ(r.status, 0);
      EXPECT_EQ(r.out, "");
      errors += r.err;
    }
    EXPECT_EQ(read_file(path("failures")), "") << errors;
    return now_seconds() - start;
  }

  [[nodiscard]] int sections(const std::string& mode) const {
    std::string all = read_file(path("sections"));
    int n = 0;
    for (size_t at = all.find(mode + "\n"); at != std::string::npos; at = all.find(mode + "\n", at + 1)) {
      n += (at == 0 || all[at - 1] == '\n') ? 1 : 0;
    }
    return n;
  }

  // Nothing is left held on any server.
  void expect_all_free() const {
    for (const auto& s : servers) {
      EXPECT_EQ(s->cmd({"EXISTS", lock_key("torture")}).integer, 0) << s->url();
    }
  }
};

class SemaphoreTorture : public ::testing::TestWithParam<int> {};
class ReadersWriterTorture : public ::testing::TestWithParam<int> {};

std::string servers_name(const ::testing::TestParamInfo<int>& info) {
  return std::to_string(info.param) + (info.param == 1 ? "Server" : "Servers");
}

}  // namespace

TEST_P(SemaphoreTorture, NeverMoreThanTheLimitInside) {
  Torture t(GetParam());
  std::vector<std::vector<std::string>> workers(k_workers,
                                                std::vector<std::string>{"slot", "--limit", std::to_string(k_limit)});
  const double seconds = t.run_workers(workers);
  EXPECT_EQ(violations(read_file(t.path("violations"))), "");
  EXPECT_EQ(t.sections("slot"), k_workers * k_rounds);
  const int most = std::stoi(read_file(t.path("most")));
  EXPECT_LE(most, k_limit);
  EXPECT_GE(most, 2) << "the semaphore never let two in together: the torture tested nothing";
  t.expect_all_free();
  RecordProperty("seconds", std::to_string(seconds));
  RecordProperty("most_inside", std::to_string(most));
}

TEST_P(ReadersWriterTorture, WritersAloneAndReadersNeverWithAWriter) {
  Torture t(GetParam());
  constexpr int k_writers = 4;
  std::vector<std::vector<std::string>> workers;
  for (int w = 0; w < k_workers; ++w) {
    workers.push_back(w < k_writers ? std::vector<std::string>{"writer"}
                                    : std::vector<std::string>{"reader", "--shared"});
  }
  const double seconds = t.run_workers(workers);
  EXPECT_EQ(violations(read_file(t.path("violations"))), "");
  EXPECT_EQ(t.sections("writer"), k_writers * k_rounds);
  EXPECT_EQ(t.sections("reader"), (k_workers - k_writers) * k_rounds);
  EXPECT_EQ(read_file(t.path("counter")), std::to_string(k_writers * k_rounds) + "\n") << "a writer's update was lost";
  EXPECT_GE(std::stoi(read_file(t.path("most"))), 2) << "readers never shared: the torture tested nothing";
  t.expect_all_free();
  RecordProperty("seconds", std::to_string(seconds));
}

INSTANTIATE_TEST_SUITE_P(Faults, SemaphoreTorture, ::testing::Values(1, 3, 5), servers_name);
INSTANTIATE_TEST_SUITE_P(Faults, ReadersWriterTorture, ::testing::Values(1, 3, 5), servers_name);
