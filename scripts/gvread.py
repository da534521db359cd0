#!/usr/bin/env python3
"""gvread: read graphvault archives (.gvault) without graphvault.

Written from docs/FORMAT.md alone, as the recovery path of last resort and the format's
executable check. Python 3.8+ and its standard library; the `zstd` command for zstd-compressed
archives; the `cryptography` package (AES-GCM) for encrypted ones.

An incremental archive (format 3, 4 or 5) is read with its chain of parents, found by name in
its folder, as one archive of its point in time.

    gvread.py list ARCHIVE [--password-file FILE]      members, sizes, counts
    gvread.py verify ARCHIVE [--password-file FILE]    order, index, references, Z_MAX
    gvread.py dump ARCHIVE [--password-file FILE] [--output FILE]
                                                       every object as JSON, in export's shape

Exit status: 0 when all is well, 1 when the archive fails a check or cannot be read, 2 for a
usage error.
"""

import base64
import gzip
import hashlib
import hmac
import io
import json
import lzma
import math
import os
import struct
import subprocess
import sys
import tarfile
import tempfile

HEADER = "graphvault.plist"
DESCRIPTOR = "model/descriptor.plist"
INDEX = "index.plist"
CHANGES = "changes.plist"
SKETCHES = "sketches.plist"
STORE_MEMBERS = [HEADER, DESCRIPTOR, "store/metadata.plist", "store/schema.plist",
                 "store/primarykeys.plist", "store/modelcache.bin", CHANGES]


class Problem(Exception):
    """The archive is not what the format says."""


# --- Binary property lists ------------------------------------------------------------------

class UID(int):
    """A keyed-archive reference (plist type 0x8)."""


class Date(float):
    """A date: seconds since 2001-01-01T00:00:00Z, kept as the exact double."""


def read_bplist(data):
    """A binary property list's top object. Dates come back as Date (exact doubles)."""
    data = bytes(data)
    if not data.startswith(b"bplist00") or len(data) < 40:
        raise Problem("not a binary property list")
    offset_size, ref_size, count, top, table = struct.unpack(">6xBBQQQ", data[-32:])
    if not (1 <= offset_size <= 8 and 1 <= ref_size <= 8) or table + count * offset_size > len(data) - 32:
        raise Problem("a damaged binary property list trailer")
    offsets = [int.from_bytes(data[table + i * offset_size:table + (i + 1) * offset_size], "big")
               for i in range(count)]
    cache = {}

    def length(position, info):
        if info != 0xF:
            return info, position + 1
        marker = data[position + 1]
        if marker >> 4 != 1:
            raise Problem("a damaged length in a property list")
        size = 1 << (marker & 0xF)
        return int.from_bytes(data[position + 2:position + 2 + size], "big"), position + 2 + size

    def refs(position, n):
        return [int.from_bytes(data[position + i * ref_size:position + (i + 1) * ref_size], "big")
                for i in range(n)]

    def obj(ref, depth=0):
        if depth > 512 or ref >= count:
            raise Problem("a damaged reference in a property list")
        if ref in cache:
            return cache[ref]
        position = offsets[ref]
        marker = data[position]
        kind, info = marker >> 4, marker & 0xF
        if kind == 0x0:
            value = {0x0: None, 0x8: False, 0x9: True}.get(info)
        elif kind == 0x1:
            size = 1 << info
            value = int.from_bytes(data[position + 1:position + 1 + size], "big", signed=size >= 8)
            if size == 16:
                value = int.from_bytes(data[position + 9:position + 17], "big", signed=True)
        elif kind == 0x2:
            size = 1 << info
            value = struct.unpack(">f" if size == 4 else ">d", data[position + 1:position + 1 + size])[0]
        elif kind == 0x3:
            value = Date(struct.unpack(">d", data[position + 1:position + 9])[0])
        elif kind == 0x4:
            n, start = length(position, info)
            value = data[start:start + n]
        elif kind == 0x5:
            n, start = length(position, info)
            value = data[start:start + n].decode("ascii")
        elif kind == 0x6:
            n, start = length(position, info)
            value = data[start:start + 2 * n].decode("utf-16-be")
        elif kind == 0x8:
            value = UID(int.from_bytes(data[position + 1:position + 2 + info], "big"))
        elif kind == 0xA:
            n, start = length(position, info)
            value = [obj(r, depth + 1) for r in refs(start, n)]
        elif kind == 0xD:
            n, start = length(position, info)
            keys = refs(start, n)
            values = refs(start + n * ref_size, n)
            value = {obj(k, depth + 1): obj(v, depth + 1) for k, v in zip(keys, values)}
        else:
            raise Problem("an unknown property list object 0x%02x" % marker)
        cache[ref] = value
        return value

    return obj(top)


# --- Containers, compression, encryption -----------------------------------------------------

