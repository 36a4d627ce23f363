/* TEMPORARY: a cache that keeps nothing, until wsitilecache.c lands. */
#include "wsitilecache.h"
struct _WsiTileCache { gsize max; };
WsiTileCache *wsi_tile_cache_new (gsize m) { WsiTileCache *c = g_new0 (WsiTileCache, 1); c->max = m; return c; }
void wsi_tile_cache_free (WsiTileCache * c) { g_free (c); }
void wsi_tile_cache_set_max_bytes (WsiTileCache * c, gsize m) { c->max = m; }
gsize wsi_tile_cache_get_max_bytes (WsiTileCache * c) { return c->max; }
WsiTile *wsi_tile_cache_lookup (WsiTileCache * c, const WsiTileKey * k) { return NULL; }
WsiTile *wsi_tile_cache_insert (WsiTileCache * c, const WsiTileKey * k, guint32 * a, guint w, guint h) { WsiTile *t = g_new0 (WsiTile, 1); t->ref_count = 1; t->key = *k; t->argb = a; t->width = w; t->height = h; return t; }
void wsi_tile_unref (WsiTile * t) { if (g_atomic_int_dec_and_test (&t->ref_count)) { g_free (t->argb); g_free (t); } }
guint64 wsi_tile_cache_hits (WsiTileCache * c) { return 0; }
guint64 wsi_tile_cache_misses (WsiTileCache * c) { return 0; }
gsize wsi_tile_cache_bytes (WsiTileCache * c) { return 0; }
void wsi_tile_cache_reset_counters (WsiTileCache * c) { }
void wsi_tile_cache_clear (WsiTileCache * c) { }
