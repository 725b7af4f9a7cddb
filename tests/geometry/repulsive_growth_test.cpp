// Host instantiation of repulsive_growth_tests.hpp, and the flow's own checks on the host context.
#include "repulsive_growth_tests.hpp"


namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(growth_sweeps, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(growth_replays, std::tuple<track_gen::host_policy>);

/// The flow's energy in double, written from its definition (stages::repulsive_growth's comment),
/// not from the stage's gradient code: tangent-point pairs, obstacle points, length term.
struct growth_energy {
  int n;
  double alpha, beta, eps, length_weight, L0, target;
  std::vector<double> ox, oy, mass;

  double operator()(const std::vector<double>& X, const std::vector<double>& Y) const {
    std::vector<double> tx(n), ty(n), w(n);
    double E = 0, perimeter = 0;
    for (int i = 0; i < n; ++i) {
      const int a = (i + n - 1) % n, c = (i + 1) % n;
      const double ux = X[c] - X[a], uy = Y[c] - Y[a], l = std::hypot(ux, uy);
      tx[i] = ux / l;
      ty[i] = uy / l;
      w[i] = 0.5 * (std::hypot(X[c] - X[i], Y[c] - Y[i]) + std::hypot(X[i] - X[a], Y[i] - Y[a]));
      perimeter += std::hypot(X[c] - X[i], Y[c] - Y[i]);
    }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const int d = std::abs(i - j);
        if (std::min(d, n - d) <= 2) continue;
        const double dx = X[j] - X[i], dy = Y[j] - Y[i];
        const double wedge = dx * ty[i] - dy * tx[i];
        E += std::pow(std::fabs(wedge) + eps, alpha) / std::pow(dx * dx + dy * dy + eps * eps, beta / 2) * w[i] * w[j];
      }
    for (int i = 0; i < n; ++i)
      for (std::size_t m = 0; m < ox.size(); ++m) {
        const double dx = X[i] - ox[m], dy = Y[i] - oy[m];
        E += mass[m] * std::pow(dx * dx + dy * dy + 1e-8, -(beta - alpha) / 2);
      }
    return E + length_weight * std::pow((perimeter - target) / L0, 2);
  }
};

