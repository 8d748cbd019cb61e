#pragma once

// Keys that several rows start from or end with (see table.hpp for how they
// are written).

#include <string>

namespace redlock::test {

// A plain lock held by T0 (one level, fence 5), and the same after a script
// that left it alone.
inline const std::string k_held =
    "t:{a} = hash schema=redlock/1 token=T0 count=1 fence=5 host=h0 pid=10 cmd=c0 since_ms=NOW-1000 ttl_ms=30000 "
    "(px 30000)";
inline const std::string k_held_after =
    "t:{a} = hash cmd=c0 count=1 fence=5 host=h0 pid=10 schema=redlock/1 since_ms=# token=T0 ttl_ms=30000 "
    "(px ~30000)";
// What break tells the exec of T0's run (its run id: the first 16 hex
// digits of the SHA-1 of T0) on the run's own revoke channel.
inline const std::string k_told_broken_t0 = R"(t:{a}:revoke:8878120356066db1 {*"broken":true*})";
inline const std::string k_fence5 = "t:{a}:fence = string 5";

// The index of held locks under "t:" (includes/index.lua) after a script
// that holds lock "a": its key, scored by the end of its lease, and the
// schema marker. It never expires.
inline const std::string k_indexed = "t:index = zset t:{a}=# redlock/1=inf";

// A semaphore's holder entry, and a semaphore of 2 places held by T0 alone
// or by T0 and T2.
// `expiry`: when its lease ends, from NOW.
inline std::string holder(const std::string& token, const std::string& host, int pid,
                          const std::string& expiry = "+30000") {
  return "h:" + token + R"(={"count":1,"fence":"5","expiry":NOW)" + expiry +
         R"(,"since":NOW-1000,"ttl":30000,"host":")" + host + R"(","pid":)" + std::to_string(pid) + R"(,"cmd":"c0"})";
}
inline std::string holder_after(const std::string& token, const std::string& host, int pid) {
  return "h:" + token + R"(={"cmd":"c0","count":1,"expiry":#,"fence":"5","host":")" + host + R"(","pid":)" +
         std::to_string(pid) + R"(,"since":#,"ttl":30000})";
}
inline const std::string k_semaphore =
    "t:{a} = hash schema=redlock/1 mode=semaphore limit=2 " + holder("T0", "h0", 10) + " (px 30000)";
inline const std::string k_semaphore_after =
    "t:{a} = hash " + holder_after("T0", "h0", 10) + " limit=2 mode=semaphore schema=redlock/1 (px ~30000)";
inline const std::string k_semaphore_full = "t:{a} = hash schema=redlock/1 mode=semaphore limit=2 " +
                                            holder("T0", "h0", 10) + " " + holder("T2", "h2", 12) + " (px 30000)";
inline const std::string k_readers =
    "t:{a} = hash schema=redlock/1 mode=shared limit=0 " + holder("T0", "h0", 10) + " (px 30000)";

// A line of waiters with W1 (ticket 1), or W1 and W2 (ticket 2), each with
// a lease of 10 s, in its four keys (includes/line.lua), and the line after
// a script that left it alone.
inline std::string entry(const std::string& id, int ticket) {
  return id + R"(={"ticket":)" + std::to_string(ticket) +
         R"(,"since":NOW-500,"host":"h1","pid":11,"cmd":"c1","mode":"exclusive","limit":"1","deadline":-1})";
}
inline std::string entry_after(const std::string& id, int ticket) {
  return id + "=" + R"({"cmd":"c1","deadline":-1,"host":"h1","limit":"1","mode":"exclusive","pid":11,"since":#,)" +
         R"("ticket":)" + std::to_string(ticket) + "}";
}
inline const std::string k_line_w1 =
    "t:{a}:beats = zset W1=NOW+10000 (px 10000)\n"
    "t:{a}:line = zset W1=1 (px 10000)\n"
    "t:{a}:waiters = hash schema=redlock/1 seq=1 " +
    entry("W1", 1) +
    " (px 10000)\n"
    "t:{a}:writers = zset W1=1 (px 10000)";
inline const std::string k_line_w1_after =
    "t:{a}:beats = zset W1=# (px ~10000)\n"
    "t:{a}:line = zset W1=1 (px ~10000)\n"
    "t:{a}:waiters = hash " +
    entry_after("W1", 1) +
    " schema=redlock/1 seq=1 (px ~10000)\n"
    "t:{a}:writers = zset W1=1 (px ~10000)";
inline const std::string k_line_w1_w2 =
    "t:{a}:beats = zset W1=NOW+10000 W2=NOW+10000 (px 10000)\n"
    "t:{a}:line = zset W1=1 W2=2 (px 10000)\n"
    "t:{a}:waiters = hash schema=redlock/1 seq=2 " +
    entry("W1", 1) + " " + entry("W2", 2) +
    " (px 10000)\n"
    "t:{a}:writers = zset W1=1 W2=2 (px 10000)";
// W1, dead (its lease ended), ahead of W2, whose lease of 10 s is longer
// than the near lease: once W1 is pruned, W2 is at the head with it.
inline const std::string k_line_dead_w1_w2 =
    "t:{a}:beats = zset W1=NOW-1 W2=NOW+10000 (px 10000)\n"
    "t:{a}:line = zset W1=1 W2=2 (px 10000)\n"
    "t:{a}:waiters = hash schema=redlock/1 seq=2 " +
    entry("W1", 1) + " " + entry("W2", 2) +
    " (px 10000)\n"
    "t:{a}:writers = zset W1=1 W2=2 (px 10000)";
// W2 alone in line, after W1 left it.
inline const std::string k_line_w2_after =
    "t:{a}:beats = zset W2=# (px ~10000)\n"
    "t:{a}:line = zset W2=2 (px ~10000)\n"
    "t:{a}:waiters = hash " +
    entry_after("W2", 2) +
    " schema=redlock/1 seq=2 (px ~10000)\n"
    "t:{a}:writers = zset W2=2 (px ~10000)";

}  // namespace redlock::test
