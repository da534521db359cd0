import Migration

/// What `graphvault migrate` did (or, in a dry run, would do) to a store.
public struct MigrateResult: Codable, Sendable {
  /// The store.
  public let store: String
  /// The version the store was at.
  public let from: String
  /// The version it is at now (or would be).
  public let to: String
  /// Objects per entity, as read from the store.
  public let objects: [String: Int]
  /// The migration, when the store was not at the target version.
  public let migration: MigrationReport?
  /// The path the unmigrated store was kept at (``MigrateService/Options/keepOriginal``).
  public let original: String?
  /// Whether nothing was written.
  public let dryRun: Bool
}
