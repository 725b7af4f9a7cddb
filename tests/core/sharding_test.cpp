// Sharding: the arithmetic of track_gen::shard_of, and the host instantiation of sharding_tests.hpp.
#include "sharding_tests.hpp"

#include <track_gen/shard.hpp>

#include <cstdint>
#include <stdexcept>

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(sharded_courses, std::tuple<track_gen::host_policy>);

TEST_CASE("shard_of splits [base, base + E) over G ranks in order, sizes differing by at most one") {
  namespace tg = track_gen;
  for (const std::int64_t total : {1LL, 2LL, 7LL, 1000LL, 4096LL, 1000003LL}) {
    for (const int world : {1, 2, 3, 4, 7, 8}) {
      if (total < world) continue;
      for (const std::uint32_t base : {0u, 17u}) {
        CAPTURE(total);
        CAPTURE(world);
        CAPTURE(base);
        std::int64_t next = base;  // the shards must tile the ids in rank order
        int smallest = 1 << 30, largest = 0;
        for (int r = 0; r < world; ++r) {
          const tg::shard s = tg::shard_of(total, world, r, base);
          CHECK(static_cast<std::int64_t>(s.first) == next);
          next += s.num_envs;
          smallest = std::min(smallest, s.num_envs);
          largest = std::max(largest, s.num_envs);
          // Independent of the library: the usual balanced split (the first E % G ranks one more).
          const std::int64_t expected = total / world + (r < total % world ? 1 : 0);
          CHECK(s.num_envs == expected);
        }
        CHECK(next == static_cast<std::int64_t>(base) + total);
        CHECK(largest - smallest <= 1);
        CHECK(smallest >= 1);
      }
    }
  }
  // The last id of the last rank may be 2^32 - 1, not more.
  const tg::shard last = tg::shard_of(4096, 4, 3, 4294967295u - 4095u);
  CHECK(last.first == 4294967295u - 1023u);
  CHECK(last.num_envs == 1024);
  const tg::track_params p = tg::shard_params(tg::presets::track(1), 10, 3, 2);
  CHECK(p.num_envs == 3);
  CHECK(p.env_offset == 7u);
}

TEST_CASE("shard_of rejects bad arguments with a message naming them and their range") {
  namespace tg = track_gen;
  auto message = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no exception";
  };
  CHECK(message([] { tg::shard_of(10, 0, 0); }).find("world_size = 0, expected >= 1") != std::string::npos);
  CHECK(message([] { tg::shard_of(10, 2, 2); }).find("rank = 2, expected in [0, 1]") != std::string::npos);
  CHECK(message([] { tg::shard_of(10, 2, -1); }).find("rank = -1") != std::string::npos);
  CHECK(message([] { tg::shard_of(3, 4, 0); }).find("total_envs = 3, expected >= world_size = 4") != std::string::npos);
  CHECK(message([] { tg::shard_of(4096, 4, 0, 4294967295u - 4094u); }).find("global env ids are uint32") !=
        std::string::npos);
  CHECK(message([] { tg::shard_of(std::int64_t{3} << 30, 2, 0); }).find("more than track_params.num_envs allows") !=
        std::string::npos);
}
}  // namespace tg_test
