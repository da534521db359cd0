import JSON
import PropertyList

/// Transformable values in JSON: a keyed archive shown as the structure it holds, and kept
/// lossless either way.
///
/// A value is `{"keyedArchive": …}` when the structure written back as a keyed archive gives
/// the stored bytes again; `{"base64": "…", "keyedArchive": …}` when it decodes but is not
/// written back byte for byte (an archive by another writer, or one holding objects of other
/// classes: the structure is there to be read, the bytes are what is restored); `{"json": …}`
/// when it is JSON text written back byte for byte (``ObjectJSON/heldJSON(_:)``); `{"base64":
/// "…"}` otherwise. Foundation values map to JSON as they are; the rest is
/// tagged: `{"$data": base64}`, `{"$date": ISO 8601}`, `{"$set": […]}`, `{"$real": "NaN"}`,
/// `{"$dictionary": [[key, value], …]}` (keys that are not strings, or start with `$`),
/// `{"$object": class, "$fields": {…}}` (read only).
enum KeyedArchiveJSON {
  /// How deep objects of other classes are shown.
  static let objectDepth = 8

  /// The JSON of a transformable attribute's stored bytes.
  static func json(_ bytes: [UInt8]) -> JSONValue {
    let base64 = JSONValue.string(Base64.encode(bytes))
    guard let archive = try? KeyedArchive(bytes: bytes),
      let root = try? archive.topValue(forKey: "root")
    else {
      if let held = ObjectJSON.heldJSON(bytes) { return .object([("json", held)]) }
      return .object([("base64", base64)])
    }
    var rebuildable = true
    let shown = json(root, depth: 0, rebuildable: &rebuildable)
    if rebuildable, (try? archived(root)) == bytes {
      return .object([("keyedArchive", shown)])
    }
    return .object([("base64", base64), ("keyedArchive", shown)])
  }

  /// The stored bytes of a transformable attribute's JSON.
  /// - Throws: a message when the JSON is neither form.
  static func bytes(_ value: JSONValue) throws(ObjectJSON.Problem) -> [UInt8] {
    if let members = value.objectMembers, members.count == 1, let held = value["json"] {
      return try ObjectJSON.heldBytes(held)
    }
    guard let members = value.objectMembers,
      members.allSatisfy({ $0.key == "base64" || $0.key == "keyedArchive" }), !members.isEmpty
    else {
      throw ObjectJSON.Problem(
        "expected {\"base64\": …}, {\"keyedArchive\": …} or {\"json\": …}, found \(value.kindName)"
      )
    }
    if let text = value["base64"] {
      guard let encoded = text.stringValue, let bytes = Base64.decode(encoded) else {
        throw ObjectJSON.Problem("\"base64\" is not base64 text")
      }
      return bytes
    }
    do {
      return try archived(try decoded(value["keyedArchive"] ?? .null))
    } catch let problem as ObjectJSON.Problem {
      throw problem
    } catch {
      throw ObjectJSON.Problem("the keyed archive cannot be written: \(error)")
    }
  }

  /// `value` as `NSKeyedArchiver` writes a root object.
  static func archived(_ value: KeyedArchiveValue) throws -> [UInt8] {
    var builder = KeyedArchiveBuilder()
    let root = try builder.value(value)
    return builder.archive(root: root)
  }

