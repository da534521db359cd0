import Foundation
import PropertyList

/// Core Data's default transformers, `NSKeyedUnarchiveFromData` and
/// `NSSecureUnarchiveFromData`: the store keeps an `NSKeyedArchiver` archive of the value.
///
/// Foundation values become Swift values: `NSString` a `String`, `NSNumber` a `Bool`, `Int` or
/// `Double`, `NSData` `Data`, `NSDate` `Date`, `NSURL` `URL`, `NSUUID` `UUID`, `NSArray` an
/// `[any Sendable]`, `NSDictionary` with string keys a `[String: any Sendable]`, `NSSet` of
/// strings a `Set<String>` (other sets an array), `NSNull` a ``KeyedArchiveValue/null``. An
/// object of another class (an app's `Color`) surfaces as a ``KeyedArchiveObject`` the caller
/// decodes; the secure transformer refuses it, as `NSSecureUnarchiveFromData` accepts only
/// Foundation's classes. The reverse takes the same values back.
public struct KeyedArchiveTransformer: AttributeValueTransformer {
  /// Whether only Foundation classes are accepted.
  public let secure: Bool

  /// A transformer; `secure` for `NSSecureUnarchiveFromData`.
  public init(secure: Bool) { self.secure = secure }

  /// None beyond Foundation's.
  public var valueClassNames: Set<String> { [] }

  /// The archived value.
  public func transformedValue(_ bytes: [UInt8]) throws -> any Sendable {
    let archive = try KeyedArchive(bytes: bytes)
    return try swiftValue(archive.topValue(forKey: "root"), depth: 0)
  }

  /// An archive of `value`.
  public func reverseTransformedValue(_ value: any Sendable) throws -> [UInt8] {
    var builder = KeyedArchiveBuilder()
    let root = try archived(value, into: &builder, depth: 0)
    return builder.archive(root: root)
  }

  private func swiftValue(_ value: KeyedArchiveValue, depth: Int) throws -> any Sendable {
    guard depth < KeyedArchive.maximumDepth else {
      throw PropertyListError(.invalidKeyedArchive, "the value nests too deeply")
    }
    switch value {
    case .null: return KeyedArchiveValue.null
    case .bool(let v): return v
    case .integer(let v): return Int(v)
    case .real(let v): return v
    case .string(let v): return v
    case .data(let v): return Data(v)
    case .date(let v): return Date(timeIntervalSinceReferenceDate: v.secondsSinceReferenceDate)
    case .array(let elements):
      return try elements.map { try swiftValue($0, depth: depth + 1) }
    case .set(let members):
      let strings = members.compactMap(\.stringValue)
      if strings.count == members.count { return Set(strings) }
      return try members.map { try swiftValue($0, depth: depth + 1) }
    case .dictionary(let entries):
      var result: [String: any Sendable] = [:]
      for (key, element) in entries {
        guard let name = key.stringValue else { return value }
        result[name] = try swiftValue(element, depth: depth + 1)
      }
      return result
    case .object(let object):
      if object.classHierarchy.contains("NSURL"),
        let relative = try object.string(forKey: "NS.relative"),
        let url = URL(string: relative)
      {
        return url
      }
      if object.classHierarchy.contains("NSUUID"),
        let bytes = try object.value(forKey: "NS.uuidbytes").dataValue, bytes.count == 16
      {
        return UUID(
          uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
          ))
      }
      guard !secure else {
        throw PropertyListError(
          .invalidKeyedArchive,
          "NSSecureUnarchiveFromData decodes only Foundation classes, not \(object.className); register a transformer of its own for it"
        )
      }
      return object
    }
  }

  private func archived(_ value: any Sendable, into builder: inout KeyedArchiveBuilder, depth: Int)
    throws -> KeyedArchiveBuilder.Value
  {
    guard depth < KeyedArchive.maximumDepth else {
      throw PropertyListError(.invalidKeyedArchive, "the value nests too deeply")
    }
    switch value {
    case let v as String: return .string(v)
    case let v as Bool: return .bool(v)
    case let v as Int: return .integer(Int64(v))
    case let v as Int64: return .integer(v)
    case let v as Int32: return .integer(Int64(v))
    case let v as Int16: return .integer(Int64(v))
    case let v as Double: return .real(v)
    case let v as Float: return .real(Double(v))
    case let v as Data: return .data([UInt8](v))
    case let v as [UInt8]: return .data(v)
    case let v as Date:
      return builder.date(
        PropertyListDate(secondsSinceReferenceDate: v.timeIntervalSinceReferenceDate))
    case let v as URL:
      let object = builder.makeObject(classes: ["NSURL", "NSObject"])
      builder.set(.value(.null), forKey: "NS.base", of: object)
      builder.set(.value(.string(v.absoluteString)), forKey: "NS.relative", of: object)
      return .object(object)
    case let v as UUID:
      let object = builder.makeObject(classes: ["NSUUID", "NSObject"])
      builder.set(
        .inline(.data(withUnsafeBytes(of: v.uuid) { [UInt8]($0) })), forKey: "NS.uuidbytes",
        of: object)
      return .object(object)
    case let v as Set<String>:
      return builder.set(v.sorted().map { .string($0) })
    case let v as [String: any Sendable]:
      var entries: [(key: KeyedArchiveBuilder.Value, value: KeyedArchiveBuilder.Value)] = []
      for key in v.keys.sorted() {
        entries.append((.string(key), try archived(v[key]!, into: &builder, depth: depth + 1)))
      }
      return builder.dictionary(entries)
    case let v as [any Sendable]:
      var elements: [KeyedArchiveBuilder.Value] = []
      for element in v { elements.append(try archived(element, into: &builder, depth: depth + 1)) }
      return builder.array(elements)
    case let v as KeyedArchiveValue:
      if case .null = v { return .object(builder.makeObject(classes: ["NSNull", "NSObject"])) }
      return try builder.value(v)
    case let v as KeyedArchiveObject:
      guard !secure || ValueClass.foundationClasses.contains(v.className) else {
        throw PropertyListError(
          .invalidKeyedArchive,
          "NSSecureUnarchiveFromData archives only Foundation classes, not \(v.className)")
      }
      return try builder.value(.object(v))
    default:
      throw PropertyListError(
        .invalidKeyedArchive,
        "a value of type \(type(of: value)) cannot be keyed-archived; register a transformer for it"
      )
    }
  }
}
