/// What deleting an object does to the objects a relationship points at.
public enum DeleteRule: String, Hashable, Sendable, Codable, CaseIterable {
  /// Do nothing to the destination.
  case noAction = "No Action"
  /// Remove the deleted object from the destination's inverse.
  case nullify = "Nullify"
  /// Delete the destination objects too.
  case cascade = "Cascade"
  /// Refuse to delete while the relationship is not empty.
  case deny = "Deny"

  /// Core Data's `NSDeleteRule` raw value.
  public var coreDataCode: Int {
    switch self {
    case .noAction: return 0
    case .nullify: return 1
    case .cascade: return 2
    case .deny: return 3
    }
  }

  /// The rule with Core Data's `NSDeleteRule` raw value `code`.
  public init?(coreDataCode code: Int) {
    guard let rule = Self.allCases.first(where: { $0.coreDataCode == code }) else { return nil }
    self = rule
  }
}

/// A relationship from one entity to another.
///
/// Counts follow Core Data's rule: `maxCount` 0 (or a negative count, which models built in
/// code and compiled by Core Data carry as -1) is an unbounded to-many, 1 a to-one, and more
/// than 1 a to-many bounded to that many objects.
public struct RelationshipDescription: Hashable, Sendable, Codable {
  /// The relationship's name.
  public var name: String
  /// The destination entity's name.
  public var destination: String
  /// The inverse relationship's name (on the destination), if any.
  public var inverse: String?
  /// The least number of destination objects.
  public var minCount: Int
  /// The most destination objects: 0 (or negative) unbounded, 1 to-one, more a bounded
  /// to-many.
  public var maxCount: Int
  /// Whether a to-many keeps its order.
  public var isOrdered: Bool
  /// What deleting the source does to the destination.
  public var deleteRule: DeleteRule
  /// Whether it may be empty (nil).
  public var isOptional: Bool
  /// Whether it is transient.
  public var isTransient: Bool
  /// The renaming identifier (Xcode's `elementID`).
  public var renamingIdentifier: String?
  /// The version hash modifier.
  public var versionHashModifier: String?
  /// The user info.
  public var userInfo: [String: String]

  /// Creates a relationship. As with `NSRelationshipDescription`, `maxCount` defaults to 0, an
  /// unbounded to-many: pass `maxCount: 1` for a to-one.
  public init(
    name: String, destination: String, inverse: String? = nil, minCount: Int = 0,
    maxCount: Int = 0, isOrdered: Bool = false, deleteRule: DeleteRule = .nullify,
    isOptional: Bool = true, isTransient: Bool = false, renamingIdentifier: String? = nil,
    versionHashModifier: String? = nil, userInfo: [String: String] = [:]
  ) {
    self.name = name
    self.destination = destination
    self.inverse = inverse
    self.minCount = minCount
    self.maxCount = maxCount
    self.isOrdered = isOrdered
    self.deleteRule = deleteRule
    self.isOptional = isOptional
    self.isTransient = isTransient
    self.renamingIdentifier = renamingIdentifier
    self.versionHashModifier = versionHashModifier
    self.userInfo = userInfo
  }

  /// Whether the relationship points at more than one object.
  public var isToMany: Bool { maxCount != 1 }
}