  private static func json(_ value: KeyedArchiveValue, depth: Int, rebuildable: inout Bool)
    -> JSONValue
  {
    switch value {
    case .null: return .null
    case .bool(let flag): return .bool(flag)
    case .integer(let number): return .integer(number)
    case .real(let number): return PropertyListJSON.real(number)
    case .string(let text): return .string(text)
    case .data(let bytes): return PropertyListJSON.data(bytes)
    case .date(let date): return PropertyListJSON.date(date)
    case .array(let elements):
      return .array(elements.map { json($0, depth: depth, rebuildable: &rebuildable) })
    case .set(let members):
      return .object([
        ("$set", .array(members.map { json($0, depth: depth, rebuildable: &rebuildable) }))
      ])
    case .dictionary(let entries):
      let plain = entries.allSatisfy { $0.key.stringValue.map { !$0.hasPrefix("$") } ?? false }
      if plain {
        return .object(
          entries.map {
            ($0.key.stringValue!, json($0.value, depth: depth, rebuildable: &rebuildable))
          })
      }
      return .object([
        (
          "$dictionary",
          .array(
            entries.map {
              .array([
                json($0.key, depth: depth, rebuildable: &rebuildable),
                json($0.value, depth: depth, rebuildable: &rebuildable),
              ])
            })
        )
      ])
    case .object(let object):
      rebuildable = false
      var members: [(key: String, value: JSONValue)] = [("$object", .string(object.className))]
      if depth < objectDepth {
        var fields: [(key: String, value: JSONValue)] = []
        for key in object.keys {
          guard let field = try? object.value(forKey: key) else { continue }
          fields.append((key, json(field, depth: depth + 1, rebuildable: &rebuildable)))
        }
        members.append(("$fields", .object(fields)))
      }
      return .object(members)
    }
  }

  private static func decoded(_ value: JSONValue) throws(ObjectJSON.Problem) -> KeyedArchiveValue {
    switch value {
    case .null: return .null
    case .bool(let flag): return .bool(flag)
    case .integer(let number): return .integer(number)
    case .real(let number): return .real(number)
    case .string(let text): return .string(text)
    case .array(let elements):
      var values: [KeyedArchiveValue] = []
      for element in elements { values.append(try decoded(element)) }
      return .array(values)
    case .object(let members):
      if members.count == 1, let tag = members.first, tag.key.hasPrefix("$") {
        return try tagged(tag.key, tag.value)
      }
      if members.contains(where: { $0.key == "$object" }) {
        throw ObjectJSON.Problem(
          "an object of class \(value["$object"]?.stringValue ?? "?") cannot be written back; keep \"base64\""
        )
      }
      var entries: [(key: KeyedArchiveValue, value: KeyedArchiveValue)] = []
      for (key, element) in members { entries.append((.string(key), try decoded(element))) }
      return .dictionary(entries)
    }
  }

  private static func tagged(_ tag: String, _ value: JSONValue) throws(ObjectJSON.Problem)
    -> KeyedArchiveValue
  {
    switch tag {
    case "$data", "$date", "$real":
      switch PropertyListJSON.untagged(tag, value) {
      case .data(let bytes)?: return .data(bytes)
      case .date(let date)?: return .date(date)
      case .real(let number)?: return .real(number)
      default:
        throw ObjectJSON.Problem(
          "\"\(tag)\" holds \(value.kindName), not \(tag == "$data" ? "base64 text" : tag == "$date" ? "an ISO 8601 time" : "a number")"
        )
      }
    case "$set", "$dictionary":
      guard let elements = value.arrayValue else {
        throw ObjectJSON.Problem("\"\(tag)\" holds \(value.kindName), not an array")
      }
      if tag == "$set" {
        var members: [KeyedArchiveValue] = []
        for element in elements { members.append(try decoded(element)) }
        return .set(members)
      }
      var entries: [(key: KeyedArchiveValue, value: KeyedArchiveValue)] = []
      for element in elements {
        guard let pair = element.arrayValue, pair.count == 2 else {
          throw ObjectJSON.Problem("\"$dictionary\" entries are [key, value] pairs")
        }
        entries.append((try decoded(pair[0]), try decoded(pair[1])))
      }
      return .dictionary(entries)
    case "$object":
      throw ObjectJSON.Problem(
        "an object of class \(value.stringValue ?? "?") cannot be written back; keep \"base64\"")
    default:
      throw ObjectJSON.Problem("unknown tag \"\(tag)\" in a keyed archive")
    }
  }
}
