// status's verdict across servers (status/verdict.cpp), with no server.

#include "status/verdict.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace redlock::status {
namespace {

using lock::Claim;
using lock::HolderView;
using lock::ServerView;

ServerView view(std::vector<HolderView> holders, Claim::Mode mode = Claim::Mode::k_exclusive, long long limit = 1) {
  ServerView v;
  v.endpoint = "redis://x";
  v.type = holders.empty() ? "none" : "hash";
  v.mode = mode;
  v.limit = limit;
  v.now_ms = 1000;
  v.holders = std::move(holders);
  return v;
}

HolderView holder(const std::string& token, long long since, long long ttl = 5000, long long fence = 1) {
  HolderView h;
  h.token = token;
  h.since_ms = since;
  h.ttl_ms = ttl;
  h.fence = fence;
  h.count = 1;
  return h;
}

TEST(Judge, AHolderCountsOnlyOnAQuorum) {
  Verdict v = judge("x", {view({holder("a", 1)}), view({holder("a", 1)}), view({})});
  EXPECT_EQ(v.state, State::k_held);
  ASSERT_EQ(v.holders.size(), 1u);
  Verdict minority = judge("x", {view({holder("a", 1)}), view({}), view({})});
  EXPECT_EQ(minority.state, State::k_free);
}

TEST(Judge, MergesTheSmallestTtlAndLargestFence) {
  Verdict v = judge("x", {view({holder("a", 1, 4000, 7)}), view({holder("a", 1, 3000, 9)})});
  ASSERT_EQ(v.holders.size(), 1u);
  EXPECT_EQ(v.holders[0].ttl_ms, 3000);
  EXPECT_EQ(v.holders[0].fence, 9);
}

TEST(Judge, SemaphoreHoldersNeedTheSemaphoreQuorumAndListOldestFirst) {
  // Limit 2 over 3 servers: a holder counts only on all three.
  auto s = [&](std::vector<HolderView> h) { return view(std::move(h), Claim::Mode::k_semaphore, 2); };
  Verdict v = judge("x", {s({holder("b", 20), holder("a", 10)}), s({holder("a", 10), holder("b", 20)}),
                          s({holder("b", 20), holder("a", 10), holder("c", 5)})});
  ASSERT_EQ(v.holders.size(), 2u);
  EXPECT_EQ(v.holders[0].token, "a");
  EXPECT_EQ(v.holders[1].token, "b");
  Verdict two_of_three = judge("x", {s({holder("a", 1)}), s({holder("a", 1)}), s({})});
  EXPECT_EQ(two_of_three.state, State::k_free);
}

TEST(Judge, ForeignOnAMajority) {
  ServerView f = view({});
  f.foreign = true;
  f.type = "list";
  Verdict v = judge("x", {f, f, view({})});
  EXPECT_EQ(v.state, State::k_foreign);
  EXPECT_EQ(v.foreign_type, "list");
  EXPECT_EQ(judge("x", {f, view({}), view({})}).state, State::k_free);
}

}  // namespace
}  // namespace redlock::status
