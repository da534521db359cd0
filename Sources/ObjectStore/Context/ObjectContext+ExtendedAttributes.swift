import ObjectModel
import PropertyList

/// The model's user-info keys that give an entity extended attributes: a "bucket", a binary
/// attribute holding a binary property list (a dictionary of extra keys), so that an app can add
/// attributes without a new model version.
///
/// ```swift
/// EntityDescription(name: "Book", userInfo: [ExtendedAttributes.bucketKey: "extendedData",
///                                            ExtendedAttributes.fallThroughKey: "YES"],
///                   attributes: [AttributeDescription(name: "extendedData", type: .binaryData), …])
/// ```
///
/// In an `.xcdatamodeld` the same two entries go in the entity's User Info. Sub-entities inherit
/// their parent's bucket.
public enum ExtendedAttributes {
  /// The entity user-info key naming the bucket attribute (a Binary Data attribute).
  public static let bucketKey = "graphvault.extendedAttributes"
  /// The entity user-info key that, set to `YES`, lets `value(for:)` and `setValue(_:for:)`
  /// reach the bucket for keys the entity does not have (Core Data's
  /// `valueForUndefinedKey:`); without it those stay errors.
  public static let fallThroughKey = "graphvault.extendedFallThrough"
  /// How key paths name extended attributes in predicates and in exported objects:
  /// `extended.color`.
  public static let keyPrefix = "extended."

  /// The name of the bucket attribute of `entity` in `model` (its own or its nearest
  /// ancestor's), or nil when it keeps no extended attributes.
  public static func bucket(of entity: String, in model: ObjectModel) -> String? {
    model.lineage(of: entity).lazy.compactMap { $0.userInfo[bucketKey] }.first
  }

  /// An extended attribute's value as a value of an attribute of `type`, when it is one (a
  /// string for a string, a number for any numeric type, …): what promoting a key to an
  /// attribute keeps.
  public static func attributeValue(_ value: PropertyListValue, as type: AttributeType)
    -> AttributeValue?
  {
    switch (type, value) {
    case (.integer16, .integer(let v)), (.integer32, .integer(let v)),
      (.integer64, .integer(let v)):
      return .integer(v)
    case (.double, .integer(let v)), (.float, .integer(let v)): return .double(Double(v))
    case (.double, .real(let v)), (.float, .real(let v)): return .double(v)
    case (.decimal, .integer(let v)): return .decimal(String(v))
    case (.decimal, .real(let v)): return .decimal("\(v)")
    case (.decimal, .string(let v)) where Double(v) != nil: return .decimal(v)
    case (.string, .string(let v)): return .string(v)
    case (.uri, .string(let v)): return .uri(v)
    case (.uuid, .string(let v)): return AttributeValue.uuidBytes(v).map(AttributeValue.uuid)
    case (.boolean, .bool(let v)): return .bool(v)
    case (.date, .date(let v)): return .date(v.secondsSinceReferenceDate)
    case (.binaryData, .data(let v)): return .data(v)
    default: return nil
    }
  }
}

extension ManagedObject {
  /// The extended attribute `key`: the unsaved change if there is one, else the stored
  /// bucket's value (decoded on first use and kept until the object's state is dropped).
  /// - Throws: ``StoreError`` when the entity has no bucket or the stored bucket is not a
  ///   property-list dictionary.
  public func value(forExtendedKey key: String) throws(StoreError) -> PropertyListValue? {
    if !extendedChanges.isEmpty, let change = extendedChanges[key] { return change }
    // The decoded bucket, once there, is read in place (the cached read's path), not copied
    // out of storedExtendedAttributes().
    if let snapshot = extendedSnapshot { return snapshot[key] }
    return try storedExtendedAttributes()[key]
  }

  /// Sets the extended attribute `key` (nil removes it); kept as an unsaved change, per key,
  /// until the context saves.
  /// - Throws: ``StoreError`` when the entity has no bucket or the object cannot change.
  public func setValue(_ value: PropertyListValue?, forExtendedKey key: String) throws(StoreError) {
    try context.setExtendedValue(value, for: key, of: self)
  }

  /// The bucket as stored, decoded once (the first read of an object's extended attributes:
  /// no call through the context unless it fails).
  func storedExtendedAttributes() throws(StoreError) -> ExtendedBucket {
    if let snapshot = extendedSnapshot { return snapshot }
    guard let bucket = traits.bucket else {
      throw context.fail(.invalidValue, "\(entity) keeps no extended attributes (no bucket)")
    }
    let snapshot = try decodedBucket(committed[bucket])
    extendedSnapshot = snapshot
    return snapshot
  }

