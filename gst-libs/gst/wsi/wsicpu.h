/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsicpu.h: which optional x86 instruction sets the running CPU has, for
 * the kernels that carry a hand-written SIMD form beside their portable
 * one (tissue planes, overview pixel conversion, crop resampling, batch
 * copies).
 *
 * Why here: each of those kernels asked the CPU itself, with its own
 * cache and its own idea of thread safety; one answer serves them all.
 *
 * Contract: wsi_cpu_has() is TRUE when every feature in @features is
 * present; FALSE on other architectures or compilers without
 * __builtin_cpu_supports(). A kernel still compiles its SIMD form only
 * where the compiler can (its own #if), and calls it only when this
 * says TRUE. The answer never changes during a process.
 *
 * Cost: the first call runs the CPUID probe (__builtin_cpu_init()); every
 * later call is one atomic load and a mask test, cheap enough per row.
 *
 * Threading: any thread; the first calls may race and probe more than
 * once, each storing the same answer.
 */

#ifndef __WSI_CPU_H__
#define __WSI_CPU_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  WSI_CPU_SSSE3 = 1 << 0,
  WSI_CPU_AVX = 1 << 1,
  WSI_CPU_AVX2 = 1 << 2,
} WsiCpuFeatures;

gboolean wsi_cpu_has (WsiCpuFeatures features);

G_END_DECLS

#endif /* __WSI_CPU_H__ */
