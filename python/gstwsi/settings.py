"""Settings validation: a pipeline description's name=value settings checked
against the elements' own ParamSpecs before GStreamer parses it.

GStreamer's parser hands every name=value to g_object_set_property, which
only *warns* when a value is out of the ParamSpec's range and leaves the
default in place.  So the description is read here first (a shell-like
tokenizer, `_settings`), and every value is checked against the element
class' ParamSpec (`check_setting`): the ranges and enum values are those of
the installed elements, never a copy of them.  An out-of-range or unknown
setting raises `SettingsError` naming the element, the property, the value
and what is allowed.  Cost: one ParamSpec listing per factory per process
(cached); numeric arrays are tried on a scratch element.  Needs GStreamer
initialised (gstwsi._utils.gst.init).
"""
import difflib
import re
import shlex
import warnings

from ._utils.compat import enum_values
from ._utils.gst import GLib, GObject, Gst, init
from .errors import SettingsError

__all__ = ["check_setting", "class_specs", "describe", "parse_strict",
           "validate_description"]


INT_TYPES = {GObject.TYPE_INT, GObject.TYPE_UINT, GObject.TYPE_LONG, GObject.TYPE_ULONG,
         GObject.TYPE_INT64, GObject.TYPE_UINT64, GObject.TYPE_CHAR, GObject.TYPE_UCHAR}
FLOAT_TYPES = {GObject.TYPE_FLOAT, GObject.TYPE_DOUBLE}
_TRUE = {"true", "yes", "t", "1"}
_FALSE = {"false", "no", "f", "0"}
_specs_cache = {}


def class_specs(factory_name):
    """{property name: GParamSpec} of an element factory, None if unknown."""
    if factory_name not in _specs_cache:
        specs = None
        factory = Gst.ElementFactory.find(factory_name)
        if factory is not None:
            loaded = factory.load()
            gtype = loaded.get_element_type() if loaded is not None else None
            if gtype is not None:
                specs = {spec.name: spec for spec in GObject.list_properties(gtype)}
        _specs_cache[factory_name] = specs
    return _specs_cache[factory_name]


def _tokens(description):
    """The description as shell-like tokens, '!' a token of its own."""
    lexer = shlex.shlex(description, posix=True, punctuation_chars="!")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError as exc:     # unbalanced quotes
        raise SettingsError(f"cannot read the pipeline description ({exc}): "
                            f"{description}") from None


def _settings(description):
    """(factory, property, value) for every name=value of a known element."""
    current = None
    for token in _tokens(description):
        if token == "!":
            current = None
            continue
        token = token.strip("()")
        if not token:
            continue
        if "=" not in token:
            # an element, or a reference ('name.'), caps, a bin: only
            # factories get their properties checked
            current = token if class_specs(token) is not None else None
            continue
        name, _, value = token.partition("=")
        if current is not None and name and "::" not in name:
            yield current, name.strip(), value.strip()


def describe(spec):
    """The values a ParamSpec allows, as text."""
    vtype = spec.value_type
    fundamental = vtype.fundamental
    if fundamental in INT_TYPES or fundamental in FLOAT_TYPES:
        return f"{spec.minimum}..{spec.maximum}"
    if fundamental == GObject.TYPE_BOOLEAN:
        return "true, false"
    if fundamental == GObject.TYPE_ENUM:
        return ", ".join(f"{nick} ({number})" for nick, _, number in enum_values(spec))
    return vtype.name


def _parse_int(text):
    if re.fullmatch(r"[+-]?0[0-7]+", text):       # strtoll base 0: octal
        return int(text, 8)
    try:
        return int(text, 0)
    except ValueError:
        return None


