"""Looking elements up in a parsed pipeline: its appsink, and every element
of a factory (bins' children included).  Read-only walks over the bin's
iterators; call them from the thread that owns the pipeline.
"""
from .gst import Gst

__all__ = ["elements_of", "find_appsink"]


def find_appsink(pipeline, name):
    """The appsink named `name`, or the only appsink when `name` is None
    (ValueError when there is none or several)."""
    if name is not None:
        sink = pipeline.get_by_name(name)
        if sink is None:
            raise ValueError(f"no element named '{name}' in the pipeline")
        return sink
    sinks = []
    it = pipeline.iterate_sinks()
    while True:
        res, elem = it.next()
        if res != Gst.IteratorResult.OK:
            break
        if elem.get_factory() and elem.get_factory().get_name() == "appsink":
            sinks.append(elem)
    if len(sinks) != 1:
        raise ValueError("the pipeline must have exactly one appsink "
                         f"(found {len(sinks)}); name it and pass sink=")
    return sinks[0]


def elements_of(pipeline, factory):
    """The elements of factory `factory` in `pipeline`, bins' children included."""
    found = []
    it = pipeline.iterate_recurse()
    while True:
        res, elem = it.next()
        if res != Gst.IteratorResult.OK:
            break
        f = elem.get_factory()
        if f is not None and f.get_name() == factory:
            found.append(elem)
    return found

