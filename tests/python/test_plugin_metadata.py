"""What gst-inspect-1.0 shows about gst-wsi's plugins and elements: one
Author spelling for every element, and the origin set at configure time
(meson's package-origin option), not a placeholder domain."""
import os

from gstwsi.stream import Gst


def our_plugins():
    dirs = [d for d in os.environ.get("GST_PLUGIN_PATH", "").split(os.pathsep) if d]
    return [p for p in Gst.Registry.get().get_plugin_list()
            if p.get_filename() and any(p.get_filename().startswith(d) for d in dirs)]


def test_one_author_and_a_real_origin():
    plugins = our_plugins()
    assert {p.get_name() for p in plugins} >= {"wsislide", "wsipatch"}
    authors = set()
    for plugin in plugins:
        assert "example.invalid" not in plugin.get_origin(), plugin.get_name()
        assert plugin.get_origin(), plugin.get_name()
        for feature in Gst.Registry.get().get_feature_list_by_plugin(plugin.get_name()):
            if isinstance(feature, Gst.ElementFactory):
                authors.add(feature.get_metadata("author"))
    assert authors == {"gst-wsi developers"}, authors