TEST_CASE("repulsive_growth: the flow's gradient is the energy's (central differences in double)") {
  namespace tg = track_gen;
  using tg::detail::growth::vec2;
  struct gradient_case {
    float alpha;
    int n;
  };
  // 6 and 5 as beta: integer and half-integer exponents; 8 points: the coarsest level allowed,
  // whose pairs are only those 3 to 5 apart.
  for (const gradient_case k : {gradient_case{3.0f, 40}, gradient_case{2.5f, 40}, gradient_case{3.0f, 8}}) {
    const float alpha = k.alpha;
    CAPTURE(alpha);
    CAPTURE(k.n);
    tg::repulsive_growth_params g;
    g.alpha = alpha;
    g.beta = 2.0f * alpha;
    const int n = k.n;
    std::vector<float> scratch(static_cast<std::size_t>(tg::detail::growth::layout::make(n).floats));
    auto f = tg::stages::repulsive_growth::flow::in(scratch.data(), n, g);
    f.L0 = 2.7f;
    f.k_discs = 2;
    growth_energy energy{n, g.alpha, g.beta, tg::detail::growth::kernel_epsilon, g.length_weight, f.L0, 3.5, {}, {}, {}};
    std::vector<double> X(n), Y(n);
    for (int i = 0; i < n; ++i) {  // a wavy loop, with a dent near the first disc
      const double a = 2 * pi_d * i / n, r = 0.5 + 0.15 * std::sin(3 * a) + 0.05 * std::cos(7 * a);
      f.x[i] = vec2{static_cast<float>(r * std::cos(a)), static_cast<float>(r * std::sin(a))};
      X[i] = f.x[i].x;
      Y[i] = f.x[i].y;
    }
    const int wall = tg::detail::growth::wall_points, disc = tg::detail::growth::disc_points;
    for (int m = 0; m < wall; ++m) {
      const double a = 2 * pi_d * m / wall;
      f.obstacles[m] = vec2{static_cast<float>(1.716 * std::cos(a)), static_cast<float>(1.716 * std::sin(a))};
    }
    for (int j = 0; j < 2; ++j) {
      f.masses[j] = 0.01f * static_cast<float>(j + 1);
      for (int m = 0; m < disc; ++m) {
        const double a = 2 * pi_d * m / disc;
        f.obstacles[wall + disc * j + m] =
            vec2{static_cast<float>(0.8 + 0.05 * std::cos(a)), static_cast<float>(-0.3 + 0.6 * j + 0.05 * std::sin(a))};
      }
    }
    for (int m = 0; m < wall + 2 * disc; ++m) {
      energy.ox.push_back(f.obstacles[m].x);
      energy.oy.push_back(f.obstacles[m].y);
      energy.mass.push_back(m < wall ? f.wall_mass : f.masses[(m - wall) / disc]);
    }
    tg::detail::host_block_context ctx;
    const float perimeter = f.gradient(ctx, n, static_cast<float>(energy.target), true);
    double worst = 0, largest = 0, perimeter_d = 0;
    for (int i = 0; i < n; ++i) perimeter_d += std::hypot(X[(i + 1) % n] - X[i], Y[(i + 1) % n] - Y[i]);
    CHECK(std::fabs(perimeter - perimeter_d) < 1e-5 * perimeter_d);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 2; ++c) {
        std::vector<double> Xp = X, Yp = Y, Xm = X, Ym = Y;
        const double h = 1e-6;
        (c == 0 ? Xp : Yp)[i] += h;
        (c == 0 ? Xm : Ym)[i] -= h;
        const double fd = (energy(Xp, Yp) - energy(Xm, Ym)) / (2 * h);
        const double analytic = c == 0 ? f.gp[i].x : f.gp[i].y;
        worst = std::max(worst, std::fabs(fd - analytic));
        largest = std::max(largest, std::fabs(fd));
      }
    MESSAGE("alpha " << alpha << ": largest |dE/dx| " << largest << ", worst |analytic - central difference| " << worst);
    CHECK(largest > 1.0);
    CHECK(worst < 1e-5 * largest);
    // Without the discs the gradient changes: they are in it.
    f.gradient(ctx, n, static_cast<float>(energy.target), false);
    energy.mass.resize(static_cast<std::size_t>(wall));
    energy.ox.resize(static_cast<std::size_t>(wall));
    energy.oy.resize(static_cast<std::size_t>(wall));
    std::vector<double> Xp = X, Xm = X;
    Xp[n / 2] += 1e-6;
    Xm[n / 2] -= 1e-6;
    CHECK(std::fabs((energy(Xp, Y) - energy(Xm, Y)) / 2e-6 - f.gp[n / 2].x) < 1e-5 * largest);
  }
}

TEST_CASE("repulsive_growth: the grown points are evenly spaced, inside the domain, of the drawn length") {
  namespace tg = track_gen;
  tg::track_params p = tg::presets::track(1);
  p.seed = 3;
  const tg::repulsive_growth_params& g = p.repulsive_growth;
  for (std::uint32_t env = 0; env < 6; ++env) {
    CAPTURE(env);
    const grown_curve curve = grow_on_host(p, env);
    const std::vector<float3>& control = curve.control;
    REQUIRE(static_cast<int>(control.size()) == g.points);
    std::vector<double> edges;
    double length = 0, farthest = 0;
    for (int i = 0; i < g.points; ++i) {
      const float3 a = control[static_cast<std::size_t>(i)], b = control[static_cast<std::size_t>((i + 1) % g.points)];
      edges.push_back(std::hypot(static_cast<double>(b.x) - a.x, static_cast<double>(b.y) - a.y));
      length += edges.back();
      farthest = std::max(farthest, std::hypot(static_cast<double>(a.x), static_cast<double>(a.y)));
      CHECK(a.z == 0.0f);
    }
    CHECK(length == doctest::Approx(curve.drawn_length).epsilon(0.01));
    CHECK(farthest < g.domain_radius);
    const double mean = length / g.points;
    for (double e : edges) CHECK(std::fabs(e - mean) < 0.05 * mean);
  }
}

