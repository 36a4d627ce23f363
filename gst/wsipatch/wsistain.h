/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsistain.h: stain statistics of H&E images and the per-pixel mapping of
 * one image's stains onto a target's (stain normalisation).
 *
 * Contract. An estimate (WsiStainEstimate) is a pure function of the
 * pixels it is given; the same pixels give the same bytes on every thread.
 *  - Reinhard et al. 2001: pixels go to Ruderman's l-alpha-beta space
 *    (RGB in 0..255 -> LMS by Ruderman's matrix, LMS clamped below at 1 so
 *    black never takes log 0, log10, then the decorrelating lab matrix);
 *    the estimate is each channel's mean and standard deviation
 *    (population, ddof 0). Normalising maps each channel to
 *    (x - mean) / std * std_target + mean_target and back.
 *  - Macenko et al. 2009, with torchstain's defaults (Io = 240, OD
 *    threshold beta = 0.15, angle percentiles alpha = 1): OD =
 *    -ln ((I + 1) / Io); pixels with every channel's OD >= beta are tissue;
 *    the eigenvectors of their OD covariance (unbiased) with the two
 *    largest eigenvalues span a plane; the angles of the projections give
 *    the alpha-th and (100 - alpha)-th percentiles (numpy's linear
 *    interpolation), whose directions are the two stains, haematoxylin the
 *    one with the larger red OD. Concentrations are the least-squares
 *    solution of OD = S c over all given pixels; the estimate keeps the
 *    99th percentile of each stain's concentration. Normalising rescales
 *    each pixel's concentrations by max_target / max_source and recomposes
 *    with the target's stains: out = min (255, Io exp (-S_t c')),
 *    truncated to a byte as torchstain's astype(uint8). The eigenvectors'
 *    signs are fixed (largest one with a positive sum) so the angles never
 *    wrap; numpy's eigh leaves them arbitrary.
 *  - Vahadane et al. 2016: the stain matrix from a sparse non-negative
 *    factorisation of the tissue OD (wsi_stain_estimate_vahadane), applied
 *    as Macenko's.
 * A patch of glass, a single colour or black has no stain estimate
 * (wsi_stain_estimate_* returns FALSE): too few tissue pixels, a
 * degenerate covariance, or stains that cannot be told apart. Nothing here
 * produces NaN: every division is guarded and every result is checked.
 *
 * Cost. Estimating visits each pixel a few times in double (Macenko: the
 * percentiles are linear-time selections, no sort); a 224 px patch takes a
 * few milliseconds, a 1024 x 768 overview tens (Vahadane's factorisation
 * about 60 ms of CPU). Applying is one pass: Macenko (and Vahadane) in
 * fixed point, as wsiaugment.h's HED: the OD map folded into three
 * per-channel tables of 21-bit contributions packed in 64-bit words (3
 * loads and 2 adds give a pixel's three OD sums, in 1/2048 OD) and one
 * table of output bytes (240 exp (-OD), 11 k entries; at most 0.06 of a
 * level off before truncation); the tables are rebuilt only when the plan
 * changes (6 KiB, per thread), with a float path for plans too large for
 * the fields. Reinhard in float over rows of planes: a 3 x 3 matrix, log2
 * and exp2 as division-free polynomials on the float's bits (errors 3e-5
 * and 4e-6 relative: under 0.02 of an output level) and two more
 * matrices, no branch or call per pixel, vectorised by GCC at -O3
 * (AVX-512 and AVX2 clones where target_clones work, -ffp-contract=off:
 * the same bytes on every CPU, checked by libs_wsistain_paths); bytes to
 * planes and back with a constant pixel stride, so that they vectorise.
 * No allocation once a WsiStainScratch has grown to the widest image.
 *
 * Threading: estimates and plans are plain data; a WsiStainScratch belongs
 * to one thread at a time. GLib only.
 */

#ifndef __WSI_STAIN_H__
#define __WSI_STAIN_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  WSI_STAIN_REINHARD = 0,
  WSI_STAIN_MACENKO = 1,
  WSI_STAIN_VAHADANE = 2,
} WsiStainMethod;

/* torchstain's defaults (Macenko). */
#define WSI_STAIN_IO 240.0
#define WSI_STAIN_BETA 0.15
#define WSI_STAIN_ALPHA 1.0

/* Vahadane: the sparsity weight (the paper's and StainTools' lambda), the
 * tissue pixels factorised at most (a deterministic subsample) and the
 * alternations. */
#define WSI_STAIN_VAHADANE_LAMBDA 0.1
#define WSI_STAIN_VAHADANE_PIXELS 20000
#define WSI_STAIN_VAHADANE_ITERATIONS 100

/* Fewest tissue pixels (OD above beta) a Macenko estimate needs. */
#define WSI_STAIN_MIN_PIXELS 16

