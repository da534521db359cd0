import ObjectModel

/// A condition on an object's attributes or to-one relationships.
public indirect enum Predicate: Sendable, Equatable {
  /// The key's value equals the value (nil: the key has no value).
  case equal(String, AttributeValue?)
  /// The key's value differs from the value.
  case notEqual(String, AttributeValue?)
  /// The key's value is less than the value.
  case less(String, AttributeValue)
  /// The key's value is less than or equal to the value.
  case lessOrEqual(String, AttributeValue)
  /// The key's value is greater than the value.
  case greater(String, AttributeValue)
  /// The key's value is greater than or equal to the value.
  case greaterOrEqual(String, AttributeValue)
  /// The to-one relationship points at the object (nil: is empty).
  case relatedTo(String, ObjectReference?)
  /// All conditions hold.
  case and([Predicate])
  /// Any condition holds.
  case or([Predicate])
  /// The condition does not hold.
  case not(Predicate)
}

/// An ordering of fetched objects by one attribute.
public struct SortDescriptor: Sendable, Equatable {
  /// The attribute's name.
  public var key: String
  /// Ascending (nil values first) or descending.
  public var ascending: Bool

  /// Creates a sort descriptor.
  public init(_ key: String, ascending: Bool = true) {
    self.key = key
    self.ascending = ascending
  }
}

/// Which objects a fetch returns, in what order.
public struct FetchRequest: Sendable, Equatable {
  /// The entity to fetch.
  public var entity: String
  /// The condition, if any.
  public var predicate: Predicate?
  /// The ordering; primary-key order after it.
  public var sortDescriptors: [SortDescriptor]
  /// Whether sub-entities' objects are included.
  public var includesSubentities: Bool
  /// The most objects returned (0: all).
  public var fetchLimit: Int

  /// Creates a fetch request.
  public init(
    entity: String, predicate: Predicate? = nil, sortDescriptors: [SortDescriptor] = [],
    includesSubentities: Bool = true, fetchLimit: Int = 0
  ) {
    self.entity = entity
    self.predicate = predicate
    self.sortDescriptors = sortDescriptors
    self.includesSubentities = includesSubentities
    self.fetchLimit = fetchLimit
  }
}

extension AttributeValue {
  /// Orders values of comparable kinds (numbers with numbers, strings, dates, booleans, bytes);
  /// nil when the kinds cannot be compared.
  static func compare(_ lhs: AttributeValue, _ rhs: AttributeValue) -> Int? {
    func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a > b ? 1 : 0) }
    switch (lhs, rhs) {
    case (.string(let a), .string(let b)), (.uri(let a), .uri(let b)): return sign(a, b)
    case (.date(let a), .date(let b)): return sign(a, b)
    case (.bool(let a), .bool(let b)): return sign(a ? 1 : 0, b ? 1 : 0)
    case (.data(let a), .data(let b)), (.uuid(let a), .uuid(let b)),
      (.transformed(let a), .transformed(let b)):
      return a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
    default:
      guard let a = lhs.numericValue, let b = rhs.numericValue else { return nil }
      return sign(a, b)
    }
  }

  var numericValue: Double? {
    switch self {
    case .integer(let v): return Double(v)
    case .double(let v): return v
    case .decimal(let v): return Double(v)
    case .bool(let v): return v ? 1 : 0
    default: return nil
    }
  }

  /// Whether the value's kind fits an attribute of `type`.
  func fits(_ type: AttributeType) -> Bool {
    switch (self, type) {
    case (.integer, .integer16), (.integer, .integer32), (.integer, .integer64): return true
    case (.double, .double), (.double, .float), (.decimal, .decimal), (.string, .string):
      return true
    case (.bool, .boolean), (.date, .date), (.data, .binaryData), (.uuid, .uuid): return true
    case (.uri, .uri), (.transformed, .transformable), (.data, .transformable): return true
    case (_, .undefined), (_, .objectID): return true
    default: return false
    }
  }
}
