/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsiaugment.h: training augmentations of one packed 8-bit RGB image
 * (3 or 4 bytes a pixel, any channel order, any row stride), in place.
 *
 * Contract: a WsiAugmentPlan holds the random draws for one image; it is a
 * pure function of (settings, seed, patch sequence, view index) through
 * wsirng.h, and drawing always takes the same numbers in the same order
 * whatever the probabilities, so turning one operation on never changes
 * another's draws. wsi_augment_apply() then runs, in this order:
 *  1. horizontal flip, vertical flip, then quarter turns counter-clockwise
 *     (numpy's np.fliplr, np.flipud, np.rot90 as the Python peer chains
 *     them): exact pixel permutations; turns only on square images;
 *  2. HED stain augmentation (Tellez et al. 2018, as the peer's corrected
 *     HEDColorAugmentation): optical density OD = -ln(P + 1e-6) with P in
 *     0..1, stain concentrations S = OD M^-1 with skimage's H&E-DAB matrix
 *     M, S'_i = alpha_i S_i + beta_i, P' = exp(-S' M) - 1e-6; rounded to
 *     the nearest 8-bit value (the peer truncates, so it is up to one level
 *     darker);
 *  3. colour jitter as torchvision's ColorJitter, in fixed order:
 *     brightness (x b), contrast (blend with the image's mean grey),
 *     saturation (blend with the pixel's grey), hue (a rotation of the
 *     chroma plane of YIQ by hue turns, the linear form of an HSV hue shift;
 *     torchvision converts to HSV), one clamp at the end;
 *  4. greyscale (torchvision's RandomGrayscale: R = G = B = the grey);
 *  5. Gaussian blur, separable, radius ceil(3 sigma) or fixed (DINOv2's
 *     torchvision GaussianBlur(9, ...) is radius 4), mirrored borders
 *     (OpenCV's BORDER_REFLECT_101, torch's "reflect");
 *  6. solarization (PIL's ImageOps.solarize: bytes >= threshold become
 *     255 - byte), DINOv2's order from 3 on.
 * The 4th byte of 4-byte pixels (alpha or padding) is permuted and blurred
 * with the pixel, never recoloured.
 *
 * Cost (256 x 256 RGB): flips and turns one copy of the image; HED and
 * jitter one pass each with no transcendental per pixel: OD is a
 * 256-entry table, the whole deconvolve-scale-recompose is one 3x3 matrix
 * A = M^-1 diag(alpha) M folded into per-channel tables of fixed-point
 * contributions packed three to a 64-bit word (3 loads and 2 adds give a
 * pixel's three sums), and exp() a table of output bytes every 1/2048 OD
 * (max error 0.13 of a level) that spans every value a sum can take, so no
 * clamp or branch runs per byte either (512 KiB, made once per process; a
 * pass touches its 13 KiB of OD 0..6.5); jitter's brightness/contrast curve and
 * saturation/hue matrix fold into the same tables, its contrast mean
 * costs one vectorised sweep. Blur is r + 1 multiplies and 2r adds per
 * byte and pass in float, two taps a sweep over contiguous rows
 * (vectorised; AVX2 clones where GCC's target_clones work, with the same
 * bytes as the SSE2 code). tests/benchmarks/bench-stages --kernels times
 * each kernel. No allocation once a WsiAugmentScratch has grown to the
 * image size.
 *
 * Threading: plans and settings are plain data; the constant tables are
 * made once per process behind g_once; a WsiAugmentScratch belongs to one
 * thread at a time. GStreamer-free (GLib only).
 */

#ifndef __WSI_AUGMENT_H__
#define __WSI_AUGMENT_H__

#include <glib.h>

G_BEGIN_DECLS

/* The key patchaugment mixes into wsi_rng_seed_keys() after the sequence
 * and view index ("augment" in ASCII), so its draws never coincide with
 * another consumer's. */
#define WSI_AUGMENT_RNG_KEY G_GUINT64_CONSTANT (0x6175676d656e74)

/* An image: @pixel_bytes (3 or 4) bytes a pixel, red, green and blue at
 * byte offsets @r, @g, @b of a pixel, rows @stride bytes apart. */
typedef struct
{
  guint8 *data;
  guint width;
  guint height;
  gsize stride;
  guint pixel_bytes;
  guint r, g, b;
} WsiAugmentImage;

/* What to draw from. Probabilities are 0..1; amounts as torchvision's
 * ColorJitter (factors drawn from [max (0, 1 - a), 1 + a], hue from
 * [-hue, hue] turns, hue <= 0.5); HED alpha from [1 - hed_sigma,
 * 1 + hed_sigma], beta from [-hed_sigma_bias, hed_sigma_bias]; blur sigma
 * in pixels from [blur_sigma_min, blur_sigma_max]. */
typedef struct
{
  gdouble flip_h_probability;
  gdouble flip_v_probability;
  gdouble rotate90_probability;
  gdouble hed_sigma;
  gdouble hed_sigma_bias;
  gdouble hed_probability;
  gdouble brightness;
  gdouble contrast;
  gdouble saturation;
  gdouble hue;
  gdouble jitter_probability;
  gdouble blur_sigma_min;
  gdouble blur_sigma_max;
  gdouble blur_probability;
  guint blur_radius;            /* 0: ceil (3 sigma) */
  gdouble grayscale_probability;
  gdouble solarize_probability;
  guint solarize_threshold;     /* bytes >= it are inverted */
} WsiAugmentSettings;

/* The draws for one image: which operations run and with what values. */
typedef struct
{
  gboolean flip_h;
  gboolean flip_v;
  guint quarter_turns;          /* counter-clockwise, 0..3 */
  gboolean hed;
  gfloat hed_alpha[3];          /* H, E, DAB */
  gfloat hed_beta[3];
  gboolean jitter;
  gfloat brightness;            /* factor */
  gfloat contrast;              /* factor */
  gfloat saturation;            /* factor */
  gfloat hue;                   /* turns, -0.5..0.5 */
  gboolean blur;
  gfloat blur_sigma;            /* pixels */
  guint blur_radius;            /* pixels; 0: ceil (3 sigma) */
  gboolean grayscale;
  gboolean solarize;
  guint solarize_threshold;
} WsiAugmentPlan;

/* Largest blur radius (pixels): larger radii are cut to it. */
#define WSI_AUGMENT_MAX_BLUR_RADIUS 32

typedef struct _WsiAugmentScratch WsiAugmentScratch;

/* TRUE when every probability is 0: nothing can ever change a pixel. */
gboolean wsi_augment_settings_is_identity (const WsiAugmentSettings * s);

/* Draws the plan of the image of patch @sequence, view @view_index. */
void wsi_augment_plan_draw (WsiAugmentPlan * plan,
    const WsiAugmentSettings * s, guint64 seed, guint64 sequence,
    guint view_index);

/* TRUE when the plan runs no operation. */
gboolean wsi_augment_plan_is_identity (const WsiAugmentPlan * plan);

WsiAugmentScratch *wsi_augment_scratch_new (void);
void wsi_augment_scratch_free (WsiAugmentScratch * scratch);

/* Runs @plan on @image in place. Returns the quarter turns really applied
 * (0 on a non-square image, whatever the plan says). */
guint wsi_augment_apply (const WsiAugmentPlan * plan,
    const WsiAugmentImage * image, WsiAugmentScratch * scratch);

/* The kernels wsi_augment_apply() runs, for tests and benchmarks. */
void wsi_augment_flip_rotate (const WsiAugmentImage * image, gboolean flip_h,
    gboolean flip_v, guint quarter_turns, WsiAugmentScratch * scratch);
void wsi_augment_hed (const WsiAugmentImage * image, const gfloat alpha[3],
    const gfloat beta[3], WsiAugmentScratch * scratch);
void wsi_augment_jitter (const WsiAugmentImage * image, gfloat brightness,
    gfloat contrast, gfloat saturation, gfloat hue,
    WsiAugmentScratch * scratch);
/* @radius 0: ceil (3 sigma) (OpenCV's choice); else fixed, as
 * torchvision's GaussianBlur (kernel_size = 2 radius + 1). */
void wsi_augment_blur (const WsiAugmentImage * image, gfloat sigma,
    guint radius, WsiAugmentScratch * scratch);
void wsi_augment_grayscale (const WsiAugmentImage * image,
    WsiAugmentScratch * scratch);
void wsi_augment_solarize (const WsiAugmentImage * image, guint threshold);

G_END_DECLS

#endif /* __WSI_AUGMENT_H__ */
