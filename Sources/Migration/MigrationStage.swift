import ObjectModel
import ObjectStore

/// A custom stage of a migration, for library users: code that runs with one hop, in the
/// spirit of SwiftData's `MigrationStage.custom(fromVersion:toVersion:willMigrate:didMigrate:)`.
///
/// ```swift
/// let stage = MigrationStage(from: "Library 2", to: "Library 3") { object, emitter in
///   if object.entity == "Book", case .string(let title)? = object.attributes["title"] {
///     object.attributes["title"] = .string(title.capitalized)
///   }
///   return true  // keep the object; false drops it
/// }
/// ```
public struct MigrationStage: Sendable {
  /// Called once before the hop's first object, with the hop (its versions and changes).
  public typealias Before = @Sendable (MigrationHop) throws -> Void
  /// Called for every object the hop produced (in the destination version's shape); may change
  /// it, make new objects through the emitter, and return false to drop it.
  public typealias PerObject =
    @Sendable (inout MigratingObject, inout MigrationEmitter) throws ->
    Bool
  /// Called once the whole migration is written, with a context on the new store (not yet in
  /// place) at the target version; its changes are saved before the store is published.
  public typealias After = @Sendable (ObjectContext) throws -> Void

  /// The version the hop starts from (for a policy's stage, nil for every hop that names it).
  public internal(set) var from: String
  /// The version the hop goes to.
  public internal(set) var to: String
  /// The custom entity migration policy class it stands in for, when a mapping model names
  /// one (``init(policy:from:to:perObject:before:after:)``).
  public let policy: String?
  /// The destination entities whose objects ``perObject`` is given (a policy's stage: those of
  /// the entity mappings that name it); nil for every object of the hop.
  public internal(set) var entities: Set<String>?
  /// Runs before the hop.
  public var before: Before?
  /// Runs for every object.
  public var perObject: PerObject?
  /// Runs after the migration.
  public var after: After?

  /// Creates a stage for the hop `from` → `to`.
  public init(
    from: String, to: String, perObject: PerObject? = nil, before: Before? = nil,
    after: After? = nil
  ) {
    self.from = from
    self.to = to
    self.policy = nil
    self.before = before
    self.perObject = perObject
    self.after = after
  }

  /// Creates a stage that stands in for a custom `NSEntityMigrationPolicy` subclass a mapping
  /// model names (`.xcmappingmodel` or `.cdm`): it runs with every hop whose entity mappings
  /// name `policy` (only the hop `from` → `to` when given), and ``perObject`` is given the
  /// objects of those entity mappings, in the destination version's shape, with the object
  /// as it was in the source version in ``MigrationEmitter/source`` (as Core Data gives a
  /// policy's `createDestinationInstances(forSource:in:manager:)` its source instance).
  ///
  /// `policy` is matched against the class name as written (`MyApp.PostPolicy`) and against
  /// its last component (`PostPolicy`). A mapping model naming a policy that no stage stands
  /// in for is refused, naming every such class.
  ///
  /// ```swift
  /// let stage = MigrationStage(policy: "MHWBookToBookPolicy", from: "Model1", to: "Model2") {
  ///   book, emitter in
  ///   book.relationships["users"] = emitter.source?.relationships["user"]
  ///   return true
  /// }
  /// ```
  public init(
    policy: String, from: String? = nil, to: String? = nil, perObject: PerObject? = nil,
    before: Before? = nil, after: After? = nil
  ) {
    self.from = from ?? ""
    self.to = to ?? ""
    self.policy = policy
    self.before = before
    self.perObject = perObject
    self.after = after
  }

  /// Whether this stage stands in for the policy class `className` on the hop `from` → `to`.
  func standsIn(for className: String, from: String, to: String) -> Bool {
    guard let policy else { return false }
    let named =
      policy == className || policy == className.split(separator: ".").last.map(String.init)
    return named && (self.from.isEmpty || self.from == from) && (self.to.isEmpty || self.to == to)
  }

  /// Whether ``perObject`` is given objects of `entity`.
  func applies(to entity: String) -> Bool { entities?.contains(entity) ?? true }
}

/// What a custom stage's per-object code uses to make new objects.
public struct MigrationEmitter {
  let allocate: (String) -> Int64
  let destination: ObjectModel
  var objects: [MigratingObject] = []

  /// The object being migrated as it was in the hop's source version (its entity, attributes
  /// and links there), for what the hop itself does not carry over; nil for objects made
  /// during the hop.
  public internal(set) var source: MigratingObject?

  /// A new object of `entity` (destination version) with a fresh primary key; pass it to
  /// ``emit(_:)`` once filled in.
  /// - Throws: ``MigrationError`` when the version has no such concrete entity.
  public func newObject(of entity: String) throws(MigrationError) -> MigratingObject {
    guard let found = destination.entity(named: entity), !found.isAbstract else {
      throw MigrationError(
        .refused,
        "a custom stage makes an object of \(entity), which is not a concrete entity of \(versionName(of: destination))"
      )
    }
    return MigratingObject(entity: entity, primaryKey: allocate(entity))
  }

  /// Adds an object to the migration, after the one being migrated.
  public mutating func emit(_ object: MigratingObject) {
    objects.append(object)
  }
}
