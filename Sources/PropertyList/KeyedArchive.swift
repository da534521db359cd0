/// An `NSKeyedArchiver` archive (`$archiver`, `$version`, `$top`, `$objects`), read without
/// Foundation.
///
/// Values of the Foundation classes `NSArray`, `NSSet`, `NSOrderedSet`, `NSDictionary`,
/// `NSString`, `NSData`, `NSDate`, `NSNumber` and `NSNull` (and their mutable forms) decode to
/// plain ``KeyedArchiveValue``s. An object of any other class surfaces as a
/// ``KeyedArchiveObject``: its class name, its class hierarchy and its keys, decoded only when
/// asked for, so callers can decode `NSManagedObjectModel`, `NSEntityDescription` and the like
/// themselves, and cyclic object graphs are walked one step at a time.
///
/// ```swift
/// let archive = try KeyedArchive(bytes: inflatedModelCache)
/// let model = try archive.rootObject()           // NSManagedObjectModel
/// let entities = try model.value(forKey: "NSEntities")
/// ```
public struct KeyedArchive: Sendable {
  /// The archiver's name (`NSKeyedArchiver`).
  public let archiver: String
  /// The archive's `$version` (100000 for every archive Foundation writes).
  public let version: Int64
  let objects: [PropertyListValue]
  let top: [String: PropertyListValue]

  /// How deeply Foundation collections may nest while being decoded.
  public static let maximumDepth = 256

  /// What one decode may build: ``BinaryPropertyListReader/decodedSizeFactor`` times the size
  /// of `$objects` (each value 16 bytes, strings and data their bytes too), and
  /// ``BinaryPropertyListReader/decodedSizeAllowance`` more. A collection that holds the same
  /// object many times, or nests shared collections, costs each time it is met, so a small
  /// archive cannot decode to a large tree.
  let decodedSizeBudget: Int

  /// What a decode has taken so far, checked against ``decodedSizeBudget``.
  final class Spending {
    let budget: Int
    var spent = 0

    init(_ budget: Int) { self.budget = budget }

    func charge(_ amount: Int, _ path: String) throws(PropertyListError) {
      spent &+= amount
      guard spent <= budget else {
        throw PropertyListError(
          .invalidKeyedArchive,
          "decoding would take more than \(budget) bytes, \(BinaryPropertyListReader.decodedSizeFactor) times the archive's objects (it holds objects many times over)",
          location: path)
      }
    }
  }

  /// The size `$objects` counts as, for the decode budget.
  private static func size(of value: PropertyListValue) -> Int {
    let own = BinaryPropertyListReader.decodedCost(of: value)
    switch value {
    case .array(let elements): return elements.reduce(own) { $0 + size(of: $1) }
    case .dictionary(let entries):
      return entries.reduce(own) { $0 + 16 + $1.key.utf8.count + size(of: $1.value) }
    default: return own
    }
  }

  /// Reads an archive from its property-list form.
  /// - Throws: ``PropertyListError`` of kind ``PropertyListError/Kind/invalidKeyedArchive``
  ///   when `$top` or `$objects` is missing or malformed.
  public init(_ plist: PropertyListValue) throws(PropertyListError) {
    guard case .dictionary(let root) = plist else {
      throw PropertyListError(
        .invalidKeyedArchive, "a keyed archive is a dictionary, found \(plist.kindName)")
    }
    guard case .array(let objects)? = root["$objects"] else {
      throw PropertyListError(.invalidKeyedArchive, "keyed archive has no $objects array")
    }
    guard case .dictionary(let top)? = root["$top"] else {
      throw PropertyListError(.invalidKeyedArchive, "keyed archive has no $top dictionary")
    }
    self.archiver = root["$archiver"]?.stringValue ?? ""
    self.version = root["$version"]?.integerValue ?? 0
    self.objects = objects
    self.top = top
    self.decodedSizeBudget =
      objects.reduce(0) { $0 + Self.size(of: $1) } * BinaryPropertyListReader.decodedSizeFactor
      + BinaryPropertyListReader.decodedSizeAllowance
  }

  /// Reads an archive from property-list bytes (binary or XML).
  public init(bytes: [UInt8]) throws(PropertyListError) {
    try self.init(PropertyListValue(propertyList: bytes))
  }

