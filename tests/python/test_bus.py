"""Reading stream statistics off the bus keeps the warnings and errors it meets
(GstBus.pop_filtered discards every message type it is not asked for)."""
from gi.repository import GLib

import gstwsi
from gstwsi.stream import Gst


def finite(slides):
    return gstwsi.standard_pipeline(slides, batch_size=4, patch_size=32, patches_per_slide=4,
                                    cycle=False, seed=1, threads=1)


def _post(stream, kind, text):
    src = stream.pipeline.get_by_name("sink")
    error = GLib.Error.new_literal(Gst.ResourceError.quark(), text, int(Gst.ResourceError.READ))
    make = Gst.Message.new_warning if kind == "warning" else Gst.Message.new_error
    stream.pipeline.get_bus().post(make(src, error, "posted by the test"))


def test_read_stream_stats_keeps_warnings_and_errors(slides):
    stream = gstwsi.BatchStream(finite(slides), torch=False)
    try:
        assert stream.next_batch() is not None
        _post(stream, "warning", "a warning the stats reader meets")
        _post(stream, "error", "an error the stats reader meets")
        stream.read_stream_stats()
        assert any("a warning the stats reader meets" in w for w in stream.warnings)
        raised = None
        try:
            while stream.next_batch() is not None:
                pass
        except gstwsi.PipelineError as exc:
            raised = exc
        assert raised is not None and "an error the stats reader meets" in str(raised)
    finally:
        stream.close()
