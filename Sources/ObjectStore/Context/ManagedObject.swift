import ObjectModel
import PropertyList

/// An object in an ``ObjectContext``: its attribute values and relationships, read lazily from
/// the store and changed in memory until the context saves.
///
/// Setting a relationship keeps its inverse in step on the other objects, as Core Data does.
///
/// Open for subclassing, as `NSManagedObject` is: a subclass per entity (written by
/// `graphvault generate`, or by hand) gives typed properties over ``value(for:as:)`` and
/// ``setValue(_:for:)-(T?,_)``; ``ObjectContext/register(_:)`` tells a context which class
/// makes which entity's objects.
open class ManagedObject: CustomStringConvertible {
  /// The object's entity and primary key.
  public let reference: ObjectReference
  @usableFromInline unowned let context: ObjectContext
  /// The entity's attribute names and bucket.
  @usableFromInline let traits: EntityTraits
  var attributes: AttributeSlots
  /// To-one references as changed in memory; the context's registry follows every change
  /// (``ObjectRegistry``), as it follows ``committedToOne``.
  var toOne: [String: ObjectReference] {
    didSet {
      context.registered.toOneChanged(of: self, from: oldValue, to: toOne, committed: false)
    }
  }
  var toMany: [String: [ObjectReference]] = [:]
  var version: Int64
  /// Attribute values and to-one references as last read from or written to the store.
  var committed: AttributeSlots
  var committedToOne: [String: ObjectReference] {
    didSet {
      context.registered.toOneChanged(
        of: self, from: oldValue, to: committedToOne, committed: true)
    }
  }
  /// Attributes and to-one relationships set since the object was read or saved (whatever
  /// the value): what a refresh keeps under ``ObjectContext/MergeSemantics/stable``.
  var changedKeys = Set<String>()
  /// The extended attributes' bucket as stored, decoded on first use; nil until then.
  var extendedSnapshot: ExtendedBucket?
  /// Unsaved extended-attribute changes; a nil value marks a key set to nil.
  var extendedChanges: [String: PropertyListValue?] = [:]
  /// Whether the context's ``ObjectContext/extendedChangeList`` holds the object.
  var isInExtendedChangeList = false
  /// The bucket a save in progress writes, the snapshot once it commits.
  var pendingExtendedSnapshot: ExtendedBucket?
  /// Values of transient attributes of any type (`undefined` ones), kept only in memory.
  var transients: [String: any Sendable] = [:]
  /// Whether the object was deleted (pending or saved), or discarded by a rollback.
  public internal(set) var isDeleted = false
  /// Whether the object waits for its first save (its reference is in the context's
  /// `inserted`): asked on every value set, without a lookup.
  var isPendingInsert = false
  /// Whether the context's ``ObjectContext/pendingInserts`` lists the object.
  var isInPendingInserts = false

  /// What a context hands a new object: its stored record and the context itself.
  public struct Construction {
    let record: ObjectRecord
    unowned let context: ObjectContext
    /// The attribute values by slot, when they were read so; else the record's.
    var values: [AttributeValue?]? = nil
    /// The entity's traits, when the context has them at hand.
    var traits: EntityTraits? = nil
  }

  /// Creates an object for a context; a subclass inherits it (or passes `construction` on to
  /// it). Objects are made by the context (``ObjectContext/insert(_:)``, fetches), never
  /// directly.
  public required init(_ construction: Construction) {
    let record = construction.record
    let context = construction.context
    reference = record.reference
    self.context = context
    let traits = construction.traits ?? context.traits(of: record.entity)
    self.traits = traits
    if let values = construction.values {
      attributes = AttributeSlots(values: values, traits: traits)
    } else {
      attributes = AttributeSlots(record.attributes, traits: traits)
    }
    toOne = record.toOne
    version = record.version
    committed = attributes
    committedToOne = record.toOne
  }

  /// The context the object lives in.
  public var managedObjectContext: ObjectContext { context }

  /// The entity's name.
  public var entity: String { reference.entity }

  /// The primary key.
  public var primaryKey: Int64 { reference.primaryKey }

  /// `Entity/p<pk>`.
  public var description: String { reference.description }

