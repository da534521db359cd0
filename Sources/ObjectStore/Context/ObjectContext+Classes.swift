import ObjectModel

/// A subclass of ``ManagedObject`` made for one entity, as `graphvault generate` writes them.
public protocol EntityClass: ManagedObject {
  /// The entity whose objects it makes.
  static var entityName: String { get }
}

extension EntityClass {
  /// Inserts a new object of the class's entity into `context`, as Core Data's
  /// `init(context:)`: `let book = try Book(context: context)`. The class becomes its
  /// entity's class on the context when none is registered.
  /// - Throws: ``StoreError`` as ``ObjectContext/insert(_:)``.
  public init(context: ObjectContext) throws(StoreError) {
    if context.classes[Self.entityName] == nil { try context.register(Self.self) }
    self.init(
      ManagedObject.Construction(
        record: try context.newRecord(Self.entityName, primaryKey: nil), context: context,
        values: context.traits(of: Self.entityName).defaultValues))
    try context.adoptInserted(self)
  }

  /// A fetch request for the class's entity (its sub-entities included), as Core Data's
  /// generated `fetchRequest()`: `try context.fetch(Book.self, Book.fetchRequest())`.
  public static func fetchRequest() -> FetchRequest { FetchRequest(entity: entityName) }
}

extension ObjectContext {
  /// Makes `type` the class of `entity`'s objects, and of its sub-entities' that have no class
  /// of their own, from now on (register before fetching: objects already in the context keep
  /// their class).
  /// - Throws: ``StoreError`` when the model has no entity `entity`.
  public func register(_ type: ManagedObject.Type, for entity: String) throws(StoreError) {
    guard model.entity(named: entity) != nil else {
      throw fail(.invalidValue, "the model has no entity \(entity) for \(type)")
    }
    classes[entity] = type
  }

  /// Makes `type` the class of its entity's objects (``EntityClass/entityName``).
  /// - Throws: as ``register(_:for:)``.
  public func register<T: EntityClass>(_ type: T.Type) throws(StoreError) {
    try register(type, for: T.entityName)
  }

  /// Inserts a new object of `type`'s entity, made by `type`.
  /// - Throws: as ``insert(_:)``.
  public func insert<T: EntityClass>(_ type: T.Type) throws(StoreError) -> T {
    if classes[T.entityName] == nil { try register(type) }
    let object = try insert(T.entityName)
    guard let typed = object as? T else {
      throw fail(.invalidValue, "\(object) is a \(Swift.type(of: object)), not a \(T.self)")
    }
    return typed
  }

  /// The objects `request` fetches, as `type` (registered for the request's entity first when
  /// no class is).
  /// - Throws: as ``fetch(_:)``, or when an object is not a `T` (another class registered for
  ///   its entity).
  public func fetch<T: EntityClass>(_ type: T.Type, _ request: FetchRequest) throws(StoreError)
    -> [T]
  {
    if classes[T.entityName] == nil { try register(type) }
    var typed: [T] = []
    for object in try fetch(request) {
      guard let one = object as? T else {
        throw fail(.invalidValue, "\(object) is a \(Swift.type(of: object)), not a \(T.self)")
      }
      typed.append(one)
    }
    return typed
  }

  /// A new object for `record`, of its entity's class (or the nearest ancestor's that has one).
  func makeObject(
    _ record: ObjectRecord, values: [AttributeValue?]? = nil, traits: EntityTraits? = nil
  ) -> ManagedObject {
    let type =
      classes.isEmpty
      ? ManagedObject.self
      : model.lineage(of: record.entity).lazy.compactMap { self.classes[$0.name] }.first
        ?? ManagedObject.self
    return type.init(
      ManagedObject.Construction(record: record, context: self, values: values, traits: traits))
  }
}
