#!/usr/bin/env python3
"""Writes vectors.json: values and the bytes the reference implementation (Python `msgpack`,
`pip install msgpack`) packs them into. MessagePackVectorTests checks that MonoRail writes the same
bytes for the same values and reads them back to the same values.

Values are described in a tagged form both sides can rebuild exactly:
  {"nil": null} {"bool": b} {"int": "-5"} {"uint": "5"} {"double": "<64-bit hex>"}
  {"float": "<32-bit hex>"} {"str": s} {"bin": "<hex>"} {"array": [...]} {"map": [[k, v], ...]}
  {"timestamp": [seconds, nanoseconds]} {"ext": [type, "<hex>"]}
  {"repeat": [value, count]} (an array of count copies) and {"str_repeat": [s, count]},
  {"bin_repeat": ["<hex byte>", count]}, {"int_map": n} (keys 0..<n, values "v"),
  {"ext_repeat": [type, "<hex byte>", count]} for the large
  boundaries. Python's ExtType refuses negative types, so those are tested on the Swift side only.
Encodings longer than 1 KiB are stored as their length, first 16 bytes and FNV-1a 64 hash.
usage: make-vectors.py > vectors.json
"""
import json, struct, sys
import msgpack

def build(d):
    (tag, v), = d.items()
    if tag == "nil": return None
    if tag == "bool": return v
    if tag in ("int", "uint"): return int(v)
    if tag == "double": return struct.unpack(">d", bytes.fromhex(v))[0]
    if tag == "float": return struct.unpack(">f", bytes.fromhex(v))[0]
    if tag == "str": return v
    if tag == "bin": return bytes.fromhex(v)
    if tag == "array": return [build(x) for x in v]
    if tag == "map": return {build(k): build(x) for k, x in v}
    if tag == "timestamp": return msgpack.Timestamp(v[0], v[1])
    if tag == "ext": return msgpack.ExtType(v[0], bytes.fromhex(v[1]))
    if tag == "repeat": return [build(v[0]) for _ in range(v[1])]
    if tag == "str_repeat": return v[0] * v[1]
    if tag == "bin_repeat": return bytes.fromhex(v[0]) * v[1]
    if tag == "int_map": return {i: "v" for i in range(v)}
    if tag == "ext_repeat": return msgpack.ExtType(v[0], bytes.fromhex(v[1]) * v[2])
    raise ValueError(tag)

def integer(n): return {"int": str(n)} if n < 0 else {"uint": str(n)}
def double(x): return {"double": struct.pack(">d", x).hex()}
def single(x): return {"float": struct.pack(">f", x).hex()}

cases = []
def case(name, d, single_float=False):
    cases.append((name, d, single_float))

case("nil", {"nil": None})
case("false", {"bool": False})
case("true", {"bool": True})
for n in [0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1,
          -1, -32, -33, -128, -129, -32768, -32769, -2**31, -2**31 - 1, -2**63]:
    case(f"int {n}", integer(n))
for x in [0.0, -0.0, 1.5, -2.25, 1e300, 5e-324, float("inf"), float("-inf"), 0.1, 46.8]:
    case(f"double {x!r}", double(x))
for x in [0.0, 1.5, -2.25, 3.4028234663852886e38, float("inf")]:
    case(f"float {x!r}", single(x), single_float=True)
case("nan", double(float("nan")))
for n in [0, 1, 31, 32, 255, 256, 65535, 65536]:
    case(f"str of {n} bytes", {"str_repeat": ["a", n]})
case("str non-ASCII", {"str": "Zürich → 東京 🚄"})
case("str with NUL", {"str": "a\u0000b"})
for n in [0, 1, 255, 256, 65535, 65536]:
    case(f"bin of {n} bytes", {"bin_repeat": ["ff", n]})
for n in [0, 1, 15, 16, 65535, 65536]:
    case(f"array of {n}", {"repeat": [integer(7), n]})
for n in [0, 1, 15, 16, 65536]:
    case(f"map of {n}", {"int_map": n})
case("map with string keys in order", {"map": [[{"str": "company"}, {"str": "MonoRail Co."}],
                                               [{"str": "cars"}, integer(5)],
                                               [{"str": "speed"}, double(46.8)],
                                               [{"str": "tags"}, {"array": [{"str": "a"}, {"nil": None}]}]]})
case("nested", {"array": [{"map": [[{"str": "x"}, {"array": [{"array": []}, {"map": []}]}]]}]})
for sec, ns in [(0, 0), (1, 0), (2**32 - 1, 0), (2**32, 0), (1, 1), (2**34 - 1, 999999999),
                (2**34, 0), (-1, 0), (-1, 999999999), (-2**63, 0), (2**63 - 1, 999999999), (1763789275, 123456789)]:
    case(f"timestamp {sec}.{ns:09d}", {"timestamp": [sec, ns]})
for n in [0, 1, 2, 3, 4, 8, 16, 17, 255, 256, 65535, 65536]:
    case(f"ext 5 of {n} bytes", {"ext_repeat": [5, "ab", n]})
case("ext 127", {"ext": [127, "0102"]})

def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"

out = []
for name, d, single_float in cases:
    packed = msgpack.packb(build(d), use_bin_type=True, use_single_float=single_float, datetime=False)
    entry = {"name": name, "value": d}
    if len(packed) <= 1024:
        entry["hex"] = packed.hex()
    else:
        entry["length"] = len(packed)
        entry["head"] = packed[:16].hex()
        entry["fnv1a64"] = fnv1a64(packed)
    # The reference must read its own bytes back to the same value.
    assert msgpack.unpackb(packed, raw=False, strict_map_key=False, timestamp=0) == build(d) or name == "nan"
    out.append(entry)
sys.stdout.write('{"generator": %s, "cases": [\n' % json.dumps(f"msgpack {msgpack.version}"))
sys.stdout.write(",\n".join(json.dumps(entry, ensure_ascii=False) for entry in out))
sys.stdout.write("\n]}\n")
