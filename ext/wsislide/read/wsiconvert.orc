# Pixel kernels for patchreader: OpenSlide's premultiplied ARGB
# (one 0xAARRGGBB word per pixel) composited on white,
# c' = c + (255 - a) for c in R, G, B, into 4-byte output pixels.
#
# The sum is a wrapping byte add (addb), like the C code's store of
# (c + 255 - a) into a guint8: identical output even for malformed
# pixels with c > a.  The alpha byte becomes a + (255 - a) = 255 on its
# own, which is the opaque alpha RGBA wants and the padding RGBx/BGRx
# carry.  Output words are written in host order, so the kernels give
# the named byte layout on little-endian hosts only (patchreader uses
# C on big-endian ones).
#
# A packed 3-byte RGB pixel has no ORC element type (arrays step by 1,
# 2, 4 or 8 bytes), so RGB output stays in C.
#
# orcc generates the kernels at build time; a build without ORC uses
# wsiresample.c's C loop instead (the same arithmetic and bytes, checked by
# libs_wsiresample_scalar), so no generated copy is kept in the tree.

.function wsi_orc_argb_on_white_bgrx
.flags 2d
.dest 4 d1 guint8
.source 4 s1 guint32
.temp 2 ar
.temp 1 glass
.temp 4 glass4

select1lw ar, s1
select1wb glass, ar
xorb glass, glass, 255
splatbl glass4, glass
x4 addb d1, s1, glass4


.function wsi_orc_argb_on_white_rgbx
.flags 2d
.dest 4 d1 guint8
.source 4 s1 guint32
.temp 2 ar
.temp 1 glass
.temp 4 glass4
.temp 4 bgrx

select1lw ar, s1
select1wb glass, ar
xorb glass, glass, 255
splatbl glass4, glass
x4 addb bgrx, s1, glass4
swapl bgrx, bgrx
shrul bgrx, bgrx, 8
orl d1, bgrx, 0xff000000
