import ObjectModel

/// Many new objects of one entity written straight into the store, as Core Data's
/// `NSBatchInsertRequest`: no managed objects, no undo, one transaction, and memory that does
/// not grow with the number of objects. Run it with ``ObjectContext/execute(_:)``.
///
/// Rows set attributes only (relationships are left empty, as Core Data's batch inserts leave
/// them); attributes a row leaves unset take their defaults. Each row is checked before it is
/// written: its values' types, its required attributes, and its entity's uniqueness
/// constraints, which the context's ``ObjectContext/mergePolicy`` settles as a save does (an
/// upsert under the property-trump policies, a ``ConstraintConflict`` under
/// ``ObjectContext/MergePolicy/error``). A failure writes nothing.
///
/// ```swift
/// var number = 0
/// let request = BatchInsertRequest(entity: "Book") { row in
///   guard number < titles.count else { return true }  // done
///   try row.setValue(titles[number], for: "title")
///   number += 1
///   return false
/// }
/// let result = try context.execute(request)  // result.inserted == titles.count
/// ```
public struct BatchInsertRequest {
  /// What ``ObjectContext/execute(_:)`` gives back beside its counts.
  public enum ResultType: Sendable {
    /// The counts only.
    case count
    /// The counts and the reference of every object inserted or updated, in row order
    /// (memory then grows with the rows: Core Data's `.objectIDs`).
    case objectReferences
  }

  /// The entity whose objects the rows become.
  public let entity: String
  /// What the result carries.
  public var resultType: ResultType = .count
  /// Fills the next row; true when there is none (that call's row is not written).
  let next: (inout BatchInsertRow) throws -> Bool

  /// A request whose rows `handler` fills one at a time, as Core Data's `dictionaryHandler`:
  /// it is called with an empty row until it returns true, and the row it filled in that last
  /// call is not written.
  public init(entity: String, handler: @escaping (inout BatchInsertRow) throws -> Bool) {
    self.entity = entity
    next = handler
  }

  /// A request inserting one object for each dictionary of `objects`, by attribute name
  /// (each time it is executed).
  public init(entity: String, objects: [[String: AttributeValue]]) {
    self.init(entity: entity) { row in
      guard row.index < objects.count else { return true }
      for (key, value) in objects[row.index] { try row.setValue(value, for: key) }
      return false
    }
  }
}

/// The values of one object a ``BatchInsertRequest`` writes, by attribute: set them with
/// ``setValue(_:for:)-(T?,_)``, as on a ``ManagedObject``.
public struct BatchInsertRow {
  @usableFromInline let context: ObjectContext
  @usableFromInline let traits: EntityTraits
  /// The entity's name, for messages.
  @usableFromInline let entity: String
  /// The values by slot (``EntityTraits/slots``): defaults until set.
  @usableFromInline var values: [AttributeValue?]
  /// The row's place in the request, from 0.
  public internal(set) var index = 0

  init(context: ObjectContext, traits: EntityTraits) {
    self.context = context
    self.traits = traits
    entity = traits.name
    values = traits.defaultValues
  }

  /// The value of attribute `key` as set so far (its default when unset); nil when it has
  /// none or the entity has no such attribute.
  public subscript(key: String) -> AttributeValue? {
    traits.slots[key].flatMap { values[$0] }
  }

  /// Sets attribute `key` to a Swift value (nil empties it), converted for the attribute's
  /// type as ``ManagedObject/setValue(_:for:)-(T?,_)`` converts; a transformable attribute's
  /// value goes through its value transformer.
  /// - Throws: ``StoreError`` (``StoreError/Kind/invalidValue``) naming the entity, the key
  ///   and the value when the entity has no such attribute, it is derived, or the value does
  ///   not convert.
  @inlinable
  public mutating func setValue<T: AttributeConvertible>(_ value: T?, for key: String)
    throws(StoreError)
  {
    let slot = try slot(of: key)
    let type = traits.slotAttributes[slot].type
    guard let value else {
      values[slot] = nil
      return
    }
    if type == .transformable {
      values[slot] = try context.transformedBytes(value, for: key, of: entity).map {
        .transformed($0)
      }
      return
    }
    guard let converted = value.attributeValue(for: type) else {
      throw context.fail(
        .invalidValue,
        "\(entity).\(key) is \(type.rawValue); \(value) (\(T.self)) does not convert to it (row \(index))"
      )
    }
    values[slot] = converted
  }