def check_setting(factory, name, value):
    """Raises SettingsError unless `value` (text, as written in a description)
    is a value property `name` of element `factory` accepts."""
    specs = class_specs(factory)
    spec = specs.get(name) or specs.get(name.replace("_", "-"))
    if spec is None:
        close = difflib.get_close_matches(name, list(specs), n=3)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise SettingsError(
            f"{factory}: no property '{name}'{hint}; '{name}={value}' cannot be set",
            factory, name, value, None)
    if not spec.flags & GObject.ParamFlags.WRITABLE:
        raise SettingsError(f"{factory}: {spec.name} is read-only (a statistic or "
                            f"status), '{name}={value}' cannot be set",
                            factory, spec.name, value, None)
    fundamental = spec.value_type.fundamental
    allowed = describe(spec)
    bad = None
    if fundamental in INT_TYPES:
        number = _parse_int(value)
        if number is None:
            bad = f"is not an integer (allowed: {allowed})"
        elif not spec.minimum <= number <= spec.maximum:
            bad = f"is out of range {allowed}" + _kept(spec)
    elif fundamental in FLOAT_TYPES:
        try:
            number = float(value)
        except ValueError:
            bad = f"is not a number (allowed: {allowed})"
        else:
            # written so that NaN fails it (the element refuses NaN too)
            if not spec.minimum <= number <= spec.maximum:
                bad = (f"is not a number (allowed: {allowed})" if number != number
                       else f"is out of range {allowed}" + _kept(spec))
    elif fundamental == GObject.TYPE_BOOLEAN:
        if value.lower() not in _TRUE | _FALSE:
            bad = f"is not a boolean (allowed: {allowed})"
    elif fundamental == GObject.TYPE_ENUM:
        number = _parse_int(value)
        if not any(value in (nick, name) or number == n
                   for nick, name, n in enum_values(spec)):
            bad = f"is not one of {allowed}"
    elif spec.value_type.name == "GstValueArray":
        bad = _array_refusal(factory, spec, value)
    if bad is not None:
        raise SettingsError(
            f"{factory}: {spec.name}={value} {bad}", factory, spec.name, value, allowed)


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)", re.I)


def _array_refusal(factory, spec, value):
    """Why the element refuses a numeric array value such as patchbatch
    mean="<0.5,0.5>" (GStreamer would warn and keep the old value), or
    None: the value is tried on a scratch element and read back."""
    element = Gst.ElementFactory.make(factory, None)
    if element is None:
        return None
    name = spec.name
    want = [float(x) for x in _NUMBER.findall(value.replace("(double)", "")
                                              .replace("(float)", ""))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Gst.util_set_object_arg(element, name, value)
    try:
        got = [float(x) for x in element.get_property(name)]
    except (TypeError, ValueError):
        return None                      # not numbers: left to the parser
    if len(got) == len(want) and all(abs(a - b) <= 1e-9 * max(1.0, abs(b))
                                     for a, b in zip(got, want)):
        return None
    reason = "; ".join(str(w.message) for w in caught)
    return (f"is refused by the element, which kept <{', '.join(f'{g:g}' for g in got)}>"
            + (f" ({reason})" if reason else "") + f"; {name}: {spec.blurb}")


def _kept(spec):
    return (f" ({spec.value_type.name} ParamSpec range; the element would refuse "
            f"to start; default {_default_text(spec)})")


def _default_text(spec):
    default = spec.default_value
    if spec.value_type.fundamental == GObject.TYPE_ENUM:
        return getattr(default, "value_nick", str(default))
    if spec.value_type.fundamental == GObject.TYPE_BOOLEAN:
        return str(bool(default)).lower()
    return str(default)


def validate_description(description):
    """Raises SettingsError when a description sets a property GStreamer would
    refuse or silently ignore: unknown, read-only, out of its ParamSpec's
    range, not one of an enum's values, not a boolean.  Elements whose factory
    is not installed are left to the parser.  Initialises GStreamer."""
    init()
    for factory, name, value in _settings(description):
        check_setting(factory, name, value)


_PARSE_SETTING = re.compile(r'could not set property "([^"]+)" in element "([^"]+)" '
                            r'to "(.*)"')


def parse_strict(description):
    """Gst.parse_launch with every error fatal and values checked first."""
    validate_description(description)
    try:
        return Gst.parse_launch_full(description, None, Gst.ParseFlags.FATAL_ERRORS)
    except GLib.Error as exc:
        message = exc.message
        match = _PARSE_SETTING.search(message)
        if match is not None:
            prop, element, value = match.groups()
            factory = next((f for f, n, _ in _settings(description) if n == prop), element)
            specs = class_specs(factory) or {}
            spec = specs.get(prop)
            allowed = describe(spec) if spec is not None else None
            raise SettingsError(
                f"{factory}: {prop}={value} is not a valid value"
                + (f" (allowed: {allowed})" if allowed else "") + f": {message}",
                factory, prop, value, allowed) from None
        raise SettingsError(f"invalid pipeline description ({message}): "
                            f"{description}") from None
