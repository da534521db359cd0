import JSON
import PropertyList

/// Property lists (the model descriptor an export carries) as JSON and back, exactly:
/// dictionaries as objects with sorted keys, and the plist types JSON lacks tagged
/// (`{"$data": base64}`, `{"$date": ISO 8601}`, `{"$uid": n}`, `{"$real": "NaN"}`).
enum PropertyListJSON {
  /// The JSON of a property-list value.
  static func json(_ value: PropertyListValue) -> JSONValue {
    switch value {
    case .null: return .null
    case .bool(let flag): return .bool(flag)
    case .integer(let number): return .integer(number)
    case .real(let number): return real(number)
    case .string(let text): return .string(text)
    case .data(let bytes): return data(bytes)
    case .date(let date): return self.date(date)
    case .uid(let uid): return .object([("$uid", .integer(Int64(bitPattern: uid)))])
    case .array(let elements): return .array(elements.map(json))
    case .dictionary(let entries):
      return .object(entries.sorted { $0.key < $1.key }.map { ($0.key, json($0.value)) })
    }
  }

  /// A real: a number, or `{"$real": "nan"}` for what JSON cannot spell.
  static func real(_ number: Double) -> JSONValue {
    number.isFinite ? .real(number) : .object([("$real", .string("\(number)"))])
  }

  /// Bytes: `{"$data": base64}`.
  static func data(_ bytes: [UInt8]) -> JSONValue {
    .object([("$data", .string(Base64.encode(bytes)))])
  }

  /// A date: `{"$date": exact ISO 8601}` (seconds since 2001 beyond four-digit years).
  static func date(_ date: PropertyListDate) -> JSONValue {
    .object([
      (
        "$date",
        ISO8601.exactText(date).map(JSONValue.string) ?? .real(date.secondsSinceReferenceDate)
      )
    ])
  }

  /// The value a tag (`$data`, `$date`, `$real`, `$uid`) stands for; nil when the tag is
  /// unknown or its content does not fit it.
  static func untagged(_ tag: String, _ inner: JSONValue) -> PropertyListValue? {
    switch tag {
    case "$data": return inner.stringValue.flatMap(Base64.decode).map(PropertyListValue.data)
    case "$date":
      if let seconds = inner.doubleValue {
        return .date(PropertyListDate(secondsSinceReferenceDate: seconds))
      }
      return inner.stringValue.flatMap(ISO8601.exactDate).map(PropertyListValue.date)
    case "$uid": return inner.integerValue.map { .uid(UInt64(bitPattern: $0)) }
    case "$real": return inner.stringValue.flatMap(Double.init).map(PropertyListValue.real)
    default: return nil
    }
  }

  /// The property-list value of JSON written by ``json(_:)``; nil when it is not such JSON.
  static func propertyList(_ value: JSONValue) -> PropertyListValue? {
    switch value {
    case .null: return .null
    case .bool(let flag): return .bool(flag)
    case .integer(let number): return .integer(number)
    case .real(let number): return .real(number)
    case .string(let text): return .string(text)
    case .array(let elements):
      var values: [PropertyListValue] = []
      for element in elements {
        guard let converted = propertyList(element) else { return nil }
        values.append(converted)
      }
      return .array(values)
    case .object(let members):
      if members.count == 1, let (tag, inner) = members.first, tag.hasPrefix("$") {
        return untagged(tag, inner)
      }
      var entries: [String: PropertyListValue] = [:]
      for (key, member) in members {
        guard let converted = propertyList(member) else { return nil }
        entries[key] = converted
      }
      return .dictionary(entries)
    }
  }
}