  /// Sets attribute `key` to a stored value (nil empties it): for a transformable attribute,
  /// its transformed bytes.
  /// - Throws: ``StoreError`` (``StoreError/Kind/invalidValue``) when the entity has no such
  ///   attribute, it is derived, or the value does not fit its type.
  public mutating func setValue(_ value: AttributeValue?, for key: String) throws(StoreError) {
    if traits.slots[key] == nil,
      let composite = context.model.compositeAttribute(key, of: entity)
    {
      return try setComposite(value, for: key, composite)
    }
    let slot = try slot(of: key)
    let type = traits.slotAttributes[slot].type
    if let value, !value.fits(type) {
      throw context.fail(
        .invalidValue, "\(entity).\(key) is \(type.rawValue); \(value) does not fit (row \(index))")
    }
    values[slot] = value
  }

  /// Sets transformable attribute `key` to `value` (nil empties it), stored through its value
  /// transformer as ``ManagedObject/setTransformedValue(_:for:)`` stores it.
  /// - Throws: ``StoreError`` (``StoreError/Kind/invalidValue``) when the attribute is not
  ///   transformable, its transformer is not registered, or the value is not of its class.
  public mutating func setTransformedValue(_ value: (any Sendable)?, for key: String)
    throws(StoreError)
  {
    let slot = try slot(of: key)
    values[slot] = try context.transformedBytes(value, for: key, of: entity).map {
      .transformed($0)
    }
  }

  /// Sets a composite attribute element by element, nil for those the value leaves out.
  private mutating func setComposite(
    _ value: AttributeValue?, for key: String, _ composite: AttributeDescription
  ) throws(StoreError) {
    for (element, elementValue) in try context.compositeElements(
      value, for: key, composite, of: entity, place: " (row \(index))")
    {
      try setValue(elementValue, for: element)
    }
  }

  /// The slot of attribute `key`, which a batch insert may set.
  @usableFromInline
  func slot(of key: String) throws(StoreError) -> Int {
    guard let slot = traits.slots[key] else {
      let isRelationship = context.model.relationships(of: entity).contains { $0.name == key }
      throw context.fail(
        .invalidValue,
        isRelationship
          ? "\(entity).\(key) is a relationship; a batch insert sets attributes only (row \(index))"
          : "\(entity) has no attribute \(key) (row \(index))")
    }
    let attribute = traits.slotAttributes[slot]
    guard !attribute.isDerived else {
      throw context.fail(
        .invalidValue, "\(entity).\(key) is derived; the store computes it (row \(index))")
    }
    guard !attribute.isTransient else {
      throw context.fail(
        .invalidValue,
        "\(entity).\(key) is transient; a batch insert writes stored attributes only (row \(index))"
      )
    }
    return slot
  }

  /// Makes the row the next one: every value its default.
  mutating func reset(index: Int) {
    let defaults = traits.defaultValues
    for slot in values.indices { values[slot] = defaults[slot] }
    self.index = index
  }
}

/// What a ``BatchInsertRequest`` did.
public struct BatchInsertResult: Sendable, Equatable {
  /// How many objects it inserted.
  public let inserted: Int
  /// How many objects already holding a row's constraint values it updated instead (an
  /// upsert, under a property-trump merge policy).
  public let updated: Int
  /// With ``BatchInsertRequest/ResultType/objectReferences``: each row's object, in row
  /// order (the object it updated, for an upsert); else nil.
  public let objects: [ObjectReference]?
}