  /// The value of attribute `key` (nil when it has none). A key the entity does not have is an
  /// error, as in Core Data, unless the entity lets such keys fall through to its extended
  /// attributes (``ExtendedAttributes/fallThroughKey``): then it is the extended value, when
  /// that is a single value.
  /// - Throws: ``StoreError`` (``StoreError/Kind/invalidValue``) naming the entity and the key
  ///   when the entity has no attribute `key` and does not fall through.
  ///
  /// A composite attribute's value is the dictionary of its elements' values
  /// (``AttributeValue/composite(_:)``, nil when none has one); an element is read by its key
  /// path (`author.person`), as Core Data's namespaced key paths read it.
  public func value(for key: String) throws(StoreError) -> AttributeValue? {
    if let slot = traits.slots[key] { return attributes[slot: slot] }
    if let composite = context.model.compositeAttribute(key, of: entity) {
      let prefix = key + "."
      let elements = composite.flattened.compactMap { element in
        attributes[element.name].map { (String(element.name.dropFirst(prefix.count)), $0) }
      }
      return elements.isEmpty ? nil : .composite(RecordNesting.nested(elements))
    }
    guard traits.fallsThrough else {
      throw context.fail(
        .invalidValue,
        "\(entity) has no attribute \(key) (its attributes: \(traits.slotNames.joined(separator: ", ")))"
      )
    }
    guard let extended = try value(forExtendedKey: key) else { return nil }
    return ObjectContext.attributeValue(extended)
  }

  /// Sets attribute `key`.
  /// - Throws: ``StoreError`` (``StoreError/Kind/invalidValue``) when the entity has no such
  ///   attribute, it is derived, or the value does not fit its type.
  public func setValue(_ value: AttributeValue?, for key: String) throws(StoreError) {
    try context.setValue(value, for: key, of: self)
  }

  /// The value of transformable attribute `key`, through its value transformer (nil when it
  /// has none).
  /// - Throws: ``StoreError`` when the attribute is not transformable, its transformer is not
  ///   registered, or cannot read the stored bytes.
  public func transformedValue(for key: String) throws(StoreError) -> (any Sendable)? {
    try context.transformedValue(for: key, of: self)
  }

  /// Sets transformable attribute `key` to `value`, stored through its value transformer.
  /// - Throws: ``StoreError`` when the value is not of the attribute's value class (naming
  ///   entity, attribute, expected and actual class), or the transformer cannot store it;
  ///   nothing is set then.
  public func setTransformedValue(_ value: (any Sendable)?, for key: String) throws(StoreError) {
    try context.setTransformedValue(value, for: key, of: self)
  }

  /// The value of transient attribute `key`: what ``setTransientValue(_:for:)`` or
  /// ``setPrimitiveTransientValue(_:for:)`` put there, or an `AttributeValue` set with
  /// ``setValue(_:for:)`` (nil when none).
  public func transientValue(for key: String) -> (any Sendable)? {
    transients[key] ?? attributes[key]
  }

  /// Sets transient attribute `key` (of any type; `undefined` ones hold any value), which is
  /// a change: ``ObjectContext/hasChanges`` turns true and `willSave` hooks run for the object,
  /// though the store keeps nothing of it.
  /// - Throws: ``StoreError`` when the entity has no such transient attribute.
  public func setTransientValue(_ value: (any Sendable)?, for key: String) throws(StoreError) {
    try context.setTransient(value, for: key, of: self, tracked: true)
  }

  /// Sets transient attribute `key` without making it a change, as Core Data's
  /// `setPrimitiveValue:forKey:`: for a getter that caches a value decoded from its shadow
  /// attribute, or an `awakeFromFetch` hook.
  public func setPrimitiveTransientValue(_ value: (any Sendable)?, for key: String)
    throws(StoreError)
  {
    try context.setTransient(value, for: key, of: self, tracked: false)
  }

  /// The object a to-one relationship points at.
  public func object(for relationship: String) throws(StoreError) -> ManagedObject? {
    try context.relatedObject(of: self, relationship)
  }

  /// Points a to-one relationship at `object` (nil empties it); the inverse follows.
  public func setObject(_ object: ManagedObject?, for relationship: String) throws(StoreError) {
    try context.setToOne(of: self, relationship, to: object?.reference)
  }

  /// The objects of a to-many relationship, in order (ordered relationships) or by primary key.
  public func objects(for relationship: String) throws(StoreError) -> [ManagedObject] {
    try context.members(of: self, relationship).map { reference throws(StoreError) in
      try context.object(with: reference)
    }
  }

  /// Adds `object` to a to-many relationship (at the end, for an ordered one); the inverse
  /// follows.
  public func add(_ object: ManagedObject, to relationship: String) throws(StoreError) {
    try context.addMember(object.reference, to: self, relationship)
  }

  /// Makes a to-many relationship hold exactly `objects` (in their order, for an ordered one);
  /// the inverses follow.
  public func setObjects(_ objects: [ManagedObject], for relationship: String) throws(StoreError) {
    try context.setMembers(objects.map(\.reference), of: self, relationship)
  }

  /// Removes `object` from a to-many relationship; the inverse follows.
  public func remove(_ object: ManagedObject, from relationship: String) throws(StoreError) {
    try context.removeMember(object.reference, from: self, relationship)
  }
}

extension ManagedObject: Hashable {
  /// The same object: one context holds one instance per stored object.
  public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }

  /// Hashes the instance.
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