  /// The bucket `value` holds (the empty one for none).
  func decodedBucket(_ value: AttributeValue?) throws(StoreError) -> ExtendedBucket {
    guard case .data(let bytes) = value, !bytes.isEmpty else { return .empty }
    let decoded: ExtendedBucket?
    do {
      decoded = try ExtendedBucket(decoding: bytes)
    } catch {
      throw context.fail(.invalidValue, "\(self)'s extended attributes cannot be read: \(error)")
    }
    guard let decoded else {
      throw context.fail(.invalidValue, "\(self)'s extended attributes are not a dictionary")
    }
    return decoded
  }

  /// Every extended attribute with its current value, unsaved changes included.
  /// - Throws: ``StoreError`` as ``value(forExtendedKey:)``.
  public func extendedValues() throws(StoreError) -> [String: PropertyListValue] {
    var values = try storedExtendedAttributes().dictionary
    for (key, change) in extendedChanges { values[key] = change }
    return values
  }
}

extension ObjectContext {
  func setExtendedValue(_ value: PropertyListValue?, for key: String, of object: ManagedObject)
    throws(StoreError)
  {
    try checkChangeable(object)
    guard object.traits.bucket != nil else {
      throw fail(.invalidValue, "\(object.entity) keeps no extended attributes (no bucket)")
    }
    let step = undoStep { .extended(object.reference, key, object.extendedChanges[key]) }
    defer { step.end() }
    object.extendedChanges[key] = .some(value)
    markUpdated(object)
    step.commit()
  }

  /// Restores an extended key's change layer as it was (undo).
  func restoreExtendedChange(
    _ change: PropertyListValue??, for key: String, of object: ManagedObject
  )
    throws(StoreError)
  {
    try checkChangeable(object)
    let step = undoStep { .extended(object.reference, key, object.extendedChanges[key]) }
    defer { step.end() }
    if let change {
      object.extendedChanges[key] = change
    } else {
      object.extendedChanges.removeValue(forKey: key)
    }
    markUpdated(object)
    step.commit()
  }

  /// Merges each changed object's extended changes into its stored bucket and sets the bucket
  /// attribute (NULL when nothing is left), before validation. The layers are cleared only
  /// when the save commits. Returns what to put back if it does not.
  func foldExtendedChanges() throws(StoreError) -> [(ManagedObject, String, AttributeValue?)] {
    var folded: [(ManagedObject, String, AttributeValue?)] = []
    // One writer for every bucket of the save, its buffers reused from one to the next.
    var writer = BinaryPropertyListWriter()
    // Every object whose extended changes a save writes was marked updated (or inserted) after
    // they began, and so listed; one listed whose changes were since dropped has none left.
    for object in extendedChangeList {
      guard !object.isDeleted, !object.extendedChanges.isEmpty, let bucket = object.traits.bucket
      else { continue }
      assert(
        inserted.contains(object.reference) || updated.contains(object.reference),
        "\(object) has extended changes but is neither inserted nor updated")
      let merged = try object.storedExtendedAttributes().merging(object.extendedChanges)
      folded.append((object, bucket, object.attributes[bucket]))
      if merged.isEmpty {
        object.attributes[bucket] = nil
      } else {
        writer.reset()
        let root = merged.write(to: &writer)
        object.attributes[bucket] = .data(writer.serialized(root: root))
      }
      object.pendingExtendedSnapshot = merged
    }
    return folded
  }

  /// `value` as an extended attribute's property-list value (fall-through of `setValue(_:for:)`).
  static func propertyListValue(_ value: AttributeValue) -> PropertyListValue {
    switch value {
    case .integer(let number): return .integer(number)
    case .double(let number): return .real(number)
    case .decimal(let text), .string(let text), .uri(let text): return .string(text)
    case .bool(let flag): return .bool(flag)
    case .date(let seconds): return .date(PropertyListDate(secondsSinceReferenceDate: seconds))
    case .data(let bytes), .uuid(let bytes), .transformed(let bytes): return .data(bytes)
    case .composite(let elements): return .dictionary(elements.mapValues(propertyListValue))
    }
  }

  /// An extended attribute's value as an attribute value, when it is a single value
  /// (fall-through of `value(for:)`); arrays and dictionaries need
  /// ``ManagedObject/value(forExtendedKey:)``.
  static func attributeValue(_ value: PropertyListValue) -> AttributeValue? {
    switch value {
    case .integer(let number): return .integer(number)
    case .real(let number): return .double(number)
    case .string(let text): return .string(text)
    case .bool(let flag): return .bool(flag)
    case .date(let date): return .date(date.secondsSinceReferenceDate)
    case .data(let bytes): return .data(bytes)
    case .null, .array, .dictionary, .uid: return nil
    }
  }
}
