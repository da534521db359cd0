/// An object of a class the keyed-archive reader does not decode itself: its class, its keys,
/// and its values decoded on request.
public struct KeyedArchiveObject: Sendable {
  /// The object's UID (its index in `$objects`).
  public let uid: UInt64
  /// The object's class name (`$classname`).
  public let className: String
  /// The class and its ancestors, most specific first (`$classes`).
  public let classHierarchy: [String]
  let fields: [String: PropertyListValue]
  let archive: KeyedArchive

  /// The keys the object was encoded with, sorted (`$class` left out).
  public var keys: [String] { fields.keys.filter { $0 != "$class" }.sorted() }

  /// Whether the object was encoded with `key`.
  public func contains(_ key: String) -> Bool { fields[key] != nil }

  /// The value encoded under `key`, decoded (references followed one step: objects stay
  /// lazy); ``KeyedArchiveValue/null`` when the key is absent.
  /// - Throws: ``PropertyListError`` when the value is malformed.
  public func value(forKey key: String) throws(PropertyListError) -> KeyedArchiveValue {
    guard let raw = fields[key] else { return .null }
    return try archive.decode(
      raw, depth: 0, inProgress: [], path: "\(className)(UID \(uid)).\(key)",
      spending: KeyedArchive.Spending(archive.decodedSizeBudget))
  }

  /// The raw property-list value encoded under `key` (UIDs not followed).
  public func rawValue(forKey key: String) -> PropertyListValue? { fields[key] }

  /// The string under `key`, or `nil` when it is absent, null or not a string.
  public func string(forKey key: String) throws(PropertyListError) -> String? {
    try value(forKey: key).stringValue
  }

  /// The object under `key`, or `nil` when it is absent, null or not an object.
  public func object(forKey key: String) throws(PropertyListError) -> KeyedArchiveObject? {
    try value(forKey: key).objectValue
  }
}