  /// The keys of `$top` (`root` for most archives).
  public var topKeys: [String] { top.keys.sorted() }

  /// The number of entries in `$objects`.
  public var objectCount: Int { objects.count }

  /// The value `$top` holds under `key`.
  /// - Throws: ``PropertyListError`` when the key is absent or its value cannot be decoded.
  public func topValue(forKey key: String = "root") throws(PropertyListError) -> KeyedArchiveValue {
    guard let reference = top[key] else {
      throw PropertyListError(
        .invalidKeyedArchive, "$top has no key \(key) (keys: \(topKeys.joined(separator: ", ")))")
    }
    return try decode(
      reference, depth: 0, inProgress: [], path: "$top.\(key)",
      spending: Spending(decodedSizeBudget))
  }

  /// The top object under `key`, which must be an object of a non-Foundation class.
  public func rootObject(forKey key: String = "root") throws(PropertyListError)
    -> KeyedArchiveObject
  {
    let value = try topValue(forKey: key)
    guard case .object(let object) = value else {
      throw PropertyListError(
        .invalidKeyedArchive, "$top.\(key) is \(value.kindName), not an object")
    }
    return object
  }

  /// The value stored at `$objects[uid]`.
  public func value(forUID uid: UInt64) throws(PropertyListError) -> KeyedArchiveValue {
    try decode(
      .uid(uid), depth: 0, inProgress: [], path: "$objects[\(uid)]",
      spending: Spending(decodedSizeBudget))
  }

  // MARK: Decoding

  func decode(
    _ raw: PropertyListValue, depth: Int, inProgress: Set<UInt64>, path: String,
    spending: Spending
  ) throws(PropertyListError) -> KeyedArchiveValue {
    try spending.charge(BinaryPropertyListReader.decodedCost(of: raw), path)
    switch raw {
    case .uid(let uid):
      return try resolve(uid, depth: depth, inProgress: inProgress, path: path, spending: spending)
    case .null: return .null
    case .bool(let v): return .bool(v)
    case .integer(let v): return .integer(v)
    case .real(let v): return .real(v)
    case .date(let v): return .date(v)
    case .data(let v): return .data(v)
    case .string(let v): return .string(v)
    case .array(let elements):
      guard depth < Self.maximumDepth else { throw tooDeep(path) }
      var result: [KeyedArchiveValue] = []
      result.reserveCapacity(elements.count)
      for (i, element) in elements.enumerated() {
        result.append(
          try decode(
            element, depth: depth + 1, inProgress: inProgress, path: "\(path)[\(i)]",
            spending: spending))
      }
      return .array(result)
    case .dictionary(let entries):
      guard depth < Self.maximumDepth else { throw tooDeep(path) }
      var result: [(key: KeyedArchiveValue, value: KeyedArchiveValue)] = []
      for key in entries.keys.sorted() {
        result.append(
          (
            .string(key),
            try decode(
              entries[key]!, depth: depth + 1, inProgress: inProgress, path: "\(path).\(key)",
              spending: spending)
          ))
      }
      return .dictionary(result)
    }
  }

  private func tooDeep(_ path: String) -> PropertyListError {
    PropertyListError(
      .nestingTooDeep(limit: Self.maximumDepth),
      "collections nest deeper than \(Self.maximumDepth) levels",
      location: path)
  }

  private func entry(_ uid: UInt64, path: String) throws(PropertyListError) -> PropertyListValue {
    guard uid < UInt64(objects.count) else {
      throw PropertyListError(
        .invalidKeyedArchive, "UID \(uid) is outside $objects (\(objects.count) entries)",
        location: path)
    }
    return objects[Int(uid)]
  }

