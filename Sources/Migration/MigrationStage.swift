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

  /// The version the hop starts from.
  public let from: String
  /// The version the hop goes to.
  public let to: String
  /// Runs before the hop.
  public var before: Before?
  /// Runs for every object.
  public var perObject: PerObject?
  /// Runs after the migration.
  public var after: After?

  /// Creates a stage for the hop `from` → `to`.
  public init(
    from: String, to: String, before: Before? = nil, after: After? = nil,
    perObject: PerObject? = nil
  ) {
    self.from = from
    self.to = to
    self.before = before
    self.perObject = perObject
    self.after = after
  }
}

/// What a custom stage's per-object code uses to make new objects.
public struct MigrationEmitter {
  let allocate: (String) -> Int64
  let destination: ObjectModel
  var objects: [MigratingObject] = []

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
