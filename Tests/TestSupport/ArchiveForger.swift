import Crypto
import Foundation
import LibArchive
import PropertyList

/// What anyone with write access to a backup folder can do to an archive that is not
/// encrypted, written from `graphvault(1)`'s description of the format and not from
/// graphvault's code: rewrite, drop, repeat or reorder members, then make the index agree
/// (every member's size and SHA-256 recomputed, in order).
public struct ArchiveForger {
  /// The members, in order, the index last.
  public var members: [(path: String, bytes: [UInt8])]

  /// The members of the plain archive at `path`.
  public init(reading path: String) throws {
    members = try TestSupport.members(of: path)
  }

  /// The index's name.
  public static let index = "index.plist"

  /// The bytes of member `path`.
  public func bytes(of path: String) -> [UInt8]? {
    members.first { $0.path == path }?.bytes
  }

  /// The paths of the members, in order.
  public var paths: [String] { members.map(\.path) }

  /// Replaces member `path`'s bytes.
  public mutating func replace(_ path: String, with bytes: [UInt8]) {
    guard let index = members.firstIndex(where: { $0.path == path }) else { return }
    members[index].bytes = bytes
  }

  /// Rewrites member `path`, a binary property list, through `edit`.
  public mutating func edit(_ path: String, _ edit: (inout PropertyListValue) throws -> Void)
    throws
  {
    guard let bytes = bytes(of: path) else { throw ForgeryError("no member \(path)") }
    var value = try PropertyListValue(binaryPropertyList: bytes)
    try edit(&value)
    replace(path, with: value.binaryPropertyList())
  }

  /// Rewrites the SQL of the archived schema's entry `name` (`store/schema.plist`) through
  /// `change`.
  public mutating func editSchemaSQL(of name: String, _ change: (String) -> String) throws {
    try edit("store/schema.plist") { value in
      var entries = value.arrayValue ?? []
      guard let position = entries.firstIndex(where: { $0["name"]?.stringValue == name }),
        var entry = entries[position].dictionaryValue, let sql = entry["sql"]?.stringValue
      else { throw ForgeryError("no schema entry \(name)") }
      entry["sql"] = .string(change(sql))
      entries[position] = .dictionary(entry)
      value = .array(entries)
    }
  }

  /// Adds an entry to the archived schema (`store/schema.plist`).
  public mutating func addSchemaEntry(type: String, name: String, table: String, sql: String)
    throws
  {
    try edit("store/schema.plist") { value in
      value = .array(
        (value.arrayValue ?? []) + [
          [
            "type": .string(type), "name": .string(name), "table": .string(table),
            "sql": .string(sql),
          ]
        ])
    }
  }

  /// Drops member `path`.
  public mutating func remove(_ path: String) {
    members.removeAll { $0.path == path }
  }

  /// Puts a copy of member `path` right after it.
  public mutating func duplicate(_ path: String) {
    guard let index = members.firstIndex(where: { $0.path == path }) else { return }
    members.insert(members[index], at: index + 1)
  }

  /// Swaps two members' places.
  public mutating func swap(_ first: String, _ second: String) {
    guard let a = members.firstIndex(where: { $0.path == first }),
      let b = members.firstIndex(where: { $0.path == second })
    else { return }
    members.swapAt(a, b)
  }

  /// Writes the archive to `path` (zstd-compressed tar), with an index that lists every member
  /// in order with its size and SHA-256, as the format says; the index's counts are kept.
  public func write(to path: String, fixingIndex: Bool = true) throws {
    var written = members
    if fixingIndex, let position = written.firstIndex(where: { $0.path == Self.index }) {
      var index =
        try PropertyListValue(binaryPropertyList: written[position].bytes)
        .dictionaryValue ?? [:]
      index["members"] = .array(
        written.filter { $0.path != Self.index }.map { member in
          [
            "path": .string(member.path), "size": .integer(Int64(member.bytes.count)),
            "sha256": .string(
              SHA256.hash(data: member.bytes).map { String(format: "%02x", $0) }.joined()),
          ]
        })
      written[position].bytes = PropertyListValue.dictionary(index).binaryPropertyList()
      // The index is last.
      written.append(written.remove(at: position))
    }
    let writer = try ArchiveWriter(path: path, filter: .zstd)
    for member in written { try writer.writeEntry(path: member.path, contents: member.bytes) }
    try writer.close()
  }