  private func resolve(
    _ uid: UInt64, depth: Int, inProgress: Set<UInt64>, path: String, spending: Spending
  ) throws(PropertyListError) -> KeyedArchiveValue {
    let raw = try entry(uid, path: path)
    guard case .dictionary(let fields) = raw else {
      if uid == 0, raw == .string("$null") { return .null }
      // Strings, numbers and data are stored inline in $objects.
      return try decode(
        raw, depth: depth, inProgress: inProgress, path: path, spending: spending)
    }
    guard case .uid(let classUID)? = fields["$class"] else {
      return try decode(
        raw, depth: depth, inProgress: inProgress, path: path, spending: spending)
    }
    let (className, hierarchy) = try classInfo(classUID, path: path)
    let object = KeyedArchiveObject(
      uid: uid, className: className, classHierarchy: hierarchy, fields: fields, archive: self)
    guard
      let foundation = FoundationClass(className: className, hierarchy: hierarchy, fields: fields)
    else { return .object(object) }

    guard depth < Self.maximumDepth else { throw tooDeep(path) }
    var inProgress = inProgress
    guard inProgress.insert(uid).inserted else {
      throw PropertyListError(
        .referenceCycle, "\(className) at UID \(uid) contains itself", location: path)
    }
    func members(_ key: String) throws(PropertyListError) -> [KeyedArchiveValue] {
      guard case .array(let references)? = fields[key] else {
        throw PropertyListError(
          .invalidKeyedArchive, "\(className) has no \(key) array", location: path)
      }
      var result: [KeyedArchiveValue] = []
      result.reserveCapacity(references.count)
      for (i, reference) in references.enumerated() {
        result.append(
          try decode(
            reference, depth: depth + 1, inProgress: inProgress, path: "\(path).\(key)[\(i)]",
            spending: spending))
      }
      return result
    }
    switch foundation {
    case .array: return .array(try members("NS.objects"))
    case .set: return .set(try members("NS.objects"))
    case .dictionary:
      let keys = try members("NS.keys")
      let values = try members("NS.objects")
      guard keys.count == values.count else {
        throw PropertyListError(
          .invalidKeyedArchive, "\(className) has \(keys.count) keys but \(values.count) values",
          location: path)
      }
      return .dictionary(Array(zip(keys, values).map { (key: $0.0, value: $0.1) }))
    case .string:
      if case .string(let text)? = fields["NS.string"] { return .string(text) }
      if case .data(let bytes)? = fields["NS.bytes"],
        let text = String(validating: bytes, as: UTF8.self)
      {
        return .string(text)
      }
      throw PropertyListError(.invalidKeyedArchive, "\(className) has no NS.string", location: path)
    case .data:
      if case .data(let bytes)? = fields["NS.data"] ?? fields["NS.bytes"] { return .data(bytes) }
      throw PropertyListError(.invalidKeyedArchive, "\(className) has no NS.data", location: path)
    case .date:
      guard let seconds = fields["NS.time"]?.doubleValue else {
        throw PropertyListError(.invalidKeyedArchive, "\(className) has no NS.time", location: path)
      }
      return .date(PropertyListDate(secondsSinceReferenceDate: seconds))
    case .null:
      return .null
    }
  }

  func classInfo(_ uid: UInt64, path: String) throws(PropertyListError) -> (String, [String]) {
    guard case .dictionary(let info) = try entry(uid, path: path),
      case .string(let name)? = info["$classname"]
    else {
      throw PropertyListError(
        .invalidKeyedArchive, "$class UID \(uid) does not name a class ($classname missing)",
        location: path)
    }
    var hierarchy: [String] = []
    if case .array(let classes)? = info["$classes"] {
      hierarchy = classes.compactMap(\.stringValue)
    }
    return (name, hierarchy.isEmpty ? [name] : hierarchy)
  }
}

/// The Foundation classes decoded to plain values, recognised by name or by a Foundation
/// ancestor together with the keys that class archives.
private enum FoundationClass {
  case array, set, dictionary, string, data, date, null

  init?(className: String, hierarchy: [String], fields: [String: PropertyListValue]) {
    func has(_ keys: String...) -> Bool { keys.allSatisfy { fields[$0] != nil } }
    let names = [className] + hierarchy
    if names.contains("NSNull") {
      self = .null
    } else if (names.contains("NSArray") || names.contains("NSOrderedSet")) && has("NS.objects") {
      self = .array
    } else if names.contains("NSSet") && has("NS.objects") {
      self = .set
    } else if names.contains("NSDictionary") && has("NS.keys", "NS.objects") {
      self = .dictionary
    } else if names.contains("NSString") && (has("NS.string") || has("NS.bytes")) {
      self = .string
    } else if names.contains("NSData") && (has("NS.data") || has("NS.bytes")) {
      self = .data
    } else if names.contains("NSDate") && has("NS.time") {
      self = .date
    } else {
      return nil
    }
  }
}
