/* The implicit-GEMM index arithmetic of calib_cuda's conv3d kernel (shared with the device
 * code), checked on the host where no GPU is: the GEMM it describes, summed here, equals a
 * direct convolution written with its own index formulas, in both layouts, and it writes
 * every output element once and reads only inside the input. */
#include <calibration/conv3d_implicit_gemm.hpp>

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

namespace {

using calibration::ConvShape;

/** Direct convolution, stride 1, no padding; weights k x c x t x r x s; own layout strides. */
std::vector<double> direct_conv(const ConvShape& q, bool last, const std::vector<double>& in,
                                const std::vector<double>& wt)
{
  const int od = q.d - q.t + 1, oh = q.h - q.r + 1, ow = q.w - q.s + 1;
  auto at_in = [&](int n, int c, int d, int h, int w) {
    const long i = last ? (((long(n) * q.d + d) * q.h + h) * q.w + w) * q.c + c
                        : (((long(n) * q.c + c) * q.d + d) * q.h + h) * q.w + w;
    return in.at(static_cast<std::size_t>(i));
  };
  std::vector<double> out(static_cast<std::size_t>(q.n) * q.k * od * oh * ow, 0.0);
  for (int n = 0; n < q.n; n++)
    for (int k = 0; k < q.k; k++)
      for (int d = 0; d < od; d++)
        for (int h = 0; h < oh; h++)
          for (int w = 0; w < ow; w++) {
            double acc = 0;
            for (int c = 0; c < q.c; c++)
              for (int t = 0; t < q.t; t++)
                for (int r = 0; r < q.r; r++)
                  for (int s = 0; s < q.s; s++)
                    acc += at_in(n, c, d + t, h + r, w + s) *
                           wt.at(static_cast<std::size_t>((((long(k) * q.c + c) * q.t + t) * q.r + r) * q.s + s));
            const long o = last ? (((long(n) * od + d) * oh + h) * ow + w) * q.k + k
                                : (((long(n) * q.k + k) * od + d) * oh + h) * ow + w;
            out.at(static_cast<std::size_t>(o)) = acc;
          }
  return out;
}

} // namespace

TEST_CASE("conv3d as an implicit GEMM gives the direct convolution in both layouts", "[calibration][cuda]")
{
  const ConvShape shapes[] = {
      {2, 3, 6, 7, 5, 4, 3, 2, 3}, // the kernel's own check
      {1, 1, 3, 3, 3, 1, 3, 3, 3}, // one output pixel
      {3, 5, 4, 9, 6, 7, 1, 1, 1}, // 1x1x1 filters: a plain GEMM over channels
      {1, 2, 5, 4, 7, 3, 5, 1, 2}, // the filter as deep as the input
      {2, 4, 3, 5, 4, 17, 2, 3, 2}, // more filters than a 16-wide tile
  };
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> small(-8, 8); // integers: every sum exact, in any order
  for (const auto& q : shapes)
    for (bool last : {false, true}) {
      INFO("shape n" << q.n << " c" << q.c << " " << q.d << "x" << q.h << "x" << q.w << ", k" << q.k << " "
                     << q.t << "x" << q.r << "x" << q.s << (last ? ", NDHWC" : ", NCDHW"));
      std::vector<double> in(static_cast<std::size_t>(q.n) * q.c * q.d * q.h * q.w), wt(
          static_cast<std::size_t>(q.k) * q.gemm_k());
      for (auto& x : in)
        x = small(rng);
      for (auto& x : wt)
        x = small(rng);
      const std::vector<double> ref = direct_conv(q, last, in, wt);
      REQUIRE(static_cast<long>(ref.size()) == q.gemm_m() * q.k);
      std::vector<double> out(ref.size(), 0.0);
      std::vector<int> writes(ref.size(), 0);
      bool inside = true;
      for (long row = 0; row < q.gemm_m(); row++) {
        const calibration::OutputPixel px = calibration::pixel_of_row(q, row);
        // w fastest, then h, d, n: the row back from the pixel.
        REQUIRE(((long(px.n) * q.od() + px.d) * q.oh() + px.h) * q.ow() + px.w == row);
        for (int col = 0; col < q.k; col++) {
          double acc = 0;
          for (int p = 0; p < q.gemm_k(); p++) {
            const long i = calibration::gathered_input_index(q, last, px, calibration::tap_of_index(q, p));
            const long f = calibration::filter_index(q, col, p);
            inside = inside && i >= 0 && i < static_cast<long>(in.size()) && f >= 0 &&
                     f < static_cast<long>(wt.size());
            if (inside)
              acc += in[static_cast<std::size_t>(i)] * wt[static_cast<std::size_t>(f)];
          }
          const long o = calibration::output_index(q, last, px.n, col, px.d, px.h, px.w);
          REQUIRE(o >= 0);
          REQUIRE(o < static_cast<long>(out.size()));
          out[static_cast<std::size_t>(o)] = acc;
          writes[static_cast<std::size_t>(o)]++;
        }
      }
      CHECK(inside);
      CHECK(writes == std::vector<int>(ref.size(), 1));
      CHECK(out == ref);
    }
}

TEST_CASE("a filter tap and its reduction index map one to one", "[calibration][cuda]")
{
  const ConvShape q{1, 3, 8, 8, 8, 2, 2, 3, 4};
  std::vector<int> seen(static_cast<std::size_t>(q.gemm_k()), 0);
  for (int p = 0; p < q.gemm_k(); p++) {
    const calibration::FilterTap f = calibration::tap_of_index(q, p);
    REQUIRE(f.c >= 0);
    REQUIRE(f.c < q.c);
    REQUIRE(((f.c * q.t + f.t) * q.r + f.r) * q.s + f.s == p); // c, t, r, s with s fastest
    seen[static_cast<std::size_t>(p)]++;
  }
  CHECK(seen == std::vector<int>(seen.size(), 1));
}
