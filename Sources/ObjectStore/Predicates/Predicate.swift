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
  /// A predicate in `NSPredicate` format (`"author.name BEGINSWITH[c] 'a' AND pages.@count > 2"`),
  /// checked against the model when the fetch runs.
  case format(String)
  /// A predicate in `NSPredicate` format with values for its placeholders and substitution
  /// variables (``init(format:_:)``, ``withSubstitutionVariables(_:)``).
  case formatted(Format)

  /// A format's text with the values of its placeholders (in order) and variables (by name).
  public struct Format: Sendable, Hashable {
    /// The text.
    public var text: String
    /// The values of `%@`, `%d`, `%f`, `%K`, … in order.
    public var arguments: [PredicateArgument]
    /// The values of `$NAME` variables.
    public var variables: [String: PredicateArgument]
  }
}

extension Predicate: ExpressibleByStringLiteral {
  /// A predicate in `NSPredicate` format: `FetchRequest(entity: "Book", predicate: "price > 10")`.
  public init(stringLiteral text: String) { self = .format(text) }

  /// Every `NSPredicate`-format part of the predicate.
  var formats: [Format] {
    switch self {
    case .format(let text): return [Format(text: text, arguments: [], variables: [:])]
    case .formatted(let format): return [format]
    case .and(let parts), .or(let parts): return parts.flatMap(\.formats)
    case .not(let inner): return inner.formats
    default: return []
    }
  }
}
