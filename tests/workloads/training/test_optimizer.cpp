// AdamW, the learning-rate schedule and gradient clipping against formulas written out here.
#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "workloads/training/cpu/adamw.hpp"

using namespace accelbench::training;

TEST_CASE("lr schedule: linear warm-up then cosine to the end rate", "[training][optimizer]") {
  lr_schedule s{1.0, 0.1, 10, 100};
  CHECK(s.at(0) == Approx(0.1)); // (0+1)/10
  CHECK(s.at(4) == Approx(0.5));
  CHECK(s.at(9) == Approx(1.0));   // end of warm-up: the base rate
  CHECK(s.at(10) == Approx(1.0));  // cosine starts at the base rate
  CHECK(s.at(60) == Approx(0.55)); // halfway: (base + end) / 2
  CHECK(s.at(35) == Approx(0.1 + 0.9 * 0.5 * (1 + std::cos(std::numbers::pi * 0.25))));
  CHECK(s.at(110) == Approx(0.1));
  CHECK(s.at(5000) == Approx(0.1)); // stays at the end rate
}

TEST_CASE("clip_grad_norm scales to the global norm and reports the norm before",
          "[training][optimizer]") {
  std::vector<float> g = {3, 4, 0, 0}; // norm 5
  CHECK(clip_grad_norm(g.data(), g.size(), 10.0) == Approx(5.0));
  CHECK(g[0] == 3.0f); // below the bound: untouched
  CHECK(clip_grad_norm(g.data(), g.size(), 1.0) == Approx(5.0));
  CHECK(g[0] == Approx(0.6).epsilon(1e-5));
  CHECK(g[1] == Approx(0.8).epsilon(1e-5));
  CHECK(std::sqrt(sum_of_squares(g.data(), g.size())) == Approx(1.0).epsilon(1e-5));
  CHECK(clip_grad_norm(g.data(), g.size(), 0.0) == Approx(1.0).epsilon(1e-5)); // 0: no clipping
}

TEST_CASE("sum_of_squares is bit-identical for any thread count", "[training][optimizer]") {
  std::vector<float> x(300000);
  for (size_t i = 0; i < x.size(); i++)
    x[i] = float(std::sin(double(i)) * 1e-3);
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  double a = sum_of_squares(x.data(), x.size());
  omp_set_num_threads(2);
  double b = sum_of_squares(x.data(), x.size());
  omp_set_num_threads(saved);
  CHECK(a == b);
}

TEST_CASE("AdamW matches the decoupled-weight-decay update rule", "[training][optimizer]") {
  // Two tensors: a 2x2 matrix (decayed) and a gain vector (not decayed).
  std::vector<param_tensor> t(2);
  t[0] = {"w", 0, {2, 2}, 4, true};
  t[1] = {"g", 4, {2}, 2, false};
  std::vector<float> p = {1.0f, -2.0f, 0.5f, 0.0f, 1.0f, 1.0f};
  std::vector<double> ref(p.begin(), p.end()), m(6, 0.0), v(6, 0.0);
  adamw_config c{0.9, 0.95, 1e-8, 0.1};
  adamw opt(6);
  const double lr = 0.01;
  for (int step = 1; step <= 3; step++) {
    std::vector<float> g = {0.1f * step, -0.2f, 0.3f, 0.0f, 0.05f, -0.5f * step};
    opt.step(p.data(), g.data(), t, lr, c);
    for (int i = 0; i < 6; i++) {
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.95 * v[i] + 0.05 * double(g[i]) * g[i];
      double mh = m[i] / (1 - std::pow(0.9, step)), vh = v[i] / (1 - std::pow(0.95, step));
      double wd = i < 4 ? 0.1 : 0.0;
      ref[i] -= lr * (mh / (std::sqrt(vh) + 1e-8) + wd * ref[i]);
    }
  }
  for (int i = 0; i < 6; i++)
    CHECK(p[i] == Approx(ref[i]).epsilon(1e-5).margin(1e-7));
  CHECK(opt.steps() == 3);
  // Weight decay alone moves a parameter with zero gradient only when the tensor decays.
  CHECK(p[3] == 0.0f);
}