def decompress(data, compression):
    if compression == "none":
        return data
    if compression == "gzip":
        return gzip.decompress(data)
    if compression == "xz":
        return lzma.decompress(data)
    if compression == "zstd":
        result = subprocess.run(["zstd", "-dcq"], input=data, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        if result.returncode != 0:
            raise Problem("a member does not decompress: " + result.stderr.decode(errors="replace"))
        return result.stdout
    raise Problem("unknown compression %r" % compression)


def hkdf_sha256(key_material, info, length=32):
    prk = hmac.new(b"\0" * 32, key_material, hashlib.sha256).digest()
    output, block, counter = b"", b"", 1
    while len(output) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        output += block
        counter += 1
    return output[:length]


class Seal:
    """Opens the members of an encrypted archive (FORMAT.md, section 9)."""

    def __init__(self, clear, password):
        encryption = clear.get("encryption")
        if not isinstance(encryption, dict) or encryption.get("cipher") != "AES-256-GCM" \
                or encryption.get("kdf") != "scrypt":
            raise Problem("an encryption this reader does not know")
        salt, check = encryption.get("salt"), encryption.get("check")
        n, r, p = encryption.get("N"), encryption.get("r"), encryption.get("p")
        if not (isinstance(salt, bytes) and isinstance(check, bytes) and len(check) == 32
                and isinstance(n, int) and 1024 <= n <= 1 << 20 and n & (n - 1) == 0
                and isinstance(r, int) and 1 <= r <= 32 and isinstance(p, int) and 1 <= p <= 16
                and 128 * n * r * p <= 1 << 30):
            raise Problem("key-derivation parameters missing or out of bounds")
        self.compression = clear.get("compression")
        master = hashlib.scrypt(password, salt=salt, n=n, r=r, p=p, maxmem=256 * n * r * p + (1 << 20),
                                dklen=32)
        self.key = hkdf_sha256(master, b"graphvault member key")
        check_key = hkdf_sha256(master, b"graphvault password check")
        if not hmac.compare_digest(hmac.new(check_key, salt, hashlib.sha256).digest(), check):
            raise Problem("wrong password (or a changed header)")
        text = "graphvault seal 1|AES-256-GCM|scrypt|%d|%d|%d|%s|%s|%s" % (
            n, r, p, self.compression, salt.hex(), check.hex())
        self.context = hashlib.sha256(text.encode()).digest()
        try:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        except ImportError:
            raise Problem("an encrypted archive needs the cryptography package (pip install cryptography)")
        self.cipher = AESGCM(self.key)

    def open(self, sealed, path, position):
        nonce = b"\0\0\0\0" + struct.pack(">Q", position)
        try:
            plain = self.cipher.decrypt(nonce, bytes(sealed), self.context + path.encode())
        except Exception:
            raise Problem("%s: authentication failed (member %d)" % (path, position))
        return decompress(plain, self.compression)


def stream_compression(path):
    with open(path, "rb") as handle:
        head = handle.read(6)
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    return "none"


def members(path, password=None):
    """Every member as (path, content bytes), opened when the archive is encrypted."""
    compression = stream_compression(path)
    process = None
    if compression == "zstd":
        process = subprocess.Popen(["zstd", "-dcq", "--", path], stdout=subprocess.PIPE)
        archive = tarfile.open(fileobj=process.stdout, mode="r|")
    else:
        archive = tarfile.open(path, mode={"xz": "r|xz", "gzip": "r|gz", "none": "r|"}[compression])
    seal = None
    position = 0
    try:
        for entry in archive:
            if not entry.isfile():
                continue
            content = archive.extractfile(entry).read()
            if position == 0 and entry.name == HEADER:
                clear = read_bplist(content)
                if isinstance(clear, dict) and "encryption" in clear:
                    if password is None:
                        raise Problem("the archive is encrypted: give --password-file")
                    seal = Seal(clear, password)
                    content = seal.open(clear.get("header", b""), HEADER, 0)
            elif seal is not None:
                content = seal.open(content, entry.name, position)
            position += 1
            yield entry.name, content
    except tarfile.ReadError as error:
        raise Problem("the archive cannot be read: %s" % error)
    finally:
        archive.close()
        if process is not None:
            process.stdout.close()
            process.wait()


# --- Format 2 ------------------------------------------------------------------------------

def varints(data):
    value, shift = 0, 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
            if shift > 63:
                raise Problem("a varint longer than 64 bits")
            continue
        yield value
        value, shift = 0, 0
    if shift:
        raise Problem("a varint is cut")


def deltas(data):
    """Zigzag deltas: the running sum through the whole sequence, 64-bit wrapping."""
    previous = 0
    for u in varints(data):
        delta = (u >> 1) ^ -(u & 1)
        previous = (previous + delta + (1 << 63)) % (1 << 64) - (1 << 63)
        yield previous


def words_decoded(column):
    """A text column coded as numbered words (format 4): its values back to back."""
    raw, coded = column["words"], column.get("values", b"")
    words, at = [], 0
    while at < len(raw):
        size, shift = 0, 0
        while True:
            if at >= len(raw) or shift > 63:
                raise Problem("a word's length is cut")
            byte = raw[at]
            at += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        if at + size > len(raw):
            raise Problem("a word runs past its list of words")
        words.append(raw[at:at + size])
        at += size
    numbers = varints(coded)

    def word():
        number = next(numbers, None)
        if number is None or number >= len(words):
            raise Problem("a value's word number names no word")
        return words[number]
    out, limit = bytearray(), 16 * (len(raw) + len(coded))
    for size in varints(column.get("lengths", b"")):
        if len(out) + size > limit:
            raise Problem("a column's values would take more than 16 times its words")
        if size == 0:
            continue
        parts = [word()]
        length = len(parts[0])
        while length < size:
            parts.append(word())
            length += 1 + len(parts[-1])
        if length != size:
            raise Problem("a value's words run past its length")
        out += b" ".join(parts)
    if next(numbers, None) is not None:
        raise Problem("word numbers are left over")
    return bytes(out)


def column_values(column):
    kind, values = column.get("type"), column.get("values", b"")
    if kind == "integer":
        return list(deltas(values))
    if kind in ("real", "date"):
        if len(values) % 8:
            raise Problem("a column of doubles has a partial value")
        numbers = [struct.unpack(">d", values[i:i + 8])[0] for i in range(0, len(values), 8)]
        return [Date(n) for n in numbers] if kind == "date" else numbers
    if kind == "bool":
        return [bool(b) for b in values]
    if "words" in column:
        if kind != "string":
            raise Problem("a column of %s has words" % kind)
        values = words_decoded(column)
    if kind in ("string", "data"):
        out, at = [], 0
        for size in varints(column.get("lengths", b"")):
            chunk = values[at:at + size]
            if len(chunk) != size:
                raise Problem("a column's lengths run past its values")
            out.append(chunk.decode("utf-8") if kind == "string" else bytes(chunk))
            at += size
        if at != len(values):
            raise Problem("a column has values its lengths do not account for")
        return out
    if kind == "integers":
        flat = list(deltas(values))
        out, at = [], 0
        for size in varints(column.get("lengths", b"")):
            out.append(flat[at:at + size])
            at += size
        if at != len(flat):
            raise Problem("a list column has integers its lengths do not account for")
        return out
    raise Problem("unknown column type %r" % kind)


def records_of_chunk(chunk):
    """The records a chunk holds, in either format."""
    if isinstance(chunk, list):
        return chunk
    if not isinstance(chunk, dict):
        raise Problem("a chunk is neither an array of records nor a chunk of columns")
    entity, count = chunk.get("class"), chunk.get("count")
    keys, versions = list(deltas(chunk.get("pk", b""))), list(deltas(chunk.get("opt", b"")))
    if not isinstance(count, int) or len(keys) != count or len(versions) != count:
        raise Problem("a chunk's count, pk and opt disagree")
    records = [{"class": entity, "pk": keys[i], "opt": versions[i]} for i in range(count)]
    for column in chunk.get("columns", []):
        key, values = column.get("key"), column_values(column)
        present = column.get("present")
        holders = range(count) if present is None else \
            [i for i in range(count) if present[i >> 3] >> (i & 7) & 1]
        holders = list(holders)
        if len(holders) != len(values):
            raise Problem("column %s has %d values for %d objects" % (key, len(values), len(holders)))
        for i, value in zip(holders, values):
            if key.startswith("@columns/"):
                records[i].setdefault("@columns", {})[key[len("@columns/"):]] = value
            elif "." in key:
                # A composite's element by its key path: into the composite's dictionary.
                parts = key.split(".")
                holder = records[i]
                for part in parts[:-1]:
                    holder = holder.setdefault(part, {})
                    if not isinstance(holder, dict):
                        raise Problem("column %s goes into %s, which is not a composite" % (key, part))
                holder[parts[-1]] = value
            else:
                records[i][key] = value
    return records


# --- The model -----------------------------------------------------------------------------

class Model:
    def __init__(self, descriptor):
        self.descriptor = descriptor
        self.entities = {e["name"]: e for e in descriptor.get("entities", [])}

    def lineage(self, name):
        out, current = [], self.entities.get(name)
        while current is not None and len(out) <= len(self.entities):
            out.append(current)
            current = self.entities.get(current.get("parent"))
        return out

    def root(self, name):
        lineage = self.lineage(name)
        return lineage[-1]["name"] if lineage else name

    def attributes(self, name):
        return [a for e in reversed(self.lineage(name)) for a in e.get("attributes", [])]

    def relationships(self, name):
        return [r for e in reversed(self.lineage(name)) for r in e.get("relationships", [])]

    def relationship(self, entity, name):
        return next((r for r in self.relationships(entity) if r["name"] == name), None)

    def inverse(self, relationship):
        if not relationship.get("inverse"):
            return None
        return self.relationship(relationship["destination"], relationship["inverse"])

    def hierarchy(self, name):
        out = [name]
        for other in sorted(self.entities):
            if self.entities[other].get("parent") == name:
                out += self.hierarchy(other)
        return out

    def declaring(self, entity, relationship):
        return next((e["name"] for e in self.lineage(entity)
                     if any(r["name"] == relationship for r in e.get("relationships", []))), entity)

    def bucket(self, name):
        for entity in self.lineage(name):
            bucket = (entity.get("userInfo") or {}).get("graphvault.extendedAttributes")
            if bucket:
                return bucket
        return None

    def inverseless_to(self, name):
        """The (entity, relationship) pairs of to-many relationships without an inverse whose
        destination's hierarchy holds `name`, each under the entity that declares it."""
        root = self.root(name)
        return [(e["name"], r) for e in self.entities.values() for r in e.get("relationships", [])
                if self.to_many(r) and not r.get("inverse") and not r.get("transient")
                and self.root(r["destination"]) == root]

    @staticmethod
    def to_many(relationship):
        return relationship.get("maxCount", 1) != 1


# --- Values as export shows them (FORMAT.md, section 11) --------------------------------------

REFERENCE_UNIX = 978307200


def decimal_parts(value):
    """The whole part and the fraction's digits of a non-negative double's shortest spelling."""
    spelled = repr(value)
    mantissa, exponent = spelled, 0
    if "e" in spelled:
        mantissa, e = spelled.split("e")
        exponent = int(e)
    if "." in mantissa:
        integer_digits = mantissa.index(".")
    else:
        integer_digits = len(mantissa)
    digits = mantissa.replace(".", "")
    point = integer_digits + exponent
    if point <= 0:
        whole, fraction = "0", "0" * -point + digits
    elif point >= len(digits):
        whole, fraction = digits + "0" * (point - len(digits)), ""
    else:
        whole, fraction = digits[:point], digits[point:]
    return int(whole or "0"), fraction.rstrip("0")


def complement(digits):
    """1 - 0.digits as digits of the same length, trailing zeros dropped."""
    out, borrow = [], 0
    for index, char in enumerate(reversed(digits)):
        value = (10 if index == 0 else 9) - int(char) - borrow
        borrow = 0
        if value < 0:
            value += 10
            borrow = 1
        out.append(str(value))
    return "".join(reversed(out)).rstrip("0")


def civil(days):
    """(year, month, day) of a count of days since 1970-01-01 (proleptic Gregorian)."""
    days += 719468
    era = (days if days >= 0 else days - 146096) // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    year = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return year + (month <= 2), month, day


def exact_text(seconds):
    """UTC ISO 8601 with every fractional digit the double needs; None when it cannot be."""
    if not math.isfinite(seconds) or abs(seconds) >= 1e12:
        return None
    whole, digits = decimal_parts(abs(seconds))
    total = whole
    if seconds < 0:
        total = -whole
        if digits:
            total -= 1
            digits = complement(digits)
    unix = total + REFERENCE_UNIX
    days, second_of_day = divmod(unix, 86400)
    year, month, day = civil(days)
    if not 0 <= year <= 9999:
        return None
    text = "%04d-%02d-%02dT%02d:%02d:%02d" % (year, month, day, second_of_day // 3600,
                                              second_of_day % 3600 // 60, second_of_day % 60)
    return text + ("." + digits if digits else "") + "Z"


def plist_json(value):
    """A property-list value as JSON, tagged as export tags it."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, UID):
        return {"$uid": int(value)}
    if isinstance(value, Date):
        text = exact_text(float(value))
        return {"$date": text if text is not None else float(value)}
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$real": "nan" if math.isnan(value) else
                                                             ("inf" if value > 0 else "-inf")}
    if isinstance(value, bytes):
        return {"$data": base64.b64encode(value).decode()}
    if isinstance(value, list):
        return [plist_json(v) for v in value]
    if isinstance(value, dict):
        return {k: plist_json(value[k]) for k in sorted(value)}
    raise Problem("an unknown property-list value")


class Cycle(Exception):
    """A keyed archive whose object contains itself."""


def keyed_archive(data):
    """What an NSKeyedArchiver archive holds at $top.root, as export shows it (FORMAT.md,
    section 11); None when the bytes are not such an archive."""
    try:
        if bytes(data).startswith(b"bplist00"):
            plist = read_bplist(data)
        else:
            import plistlib
            plist = plistlib.loads(bytes(data))
    except Exception:
        return None
    if not isinstance(plist, dict) or not isinstance(plist.get("$objects"), list) \
            or not isinstance(plist.get("$top"), dict) or "root" not in plist["$top"]:
        return None
    objects = plist["$objects"]

    def decode(raw, depth, busy):
        if depth > 256:
            raise Cycle()
        if isinstance(raw, UID):
            return resolve(int(raw), depth, busy)
        if isinstance(raw, list):
            return ("array", [decode(e, depth + 1, busy) for e in raw])
        if isinstance(raw, dict):
            return ("dictionary", [(("string", k), decode(raw[k], depth + 1, busy)) for k in sorted(raw)])
        return plain(raw)

    def plain(raw):
        if raw is None:
            return ("null",)
        if isinstance(raw, bool):
            return ("bool", raw)
        if isinstance(raw, Date):
            return ("date", float(raw))
        if isinstance(raw, int):
            return ("integer", raw)
        if isinstance(raw, float):
            return ("real", raw)
        if isinstance(raw, bytes):
            return ("data", raw)
        return ("string", raw)

    def resolve(uid, depth, busy):
        if uid >= len(objects):
            raise Cycle()
        raw = objects[uid]
        if not isinstance(raw, dict):
            if uid == 0 and raw == "$null":
                return ("null",)
            return decode(raw, depth, busy)
        if not isinstance(raw.get("$class"), UID):
            return decode(raw, depth, busy)
        info = objects[int(raw["$class"])] if int(raw["$class"]) < len(objects) else None
        if not isinstance(info, dict) or not isinstance(info.get("$classname"), str):
            raise Cycle()
        name = info["$classname"]
        names = [name] + [c for c in info.get("$classes", []) if isinstance(c, str)]

        def has(*keys):
            return all(k in raw for k in keys)

        kind = None
        if "NSNull" in names:
            kind = "null"
        elif ("NSArray" in names or "NSOrderedSet" in names) and has("NS.objects"):
            kind = "array"
        elif "NSSet" in names and has("NS.objects"):
            kind = "set"
        elif "NSDictionary" in names and has("NS.keys", "NS.objects"):
            kind = "dictionary"
        elif "NSString" in names and (has("NS.string") or has("NS.bytes")):
            kind = "string"
        elif "NSData" in names and (has("NS.data") or has("NS.bytes")):
            kind = "data"
        elif "NSDate" in names and has("NS.time"):
            kind = "date"
        if kind is None:
            return ("object", name, uid, raw)
        if kind == "null":
            return ("null",)
        if uid in busy:
            raise Cycle()
        busy = busy | {uid}

        def members(key):
            if not isinstance(raw.get(key), list):
                raise Cycle()
            return [decode(r, depth + 1, busy) for r in raw[key]]

        if kind in ("array", "set"):
            return (kind, members("NS.objects"))
        if kind == "dictionary":
            keys, values = members("NS.keys"), members("NS.objects")
            if len(keys) != len(values):
                raise Cycle()
            return ("dictionary", list(zip(keys, values)))
        if kind == "string":
            if isinstance(raw.get("NS.string"), str):
                return ("string", raw["NS.string"])
            if isinstance(raw.get("NS.bytes"), bytes):
                return ("string", raw["NS.bytes"].decode("utf-8"))
            raise Cycle()
        if kind == "data":
            value = raw.get("NS.data", raw.get("NS.bytes"))
            if not isinstance(value, bytes):
                raise Cycle()
            return ("data", value)
        time = raw.get("NS.time")
        if not isinstance(time, (int, float)) or isinstance(time, bool):
            raise Cycle()
        return ("date", float(time))

    def render(value, depth):
        kind = value[0]
        if kind == "null":
            return None
        if kind in ("bool", "integer", "string"):
            return value[1]
        if kind == "real":
            return plist_json(value[1])
        if kind == "data":
            return {"$data": base64.b64encode(value[1]).decode()}
        if kind == "date":
            return plist_json(Date(value[1]))
        if kind == "array":
            return [render(v, depth) for v in value[1]]
        if kind == "set":
            return {"$set": [render(v, depth) for v in value[1]]}
        if kind == "dictionary":
            entries = value[1]
            if all(k[0] == "string" and not k[1].startswith("$") for k, _ in entries):
                return {k[1]: render(v, depth) for k, v in entries}
            return {"$dictionary": [[render(k, depth), render(v, depth)] for k, v in entries]}
        _, name, uid, raw = value
        shown = {"$object": name}
        if depth < 8:
            fields = {}
            for key in sorted(k for k in raw if k != "$class"):
                try:
                    fields[key] = render(decode(raw[key], 0, frozenset()), depth + 1)
                except (Cycle, RecursionError, UnicodeDecodeError):
                    continue
            shown["$fields"] = fields
        return shown

    try:
        return render(decode(plist["$top"]["root"], 0, frozenset()), 0)
    except (Cycle, RecursionError, UnicodeDecodeError):
        return None


def decimal_text(text):
    """A decimal as a restore stores it (a double) and reads it back."""
    try:
        number = float(text)
    except ValueError:
        return text
    if not math.isfinite(number):
        return text
    if number == math.floor(number) and abs(number) < 1e15:
        return str(int(number))
    return repr(number)


def composite_json(value, attribute):
    """A composite's dictionary as export shows it: each element by name, nested ones again."""
    if not isinstance(value, dict):
        raise Problem("composite %s holds %r, not a dictionary" % (attribute["name"], value))
    elements = {e["name"]: e for e in attribute.get("elements", [])}
    out = {}
    for name in sorted(value):
        element = elements.get(name)
        if element is None:
            raise Problem("composite %s has no element %s" % (attribute["name"], name))
        out[name] = composite_json(value[name], element) if element["type"] == "Composite" \
            else attribute_json(value[name], element["type"])
    return out


def _no_constant(name):
    raise ValueError("not JSON: " + name)


def compact_json(value):
    """JSON text as FORMAT.md's compact spelling: no spaces, members in their order, reals in
    their shortest spelling with a fraction or an exponent, control characters escaped."""
    if isinstance(value, float):
        text = repr(value)
        return text if any(c in text for c in ".eE") else text + ".0"
    if isinstance(value, list):
        return "[" + ",".join(compact_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + compact_json(v)
                              for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)


def held_json(value):
    """The array or object a binary value holds as JSON text written compactly, byte for byte
    (a Codable collection SwiftData keeps); None otherwise."""
    if not value or value[:1] not in (b"[", b"{"):
        return None
    try:
        parsed = json.loads(value.decode("utf-8"), parse_constant=_no_constant,
                            parse_int=_int64, object_pairs_hook=_unique_members)
    except (ValueError, UnicodeDecodeError):
        return None
    return parsed if compact_json(parsed).encode("utf-8") == value else None


def _int64(text):
    number = int(text)
    if not -2 ** 63 <= number < 2 ** 63:
        raise ValueError("an integer beyond 64 bits")
    return number


def _unique_members(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key given twice")
    return dict(pairs)


def attribute_json(value, kind):
    if kind in ("Integer 16", "Integer 32", "Integer 64"):
        return value
    if kind in ("Double", "Float"):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if kind == "Decimal":
        return decimal_text(value)
    if kind in ("String", "URI"):
        return value
    if kind == "Boolean":
        return bool(value)
    if kind == "Date":
        text = exact_text(float(value))
        return text if text is not None else float(value)
    if kind == "UUID":
        digits = value.hex().upper()
        if len(value) != 16:
            return digits
        return "-".join([digits[0:8], digits[8:12], digits[12:16], digits[16:20], digits[20:32]])
    held = held_json(value)
    if held is not None and kind in ("Binary", "Transformable"):
        return {"json": held}
    shown = {"base64": base64.b64encode(value).decode()}
    if kind == "Transformable":
        # The bytes always; what a keyed archive holds beside them, for people to read.
        structure = keyed_archive(value)
        if structure is not None:
            shown["keyedArchive"] = structure
    return shown


# --- Reading a whole archive -----------------------------------------------------------------

class Archive:
    """One pass over an archive: its store members, its records (kept in temporary files per
    entity), the keys and references needed to check and to dump it."""

    def __init__(self, path, password=None, check_index=True):
        self.path, self.password, self.check_index = path, password, check_index
        self.header = self.model = self.index = None
        self.primary_keys = []
        self.seen = []
        self.counts, self.rows = {}, {}
        self.problems = []
        self.folder = tempfile.TemporaryDirectory(prefix="gvread-")
        self.files = {}
        self.keys = {}          # root -> set of primary keys
        self.entity_of = {}     # (root, pk) -> entity
        self.one_to_many = {}   # (entity, relationship) -> {target pk: [(order, pk)]}
        self.many_to_many = {}  # (destination-side relationship) -> {pk: [(order, owner pk)]}
        self.references = []    # (label, root, set of keys)

    def problem(self, text):
        self.problems.append(text)

    def read(self):
        """Reads the archive and, when it is incremental, its parents back to the full archive
        (FORMAT.md 12), newest first: a record or row a newer archive wrote or deleted is
        skipped in the older ones."""
        self.superseded = {}    # set name (objects/ROOT, tables/TABLE) -> keys of newer archives
        self.replaced = set()   # tables a newer archive holds whole
        self.chain = []
        path, expected = self.path, None
        while True:
            header, changes, digest = self.read_archive(path)
            self.chain.append(os.path.basename(path))
            if expected is not None and digest != expected:
                self.problem("%s is not the parent its child was written against" % path)
            parent = header.get("parent")
            if parent is None:
                if changes is not None and changes.get("kind") != "full":
                    self.problem("%s names no parent, but its ledger is incremental" % path)
                break
            if changes is None or changes.get("kind") != "incremental":
                raise Problem("%s names a parent but holds no incremental ledger" % path)
            for field in ("written", "deleted"):
                for name, data in changes.get(field, {}).items():
                    self.superseded.setdefault(name, set()).update(deltas(data))
            self.replaced.update(changes.get("replaced", []))
            name = parent.get("name", "")
            if "/" in name or name in self.chain or not name.endswith(".gvault"):
                raise Problem("%s names a parent it cannot have: %r" % (path, name))
            path, expected = os.path.join(os.path.dirname(path), name), parent.get("index")
            if not os.path.exists(path):
                raise Problem("the parent %s is missing" % path)
        for handle in self.files.values():
            handle.close()
        return self

    def read_archive(self, path):
        """Reads one archive into what the chain holds; returns its header, its ledger and the
        SHA-256 of its index."""
        order, names = [], set()
        self.seen, self.index = [], None
        counts, rows, changes, digest, header = {}, {}, None, None, None
        sketches = False
        # A newer archive's model and Z_PRIMARYKEY stand.
        newest = self.model is None
        for name, content in members(path, self.password):
            if name in names:
                self.problem("%s appears twice" % name)
            names.add(name)
            order.append(name)
            if self.index is not None:
                self.problem("%s follows index.plist" % name)
            if name == INDEX:
                self.index = read_bplist(content)
                digest = hashlib.sha256(content).hexdigest()
                continue
            self.seen.append((name, len(content), hashlib.sha256(content).hexdigest()))
            if len(order) == 1 and name != HEADER:
                raise Problem("the archive does not start with graphvault.plist")
            if name == HEADER:
                header = read_bplist(content)
                if header.get("format") not in (1, 2, 3, 4, 5):
                    raise Problem("archive format %r" % header.get("format"))
                if newest:
                    self.header = header
            elif name == DESCRIPTOR:
                model = Model(read_bplist(content))
                if newest:
                    self.model = model
            elif name == "store/primarykeys.plist":
                if newest:
                    self.primary_keys = read_bplist(content)
            elif name == CHANGES:
                changes = read_bplist(content)
            elif name in STORE_MEMBERS:
                continue
            elif name == SKETCHES:
                # A full archive of format 5 holds its sketches here, after every chunk; a
                # reader of objects needs none of them.
                if header.get("format", 0) < 5 or (changes or {}).get("kind") != "full" \
                        or "sets" in changes:
                    self.problem("%s is not a member of this archive" % name)
                elif not isinstance(read_bplist(content).get("sets"), dict):
                    self.problem("%s holds no sets of sketches" % name)
                sketches = True
            elif sketches and (name.startswith("objects/") or name.startswith("tables/")):
                self.problem("%s follows %s, which comes after every chunk" % (name, SKETCHES))
            elif name.startswith("objects/"):
                counts[name.split("/")[1]] = counts.get(name.split("/")[1], 0) + \
                    self.read_objects(name, read_bplist(content))
            elif name.startswith("tables/"):
                table = name.split("/")[1]
                chunk = read_bplist(content)
                rows[table] = rows.get(table, 0) + len(chunk)
                self.rows[table] = self.rows.get(table, 0) + self.kept_rows(table, chunk, changes)
            else:
                self.problem("%s is not a member of the format" % name)
        if self.index is None:
            raise Problem("the archive is incomplete: it has no index.plist")
        if header.get("format", 0) >= 5 and (changes or {}).get("kind") == "full" and not sketches:
            self.problem("the full archive of format 5 lacks %s" % SKETCHES)
        if self.check_index:
            listed = [(m.get("path"), m.get("size"), m.get("sha256")) for m in self.index.get("members", [])]
            if listed != self.seen:
                self.problem("the index does not list the members read, in order, with their sizes and SHA-256")
            for entity, count in self.index.get("objects", {}).items():
                if counts.get(entity, 0) != count:
                    self.problem("the index counts %d objects of %s; the archive holds %d"
                                 % (count, entity, counts.get(entity, 0)))
            for table, count in self.index.get("tables", {}).items():
                if rows.get(table, 0) != count:
                    self.problem("the index counts %d rows of %s" % (count, table))
        return header, changes, digest

    def kept_rows(self, table, chunk, changes):
        """How many rows of a chunk of `table` stand at the chain's point."""
        name = "tables/" + table
        if name in self.replaced:
            return 0    # a newer archive holds the table whole
        key = (changes or {}).get("tableKeys", {}).get(name)
        newer = self.superseded.get(name, set())
        return sum(1 for row in chunk if key is None or row.get(key) not in newer)

    def read_objects(self, name, chunk):
        entity = name.split("/")[1]
        model = self.model
        root = model.root(entity)
        newer = self.superseded.get("objects/" + root, set())
        every = records_of_chunk(chunk)
        # A newer archive that holds the hierarchy whole leaves nothing of it here.
        whole = "objects/" + root in self.replaced
        records = [r for r in every if not whole and r.get("pk") not in newer]
        handle = self.files.get(entity)
        if handle is None:
            handle = open(os.path.join(self.folder.name, entity + ".jsonl"), "w")
            self.files[entity] = handle
        keys = self.keys.setdefault(root, set())
        for record in records:
            if record.get("class") != entity:
                self.problem("%s holds an object of %s" % (name, record.get("class")))
            pk = record["pk"]
            if pk in keys:
                self.problem("%s p%d appears twice in the %s hierarchy" % (entity, pk, root))
            keys.add(pk)
            self.entity_of[(root, pk)] = entity
            for relationship in model.relationships(entity):
                rel = relationship["name"]
                if relationship.get("transient") or rel not in record:
                    continue
                if not Model.to_many(relationship):
                    target = record[rel]
                    self.reference(entity, rel, relationship["destination"], [target])
                    inverse = model.inverse(relationship)
                    if inverse is not None and Model.to_many(inverse):
                        declaring = model.declaring(relationship["destination"], inverse["name"])
                        column = "Z_FOK_" + relationship["name"].upper()
                        order = (record.get("@columns") or {}).get(column)
                        self.one_to_many.setdefault((declaring, inverse["name"]), {}) \
                            .setdefault(target, []).append((order, pk))
                else:
                    targets = record[rel]
                    orders = record.get(rel + "@order")
                    self.reference(entity, rel, relationship["destination"], targets)
                    inverse = model.inverse(relationship)
                    pairs = []
                    for position, target in enumerate(targets):
                        order = orders[position] if orders is not None and position < len(orders) else -1
                        pairs.append((order if order >= 0 else None, target))
                    record[rel] = pairs
                    record.pop(rel + "@order", None)
                    if inverse is not None:
                        declaring = model.declaring(relationship["destination"], inverse["name"])
                        side = self.many_to_many.setdefault((declaring, inverse["name"]), {})
                        for order, target in pairs:
                            side.setdefault(target, []).append((order, pk))
            # A to-many without an inverse is kept on the destination's rows (FORMAT.md 7).
            columns = record.get("@columns") or {}
            for owner, relationship in model.inverseless_to(entity):
                number = self.entity_numbers().get(owner)
                if number is None:
                    continue
                key = columns.get("Z%d%s" % (number, relationship["name"].upper()))
                if isinstance(key, int) and not isinstance(key, bool):
                    order = columns.get("Z_FOK_%d%s" % (number, relationship["name"].upper()))
                    self.one_to_many.setdefault((owner, relationship["name"]), {}) \
                        .setdefault(key, []).append((order, pk))
            handle.write(json.dumps(record, default=encode_bytes) + "\n")
        self.counts[entity] = self.counts.get(entity, 0) + len(records)
        return len(every)

    def entity_numbers(self):
        return {row.get("name"): row.get("ent") for row in self.primary_keys}

    def reference(self, entity, relationship, destination, keys):
        self.references.append(("%s.%s" % (entity, relationship), self.model.root(destination), keys))

    def verify(self):
        for label, root, keys in self.references:
            missing = [k for k in keys if k not in self.keys.get(root, set())]
            if missing:
                self.problem("%s points at %s p%d, which is not in the archive" % (label, root, missing[0]))
        numbers = {row.get("name"): row for row in self.primary_keys}
        for root, keys in self.keys.items():
            row = numbers.get(root)
            if keys and row is not None and row.get("max", 0) < max(keys):
                self.problem("Z_MAX of %s is %d, below its highest key p%d" % (root, row.get("max", 0), max(keys)))
        return self.problems

    # Dumping -------------------------------------------------------------------------------

    def records(self, entity):
        path = os.path.join(self.folder.name, entity + ".jsonl")
        if not os.path.exists(path):
            return
        with open(path) as handle:
            if len(self.chain) == 1:
                for line in handle:
                    yield json.loads(line, object_hook=decode_bytes)
                return
            # A chain's archives were read newest first: their records come by key.
            for record in sorted((json.loads(line, object_hook=decode_bytes) for line in handle),
                                 key=lambda record: record["pk"]):
                yield record

    def object_json(self, entity, record):
        model = self.model
        out = {"class": entity, "pk": record["pk"]}
        members = {}
        bucket = model.bucket(entity)
        for attribute in model.attributes(entity):
            name = attribute["name"]
            if attribute.get("transient") or attribute.get("derived") or name not in record:
                continue
            if name == bucket:
                values = read_bplist(record[name]) if record[name] else {}
                for key, value in values.items():
                    members["extended." + key] = plist_json(value)
                continue
            members[name] = composite_json(record[name], attribute) \
                if attribute["type"] == "Composite" else attribute_json(record[name], attribute["type"])
        root_of = model.root
        for relationship in model.relationships(entity):
            name = relationship["name"]
            if relationship.get("transient"):
                continue
            destination = relationship["destination"]
            if not Model.to_many(relationship):
                if name in record:
                    target = record[name]
                    cls = record.get(name + "@entity", destination)
                    members[name] = {"class": cls, "pk": target}
                continue
            inverse = model.inverse(relationship)
            declaring = model.declaring(entity, name)
            root = root_of(destination)
            if inverse is None or not Model.to_many(inverse):
                entries = self.one_to_many.get((declaring, name), {}).get(record["pk"], [])
                if relationship.get("ordered"):
                    entries = sorted(entries, key=lambda e: (0, e[0], e[1]) if isinstance(e[0], int)
                                     and not isinstance(e[0], bool) else (1, 0, e[1]))
                else:
                    entries = sorted(entries, key=lambda e: e[1])
                keys = [pk for _, pk in entries]
            else:
                if name in record:
                    entries = record[name]
                else:
                    entries = self.many_to_many.get((declaring, name), {}).get(record["pk"], [])
                    entries = [(order, pk) for order, pk in entries]
                if relationship.get("ordered"):
                    entries = sorted(entries, key=lambda e: (e[0] is None, e[0] or 0, e[1]))
                else:
                    entries = sorted(entries, key=lambda e: e[1])
                keys = [pk for _, pk in entries]
            members[name] = [{"class": self.entity_of.get((root, k), destination), "pk": k} for k in keys]
        for key in sorted(members):
            out[key] = members[key]
        return out

    def dump(self, output):
        output.write('{\n  "model": ')
        output.write(json.dumps(plist_json(self.model.descriptor), indent=2).replace("\n", "\n  "))
        output.write(',\n  "objects": [')
        first = True
        for entity in sorted(self.model.entities):
            if self.model.entities[entity].get("abstract"):
                continue
            for record in self.records(entity):
                output.write("\n    " if first else ",\n    ")
                output.write(json.dumps(self.object_json(entity, record)).replace("\n", "\n    "))
                first = False
        output.write("]\n}\n" if first else "\n  ]\n}\n")


def encode_bytes(value):
    if isinstance(value, bytes):
        return {"__bytes__": base64.b64encode(value).decode()}
    raise TypeError(type(value))


def decode_bytes(value):
    if set(value) == {"__bytes__"}:
        return base64.b64decode(value["__bytes__"])
    return value


# --- Commands ------------------------------------------------------------------------------

def password_from(path):
    if path is None:
        path = os.environ.get("GRAPHVAULT_PASSWORD_FILE") or None
    if path is None:
        return None
    with open(path, "rb") as handle:
        line = handle.read().split(b"\n", 1)[0]
    return line[:-1] if line.endswith(b"\r") else line


def main(arguments):
    usage = "usage: gvread.py list|verify|dump ARCHIVE [--password-file FILE] [--output FILE]"
    if len(arguments) < 2 or arguments[0] not in ("list", "verify", "dump"):
        print(usage, file=sys.stderr)
        return 2
    command, path, options = arguments[0], arguments[1], arguments[2:]
    values = dict(zip(options[::2], options[1::2]))
    if len(options) % 2 or set(values) - {"--password-file", "--output"}:
        print(usage, file=sys.stderr)
        return 2
    try:
        archive = Archive(path, password_from(values.get("--password-file"))).read()
        if command == "list":
            for name, size, digest in archive.seen:
                print("%10d  %s  %s" % (size, digest[:16], name))
            for entity in sorted(archive.counts):
                print("%s: %d objects" % (entity, archive.counts[entity]))
        problems = archive.verify()
        if command == "verify" or problems:
            for problem in problems:
                print("problem: " + problem, file=sys.stderr)
            if problems:
                return 1
            print("%s: OK, %d objects" % (path, sum(archive.counts.values())))
        if command == "dump":
            if "--output" in values:
                with open(values["--output"], "w") as output:
                    archive.dump(output)
            else:
                archive.dump(sys.stdout)
        return 0
    except (Problem, OSError, ValueError, KeyError, struct.error) as error:
        print("gvread: %s: %s" % (path, error), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
