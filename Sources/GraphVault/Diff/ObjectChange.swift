/// One object that differs between two stores or archives: inserted (only in the newer side),
/// deleted (only in the older) or changed (in both, with other values).
public struct ObjectChange: Codable, Sendable, Equatable {
  /// What happened to the object.
  public enum Kind: String, Codable, Sendable {
    /// Only the newer side has it.
    case inserted
    /// Only the older side has it.
    case deleted
    /// Both sides have it, with different values.
    case changed
  }

  /// One property's value on each side (nil where the side has none, or no such object),
  /// as text: strings whole, binary values by their size and first bytes.
  public struct Property: Codable, Sendable, Equatable {
    /// The attribute, relationship or stored column (`@Z_FOK_BOOKS`).
    public let name: String
    /// The older side's value.
    public let old: String?
    /// The newer side's value.
    public let new: String?
  }

  /// What happened.
  public let kind: Kind
  /// The object's entity.
  public let entity: String
  /// How the object is known: `p12` (its primary key), or `isbn='0-441-17271-7'` when
  /// matched by a key attribute.
  public let key: String
  /// Its primary key on the older side (nil when inserted).
  public let oldPrimaryKey: Int64?
  /// Its primary key on the newer side (nil when deleted).
  public let newPrimaryKey: Int64?
  /// The properties that differ (changed), or every property that has a value (inserted,
  /// deleted): the key attributes first (``KeyAttributes``), then by name.
  public let properties: [Property]
}