  // MARK: Format 2's integers

  /// The integers of a format-2 `integer` column's `values` (zigzag varints of differences).
  public static func integers(_ bytes: [UInt8]) -> [Int64] {
    var result: [Int64] = []
    var previous: Int64 = 0
    var value: UInt64 = 0
    var shift: UInt64 = 0
    for byte in bytes {
      value |= UInt64(byte & 0x7F) << shift
      if byte & 0x80 != 0 {
        shift += 7
        continue
      }
      let delta = Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
      previous = previous &+ delta
      result.append(previous)
      value = 0
      shift = 0
    }
    return result
  }

  /// `integers` as a format-2 `integer` column's `values`.
  public static func encode(_ integers: [Int64]) -> [UInt8] {
    var bytes: [UInt8] = []
    var previous: Int64 = 0
    for integer in integers {
      let delta = integer &- previous
      previous = integer
      var zigzag = UInt64(bitPattern: (delta << 1) ^ (delta >> 63))
      while zigzag >= 0x80 {
        bytes.append(UInt8(zigzag & 0x7F) | 0x80)
        zigzag >>= 7
      }
      bytes.append(UInt8(zigzag))
    }
    return bytes
  }

  /// Rewrites the integers of column `key` of a format-2 chunk (or the `pk` key list).
  public static func editIntegers(
    in chunk: inout PropertyListValue, key: String, _ edit: (inout [Int64]) -> Void
  ) throws {
    guard var fields = chunk.dictionaryValue else { throw ForgeryError("not a column chunk") }
    if key == "pk" || key == "opt" {
      guard case .data(let bytes)? = fields[key] else { throw ForgeryError("no \(key)") }
      var values = integers(bytes)
      edit(&values)
      fields[key] = .data(encode(values))
      chunk = .dictionary(fields)
      return
    }
    guard var columns = fields["columns"]?.arrayValue,
      let position = columns.firstIndex(where: { $0["key"]?.stringValue == key }),
      var column = columns[position].dictionaryValue, case .data(let bytes)? = column["values"]
    else { throw ForgeryError("no column \(key)") }
    var values = integers(bytes)
    edit(&values)
    column["values"] = .data(encode(values))
    columns[position] = .dictionary(column)
    fields["columns"] = .array(columns)
    chunk = .dictionary(fields)
  }
}

extension ArchiveForger {
  /// Rewrites the strings of a format-2 `string` column `key` (lengths as plain varints,
  /// values back to back in UTF-8).
  public static func editStrings(
    in chunk: inout PropertyListValue, key: String, _ edit: (inout [String]) -> Void
  ) throws {
    guard var fields = chunk.dictionaryValue, var columns = fields["columns"]?.arrayValue,
      let position = columns.firstIndex(where: {
        $0["key"]?.stringValue == key && $0["type"]?.stringValue == "string"
      }),
      var column = columns[position].dictionaryValue,
      case .data(let lengthBytes)? = column["lengths"], case .data(let bytes)? = column["values"]
    else { throw ForgeryError("no string column \(key)") }
    var lengths: [Int] = []
    var value = 0
    var shift = 0
    for byte in lengthBytes {
      value |= Int(byte & 0x7F) << shift
      if byte & 0x80 != 0 {
        shift += 7
      } else {
        lengths.append(value)
        value = 0
        shift = 0
      }
    }
    var strings: [String] = []
    var offset = 0
    for length in lengths {
      strings.append(String(decoding: bytes[offset..<(offset + length)], as: UTF8.self))
      offset += length
    }
    edit(&strings)
    var newLengths: [UInt8] = []
    for string in strings {
      var length = string.utf8.count
      while length >= 0x80 {
        newLengths.append(UInt8(length & 0x7F) | 0x80)
        length >>= 7
      }
      newLengths.append(UInt8(length))
    }
    column["lengths"] = .data(newLengths)
    column["values"] = .data(strings.flatMap { Array($0.utf8) })
    columns[position] = .dictionary(column)
    fields["columns"] = .array(columns)
    chunk = .dictionary(fields)
  }
}

/// A forgery that could not be made as asked.
public struct ForgeryError: Error, CustomStringConvertible {
  /// What could not be done.
  public let description: String
  init(_ description: String) { self.description = description }
}
