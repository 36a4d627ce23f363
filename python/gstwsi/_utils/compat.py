"""The two places where the Python bindings of Debian 12 and Debian 13 differ
in behaviour with no common API, read the same way here and nowhere else.

- Caps structures (gst-python): up to 1.24 `Gst.Caps.get_structure(i)`
  returns the `Gst.Structure`; gst-python 1.26 returns a `StructureWrapper`
  that only hands the structure out as a context manager (it keeps track of
  the caps it borrows from) and has no `get_name`/`get_value` of its own.
  `caps_structure()` is that context manager on both.
- Enum values (PyGObject): up to 3.48 `ParamSpecEnum.enum_class` is the
  Python enum type, whose `__enum_values__` maps each int to its value;
  3.50 returns the C `GEnumClass` (n_values, minimum, maximum; its `values`
  array is not indexable from Python), and the Python type may not exist
  yet. `enum_values()` reads the values from whichever was handed out,
  through `GObject.enum_get_value()` on 3.50.

Features are detected (what the object offers), not versions. Cost: nothing
per call beyond the lookups (enum_values walks minimum..maximum once).
"""
import contextlib

from .gst import GObject

__all__ = ["caps_structure", "enum_values"]


@contextlib.contextmanager
def caps_structure(caps, index=0):
    """`with caps_structure(caps, 0) as s:` -- the caps' `Gst.Structure`
    number `index`, valid inside the block (read it, do not keep it)."""
    structure = caps.get_structure(index)
    if hasattr(structure, "__enter__"):      # gst-python 1.26: a StructureWrapper
        with structure as inner:
            yield inner
    else:
        yield structure


def enum_values(spec):
    """[(nick, name, number)] of the values an enum `GParamSpec` allows, in
    number order."""
    klass = spec.enum_class
    table = getattr(klass, "__enum_values__", None)
    if table is not None:                    # PyGObject <= 3.48: the Python type
        values = [(v.value_nick, v.value_name, int(v)) for v in table.values()]
        return sorted(values, key=lambda v: v[2])
    values = []                              # PyGObject 3.50: the GEnumClass
    for number in range(klass.minimum, klass.maximum + 1):
        value = GObject.enum_get_value(klass, number)
        if value is not None:
            values.append((value.value_nick, value.value_name, value.value))
            if len(values) == klass.n_values:
                break
    return values