/* An image: @pixel_bytes (3 or 4) a pixel, red, green and blue at byte
 * offsets @r, @g, @b, rows @stride bytes apart. */
typedef struct
{
  guint8 *data;
  guint width;
  guint height;
  gsize stride;
  guint pixel_bytes;
  guint r, g, b;
} WsiStainImage;

/* Reinhard's statistics: lab channel means and standard deviations. */
typedef struct
{
  gdouble mean[3];
  gdouble std[3];
} WsiStainLab;

/* Macenko's: the two stains' unit OD vectors (H then E, each R, G, B) and
 * their concentrations' 99th percentiles. */
typedef struct
{
  gdouble stains[2][3];
  gdouble max_c[2];
} WsiStainMatrix;

/* The target torchstain ships (its HERef and maxCRef, from Macenko's
 * reference implementation): the built-in Macenko target. */
extern const WsiStainMatrix wsi_stain_macenko_default;

/* Pixels to estimate from: the image, and optionally a mask of the same
 * size (one byte a pixel, rows @mask_stride apart, non-zero = use). */
typedef struct
{
  const WsiStainImage *image;
  const guint8 *mask;
  gsize mask_stride;
} WsiStainPixels;

/* Reinhard's statistics of the selected pixels; FALSE when none is
 * selected or a standard deviation is not above 1e-6. */
gboolean wsi_stain_estimate_lab (const WsiStainPixels * px, WsiStainLab * out);

/* Macenko's estimate of the selected pixels; FALSE with no usable
 * estimate (see above). @n_tissue (may be NULL): pixels above beta. */
gboolean wsi_stain_estimate_macenko (const WsiStainPixels * px,
    WsiStainMatrix * out, guint64 * n_tissue);

/* Vahadane's stain matrix (sparse non-negative factorisation OD = D A,
 * min 0.5 |OD - D A|^2 + lambda |A|_1 with D, A >= 0 and unit atoms, as
 * spams' trainDL in StainTools) of the tissue pixels (OD above beta),
 * started from Macenko's estimate; the max_c as Macenko's (least-squares
 * concentrations, not StainTools' per-pixel lasso, so that the apply stays
 * one matrix). Meant once per slide: tens of milliseconds. */
gboolean wsi_stain_estimate_vahadane (const WsiStainPixels * px,
    WsiStainMatrix * out, guint64 * n_tissue);

/* Share (0..1) of the image's pixels that are tissue by Macenko's
 * threshold (every channel's OD >= beta). */
gdouble wsi_stain_tissue_share (const WsiStainImage * image);

/* What one image's apply needs, made from the source and target
 * estimates (cheap: a few 3 x 3 products). */
typedef struct
{
  WsiStainMethod method;
  gfloat m[9];                  /* Macenko: OD out = m OD in; Reinhard: lms log2 map */
  gfloat c[3];                  /* the offset (log2 LMS; Macenko: -log2 e x OD) */
} WsiStainPlan;

/* FALSE when the estimates give no finite mapping (the image passes). */
gboolean wsi_stain_plan_reinhard (WsiStainPlan * plan,
    const WsiStainLab * source, const WsiStainLab * target);
gboolean wsi_stain_plan_macenko (WsiStainPlan * plan,
    const WsiStainMatrix * source, const WsiStainMatrix * target);

/* Stain augmentation on the source's own stain matrix (Tellez et al.'s
 * HED jitter, with the slide's estimated stains instead of a fixed
 * matrix): the source concentrations, scaled as normalisation scales
 * them, become alpha_i c_i + beta_i (beta in OD units) before they are
 * recomposed on the target's stains. alpha = 1, beta = 0 is
 * wsi_stain_plan_macenko(). */
gboolean wsi_stain_plan_macenko_jitter (WsiStainPlan * plan,
    const WsiStainMatrix * source, const WsiStainMatrix * target,
    const gdouble alpha[2], const gdouble beta[2]);

typedef struct _WsiStainScratch WsiStainScratch;

WsiStainScratch *wsi_stain_scratch_new (void);
void wsi_stain_scratch_free (WsiStainScratch * scratch);

/* Normalises @image in place by @plan. */
void wsi_stain_apply (const WsiStainPlan * plan, const WsiStainImage * image,
    WsiStainScratch * scratch);

/* Text forms for metas (round trip exact: %.17g): "h_r h_g h_b e_r e_g
 * e_b", "max_h max_e", "mean_l mean_a mean_b", "std_l std_a std_b". */
gchar *wsi_stain_format_numbers (const gdouble * values, guint n);
/* Parses exactly @n numbers; FALSE otherwise or when one is not finite. */
gboolean wsi_stain_parse_numbers (const gchar * text, gdouble * values,
    guint n);

G_END_DECLS

#endif /* __WSI_STAIN_H__ */
