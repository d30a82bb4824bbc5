// The synthetic Markov source (its entropy floor checked by Monte Carlo), llm.c shards and the
// prefetching loader.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "harness/core/error.hpp"
#include "workloads/training/data.hpp"

using namespace accelbench;
using namespace accelbench::training;
namespace fs = std::filesystem;

namespace {
fs::path temp_dir(const std::string& name) {
  auto d = fs::temp_directory_path() /
           ("accelbench_training_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
} // namespace

TEST_CASE("markov source: stationary distribution and exact entropy floor", "[training][data]") {
  for (int64_t order : {1, 2}) {
    markov_params p;
    p.vocab = 24;
    p.order = order;
    p.branching = 3;
    p.epsilon = 0.05;
    p.seed = 7;
    markov_source src(p);
    INFO("order " << order);
    // Each context's next-token distribution sums to 1.
    for (int64_t c = 0; c < src.contexts(); c += 37) {
      double s = 0;
      for (int32_t y = 0; y < p.vocab; y++)
        s += src.probability(c, y);
      CHECK(s == Approx(1.0).epsilon(1e-6));
    }
    // pi is stationary: pi'(suffix, y) = sum_x pi(x, suffix) P(y | x, suffix).
    const auto& pi = src.stationary();
    const int64_t suffixes = src.contexts() / p.vocab;
    double worst = 0;
    for (int64_t c2 = 0; c2 < src.contexts(); c2++) {
      int64_t suffix = c2 / p.vocab;
      int32_t y = int32_t(c2 % p.vocab);
      double s = 0;
      for (int64_t x = 0; x < p.vocab; x++) {
        int64_t c = order == 1 ? x : x * suffixes + suffix;
        if (order == 1 && suffix != 0)
          continue;
        s += pi[size_t(c)] * src.probability(c, y);
      }
      worst = std::max(worst, std::abs(s - pi[size_t(c2)]));
    }
    CHECK(worst < 1e-10);
    CHECK(src.conditional_entropy() > 0);
    CHECK(src.conditional_entropy() < std::log(double(p.vocab)));

    // Monte Carlo: the true model's mean -log p over sampled windows estimates the floor. For
    // position 0 of order 2 the predictor is P(x1 | x0) from the stationary pair marginal.
    const int64_t seq = 8, windows = 20000;
    stats::rng r(99);
    std::vector<int32_t> w(seq + 1);
    std::vector<double> marg_first(size_t(p.vocab), 0.0);
    if (order == 2)
      for (int64_t c = 0; c < src.contexts(); c++)
        marg_first[size_t(c / p.vocab)] += pi[size_t(c)];
    double sum = 0, sum2 = 0;
    for (int64_t i = 0; i < windows; i++) {
      src.sample_window(r, w.data(), seq + 1);
      double nll = 0;
      for (int64_t t = 0; t < seq; t++) {
        double q;
        if (order == 2 && t == 0)
          q = pi[size_t(w[0] * p.vocab + w[1])] / marg_first[size_t(w[0])];
        else
          q = src.probability(order == 1 ? w[t] : int64_t(w[t - 1]) * p.vocab + w[t], w[t + 1]);
        nll -= std::log(q);
      }
      nll /= double(seq);
      sum += nll;
      sum2 += nll * nll;
    }
    double mean = sum / windows, se = std::sqrt((sum2 / windows - mean * mean) / windows);
    CHECK(std::abs(mean - src.entropy_floor(seq)) < 4 * se + 1e-3);
    if (order == 2)
      CHECK(src.entropy_floor(seq) > src.conditional_entropy());
    else
      CHECK(src.entropy_floor(seq) == Approx(src.conditional_entropy()));
  }
}

TEST_CASE("markov source parameters out of range are input errors", "[training][data]") {
  markov_params p;
  p.vocab = 512;
  p.order = 3; // 512^3 contexts
  REQUIRE_THROWS_AS(markov_source(p), input_error);
  REQUIRE_THROWS_WITH(markov_source(p), Catch::Contains("512^3"));
  p.order = 1;
  p.epsilon = 0;
  REQUIRE_THROWS_WITH(markov_source(p), Catch::Contains("epsilon"));
}

TEST_CASE("llm.c shards: round trip and one-line errors", "[training][data]") {
  auto dir = temp_dir("shards");
  std::vector<uint16_t> tokens;
  for (int i = 0; i < 1000; i++)
    tokens.push_back(uint16_t(i % 97));
  write_shard(dir / "d_train_000001.bin", tokens);
  CHECK(read_shard(dir / "d_train_000001.bin") == tokens);
  CHECK(fs::file_size(dir / "d_train_000001.bin") == 1024 + 2000);

  // Wrong magic.
  {
    std::fstream f(dir / "bad.bin", std::ios::out | std::ios::binary);
    int32_t h[256] = {20240519, 1, 0};
    f.write(reinterpret_cast<char*>(h), sizeof(h));
  }
  REQUIRE_THROWS_AS(read_shard(dir / "bad.bin"), input_error);
  REQUIRE_THROWS_WITH(read_shard(dir / "bad.bin"),
                      Catch::Contains("magic 20240519") && Catch::Contains("bad.bin"));
  // Truncated: header promises 1000 tokens, file holds 500.
  fs::copy_file(dir / "d_train_000001.bin", dir / "cut.bin");
  fs::resize_file(dir / "cut.bin", 1024 + 1000);
  REQUIRE_THROWS_WITH(read_shard(dir / "cut.bin"),
                      Catch::Contains("truncated") && Catch::Contains("1000 tokens"));
  fs::resize_file(dir / "cut.bin", 100);
  REQUIRE_THROWS_WITH(read_shard(dir / "cut.bin"), Catch::Contains("truncated"));
  // Vocabulary smaller than the ids found.
  REQUIRE_THROWS_WITH(check_vocabulary(tokens, 64, dir / "d_train_000001.bin"),
                      Catch::Contains("token id 96") && Catch::Contains("64 tokens"));
  REQUIRE_NOTHROW(check_vocabulary(tokens, 97, dir / "d_train_000001.bin"));
  REQUIRE_THROWS_AS(shard_stream({dir / "d_train_000001.bin"}, 50), input_error);

  // Directory listing by split, and consecutive windows advancing by seq.
  write_shard(dir / "d_val_000000.bin", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  auto train = list_shards(dir, "train");
  REQUIRE(train.size() == 1);
  CHECK(list_shards(dir, "val").size() == 1);
  shard_stream s(train, 97);
  std::vector<int32_t> b(2 * 5);
  s.fill(b.data(), 2, 4);
  CHECK(b == std::vector<int32_t>{0, 1, 2, 3, 4, 4, 5, 6, 7, 8});
  fs::remove_all(dir);
}

namespace {
struct counting_source : token_source {
  int32_t next = 0;
  int64_t fail_after = -1;
  void fill(int32_t* out, int64_t batch, int64_t seq) override {
    if (fail_after == 0)
      throw input_error("boom");
    fail_after--;
    for (int64_t i = 0; i < batch * (seq + 1); i++)
      out[i] = next++;
  }
};
} // namespace

TEST_CASE("batch_loader prefetches in order and passes errors on", "[training][data][timing]") {
  {
    batch_loader l(std::make_unique<counting_source>(), 2, 3);
    for (int k = 0; k < 5; k++) {
      auto b = l.next();
      REQUIRE(b.size() == 8);
      CHECK(b[0] == k * 8); // batches arrive in production order
      CHECK(b[7] == k * 8 + 7);
    }
    CHECK(l.batches_served() == 5);
    CHECK(l.tokens_per_s() > 0);
  }
  auto src = std::make_unique<counting_source>();
  src->fail_after = 2;
  batch_loader l(std::move(src), 1, 1);
  l.next();
  l.next();
  REQUIRE_THROWS_WITH(l.next(), "boom");
}
