/* gst-wsi
 * Copyright (C) 2026 gst-wsi developers
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */

/*
 * wsierrorrelay.h: an element error that an application running a GLib
 * main loop cannot lose, whenever it is posted.
 *
 * Why: gst-launch-1.0 (tools/gst-launch.c, 1.22 and still upstream) quits
 * its main loop from its bus *sync* handler when an ERROR is posted; its
 * asynchronous bus watch ignores ERROR. A g_main_loop_quit() that comes
 * before g_main_loop_run() is lost (the run sets the loop running again),
 * and an error while the pipeline prerolls also fails the pipeline's
 * asynchronous state change (GstBin ignores the ASYNC_DONE that follows),
 * so no state-changed or EOS message ever comes to end the loop: the run
 * sits in poll() for ever with the error printed. Any error of any element
 * found while the pipeline prerolls (no patch on blank slides, a slide set
 * that cannot be read) can land in that window, however short it is.
 *
 * Contract: each of our elements calls wsi_error_relay_watch() from its
 * post_message() vfunc for every message it posts, before chaining up. An
 * ERROR posted while no thread runs the default GMainContext (the
 * application's loop has not started yet, or it runs none) is kept, and
 * posted again, once, from an idle source on that context: if a loop ever
 * runs there, the error reaches its sync handler a second time, now with
 * the loop running, and the quit ends it. The copy is dropped unposted when
 * the element is gone or the application has changed the pipeline's state
 * since the error (the top-level bin's state cookie moved: it reacted).
 * So an application that already runs its loop, or runs none on the
 * default context (gstwsi and gst_bus_timed_pop_filtered() readers), sees
 * the error once, at once, as before; one whose loop starts late sees it
 * twice; the second copy has the same text, debug and seqnum, and the
 * boolean field WSI_ERROR_RELAY_FIELD set in its details structure
 * (gst_message_parse_error_details()).
 *
 * The same call makes the text of every ERROR, WARNING and INFO valid
 * UTF-8 (wsi_text_escape, in place): one place for every message of every
 * element, whatever bytes from a file went into it.
 *
 * Cost: one check per message an element posts (a UTF-8 validation for
 * errors, warnings and infos), nothing else unless it is
 * an ERROR; then a mutex, a try to acquire the default context and, in the
 * window, one message copy. At most one copy waits per plugin module (a
 * newer error replaces it; any one of them ends the loop).
 *
 * Threading: any thread (errors come from streaming threads); the waiting
 * copy is guarded by a mutex; the relay runs in the thread that runs the
 * default context.
 */

#ifndef __WSI_ERROR_RELAY_H__
#define __WSI_ERROR_RELAY_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* The boolean field set in the details of a relayed copy. */
#define WSI_ERROR_RELAY_FIELD "wsi-relayed"

/* Called from an element's post_message() vfunc with every message it
 * posts (the message is not taken). */
void wsi_error_relay_watch (GstElement * element, GstMessage * message);

/* An element's whole post_message() vfunc: wsi_error_relay_watch(), then
 * @parent_class's post_message(). One error per failed start: GstBaseSrc
 * and GstBaseSink post a generic one of their own ("state change failed and
 * some element failed to post a proper error message", CORE STATE_CHANGE)
 * whenever start() returns FALSE, even after the element posted why; that
 * fallback is dropped (FALSE returned, @message unreffed) when the element
 * posted an error of its own during the same gst_element_set_state() (its
 * state cookie), so the application sees the real reason only. Takes
 * @message, as post_message() does. */
gboolean wsi_error_relay_post (GstElement * element, GstMessage * message,
    GstElementClass * parent_class);

/* Makes @klass's post_message() wsi_error_relay_post() chained to the
 * parent class's, for an element's class_init instead of a vfunc of its
 * own. Nothing is done when an ancestor class already relays (a message
 * passes the relay once). Cost per message: a walk up the instance's type
 * to the class that installed it (a few qdata lookups). */
void wsi_error_relay_class_init (GstElementClass * klass);

/* TRUE while an ERROR waits to be relayed (tests). */
gboolean wsi_error_relay_pending (void);

G_END_DECLS

#endif /* __WSI_ERROR_RELAY_H__ */
