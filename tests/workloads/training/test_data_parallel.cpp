// The pieces of data-parallel train.llama that need no second rank: the gradient
// buckets, each rank's slice of the global batch, and the parameter hash the replicas compare.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "workloads/training/data_parallel.hpp"

using namespace accelbench::training;

TEST_CASE("gradient buckets cover the buffer from its end, none above the cap", "[training][dp]") {
  for (size_t n : {size_t(1), size_t(10), size_t(1000), size_t(1001)})
    for (size_t cap : {size_t(1), size_t(7), size_t(1000), size_t(5000)}) {
      auto b = gradient_buckets(n, cap);
      REQUIRE(!b.empty());
      CHECK(b.front().second == n); // the first bucket ends where backward starts
      CHECK(b.back().first == 0);
      for (size_t i = 0; i < b.size(); i++) {
        CHECK(b[i].second - b[i].first <= cap);
        CHECK(b[i].second > b[i].first);
        if (i > 0)
          CHECK(b[i].second == b[i - 1].first); // contiguous, no gap, no overlap
      }
      CHECK(b.size() == (n + cap - 1) / cap);
    }
}

namespace {
// Window i holds i * 1000 + position: which window a rank got is visible in its tokens.
class counting_source : public token_source {
public:
  void fill(int32_t* out, int64_t batch, int64_t seq) override {
    for (int64_t w = 0; w < batch; w++, m_next++)
      for (int64_t t = 0; t <= seq; t++)
        out[w * (seq + 1) + t] = int32_t(m_next * 1000 + t);
  }

private:
  int64_t m_next = 0;
};
} // namespace

TEST_CASE("rank r trains on windows r*B to (r+1)*B - 1 of each global batch", "[training][dp]") {
  const int world = 3;
  const int64_t b = 2, seq = 4;
  for (int rank = 0; rank < world; rank++) {
    rank_slice_source src(std::make_unique<counting_source>(), world, rank);
    std::vector<int32_t> out(size_t(b * (seq + 1)));
    for (int step = 0; step < 2; step++) {
      src.fill(out.data(), b, seq);
      for (int64_t w = 0; w < b; w++) {
        const int64_t global_window = step * world * b + rank * b + w;
        CHECK(out[size_t(w * (seq + 1))] == global_window * 1000);
        CHECK(out[size_t(w * (seq + 1) + seq)] == global_window * 1000 + seq);
      }
    }
  }
}

TEST_CASE("the parameter hash changes with one ulp of one parameter", "[training][dp]") {
  std::vector<float> p(1000, 0.25f);
  const std::string h = parameter_hash(p.data(), p.size());
  CHECK(h.size() == 16);
  CHECK(parameter_hash(p.data(), p.size()) == h);
  p[617] = std::nextafter(p[617], 1.0f);
  CHECK(parameter_hash(p.data(), p.size()) != h);
}
