/* The index arithmetic of a 3D convolution computed as an implicit GEMM (calib_cuda's conv3d
 * kernel): GEMM rows are output pixels, columns filters, the reduction runs over channel x
 * filter taps, and the input element of (row, reduction index) is found on the fly (im2col
 * without the copy). Host and device share these functions, so the host tests check the very
 * mapping the GPU kernel uses. Stride 1, no padding; NCDHW or NDHWC (channels last) layouts. */
#pragma once

#if defined(__CUDACC__)
#define SIMCORE_HOST_DEVICE __host__ __device__
#else
#define SIMCORE_HOST_DEVICE
#endif

namespace calibration {

struct ConvShape {
  int n, c, d, h, w; ///< input: batch, channels, depth, height, width
  int k, t, r, s;    ///< filters: k outputs of c x t x r x s
  SIMCORE_HOST_DEVICE int od() const { return d - t + 1; }
  SIMCORE_HOST_DEVICE int oh() const { return h - r + 1; }
  SIMCORE_HOST_DEVICE int ow() const { return w - s + 1; }
  /** GEMM rows: output pixels over the batch. */
  SIMCORE_HOST_DEVICE long gemm_m() const { return static_cast<long>(n) * od() * oh() * ow(); }
  /** GEMM reduction: channels x filter taps. */
  SIMCORE_HOST_DEVICE int gemm_k() const { return c * t * r * s; }
};

/** Element (n, c, d, h, w) of the input in either layout. */
SIMCORE_HOST_DEVICE inline long input_index(const ConvShape& q, bool channels_last, int n, int c, int d, int h, int w)
{
  return channels_last ? ((((static_cast<long>(n) * q.d + d) * q.h + h) * q.w + w) * q.c + c)
                       : ((((static_cast<long>(n) * q.c + c) * q.d + d) * q.h + h) * q.w + w);
}

/** Element (n, k, d, h, w) of the output in either layout. */
SIMCORE_HOST_DEVICE inline long output_index(const ConvShape& q, bool channels_last, int n, int k, int d, int h,
                                             int w)
{
  return channels_last ? ((((static_cast<long>(n) * q.od() + d) * q.oh() + h) * q.ow() + w) * q.k + k)
                       : ((((static_cast<long>(n) * q.k + k) * q.od() + d) * q.oh() + h) * q.ow() + w);
}

/** The output pixel of GEMM row `row` (0 <= row < gemm_m()), w fastest. */
struct OutputPixel {
  int n, d, h, w;
};
SIMCORE_HOST_DEVICE inline OutputPixel pixel_of_row(const ConvShape& q, long row)
{
  OutputPixel p;
  p.w = static_cast<int>(row % q.ow()), row /= q.ow();
  p.h = static_cast<int>(row % q.oh()), row /= q.oh();
  p.d = static_cast<int>(row % q.od()), p.n = static_cast<int>(row / q.od());
  return p;
}

/** The filter tap of reduction index `p` (0 <= p < gemm_k()): channel, then t, r, s (s fastest),
 *  the order of a filter's row in the k x (c t r s) filter matrix. */
struct FilterTap {
  int c, t, r, s;
};
SIMCORE_HOST_DEVICE inline FilterTap tap_of_index(const ConvShape& q, int p)
{
  FilterTap f;
  f.s = p % q.s, p /= q.s;
  f.r = p % q.r, p /= q.r;
  f.t = p % q.t, f.c = p / q.t;
  return f;
}

/** The input element that GEMM entry (row, p) multiplies: A[row][p] of the implicit matrix. */
SIMCORE_HOST_DEVICE inline long gathered_input_index(const ConvShape& q, bool channels_last, const OutputPixel& px,
                                                     const FilterTap& f)
{
  return input_index(q, channels_last, px.n, f.c, px.d + f.t, px.h + f.r, px.w + f.s);
}

/** Filter k's weight at tap p: B[p][k] of the implicit matrix (filters stored k x (c t r s)). */
SIMCORE_HOST_DEVICE inline long filter_index(const ConvShape& q, int k, int p)
{
  return static_cast<long>(k) * q.gemm_k() + p;
}

} // namespace calibration