TEST_CASE("family_pipeline refuses the repulsive family; any_family_pipeline mixes it with the others") {
  namespace tg = track_gen;
  tg::track_params p = growth_params(8, 2);
  using five = tg::course<tg::presets::family_pipeline, tg::host_policy>;
  CHECK_THROWS_WITH_AS(five(p, 1.0f), doctest::Contains("use presets::any_family_pipeline"), std::invalid_argument);
  p.generator.weights[static_cast<int>(tg::generator_family::hull)] = 1.0f;
  p.generator.weights[static_cast<int>(tg::generator_family::repulsive)] = 1.0f;
  CHECK_THROWS_WITH_AS(five(p, 1.0f), doctest::Contains("can draw the 'repulsive' family"), std::invalid_argument);
  // A mix of hull and repulsive: each env's track is its family's own pipeline's, bit for bit.
  tg::course<tg::presets::any_family_pipeline, tg::host_policy> mixed(p, 1.0f);
  const tg::track_snapshot s = mixed.copy_tracks({});
  tg::track_params hull = p, growth = p;
  for (float& w : hull.generator.weights) w = 0.0f;
  for (float& w : growth.generator.weights) w = 0.0f;
  hull.generator.family = tg::generator_family::hull;
  growth.generator.family = tg::generator_family::repulsive;
  const tg::track_snapshot sh = tg::course<tg::presets::hull_pipeline, tg::host_policy>(hull, 1.0f).copy_tracks({});
  const tg::track_snapshot sg = tg::course<tg::presets::repulsive_pipeline, tg::host_policy>(growth, 1.0f).copy_tracks({});
  int drawn[2] = {0, 0};
  for (int e = 0; e < s.num_envs; ++e) {
    const int f = s.family[static_cast<std::size_t>(e)];
    REQUIRE((f == static_cast<int>(tg::generator_family::hull) || f == static_cast<int>(tg::generator_family::repulsive)));
    const tg::track_snapshot& own = f == static_cast<int>(tg::generator_family::hull) ? sh : sg;
    ++drawn[f == static_cast<int>(tg::generator_family::hull) ? 0 : 1];
    const std::size_t begin = s.sample_index(e, 0);
    CHECK(std::memcmp(&s.position[begin], &own.position[begin], sizeof(float3) * static_cast<std::size_t>(s.num_samples)) == 0);
    CHECK(s.status[static_cast<std::size_t>(e)] == own.status[static_cast<std::size_t>(e)]);
  }
  CHECK(drawn[0] > 0);
  CHECK(drawn[1] > 0);
}

TEST_CASE("repulsive_growth: the smallest schedule (16 points, 2 levels) grows a curve of the drawn length") {
  namespace tg = track_gen;
  tg::track_params p = tg::presets::track(1);
  p.seed = 4;
  p.repulsive_growth.points = 16;
  p.repulsive_growth.levels = 2;
  const grown_curve curve = grow_on_host(p, 0);
  const std::vector<float3>& control = curve.control;
  REQUIRE(control.size() == 16u);
  double length = 0;
  for (int i = 0; i < 16; ++i) {
    const float3 a = control[static_cast<std::size_t>(i)], b = control[static_cast<std::size_t>((i + 1) % 16)];
    CHECK(tg::detail::is_finite(a));
    length += std::hypot(static_cast<double>(b.x) - a.x, static_cast<double>(b.y) - a.y);
  }
  CHECK(length == doctest::Approx(curve.drawn_length).epsilon(0.05));
}

TEST_CASE("no gate course draws the repulsive family: gate_course_pipeline and gate_sequences say so") {
  namespace tg = track_gen;
  tg::track_params p = tg::presets::gate_course(4);
  p.generator.family = tg::generator_family::repulsive;
  using gates = tg::course<tg::presets::gate_course_pipeline, tg::host_policy>;
  CHECK_THROWS_WITH_AS(gates(p, tg::presets::gate_course_spacing(p)), doctest::Contains("no gate course draws it"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(tg::detail::check_gate_sequence_params(p), doctest::Contains("no gate course draws it"),
                       std::invalid_argument);
}
}  // namespace tg_test
