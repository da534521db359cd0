import Foundation

/// A value given to a predicate format's placeholder (`%@`, `%d`, `%f`, `%K`, …) or
/// substitution variable (`$NAME`), kept as a value: it is put into the parsed predicate, never
/// into its text, so a title with an apostrophe is a title, not a syntax error or a way in.
public enum PredicateArgument: Sendable, Hashable {
  /// `nil`.
  case null
  /// A boolean.
  case bool(Bool)
  /// An integer.
  case integer(Int64)
  /// A real number.
  case real(Double)
  /// A string (for `%K`, a key path).
  case string(String)
  /// A date, as seconds since 2001-01-01.
  case date(Double)
  /// An object (`author == %@`): a to-one relationship pointing at it, a to-many holding it.
  case object(ObjectReference)
  /// Values for `IN %@` (an array or a set).
  case list([PredicateArgument])
}

/// A Swift value that a predicate format takes as an argument (turned into a
/// ``PredicateArgument`` at once, so an object of a context may be one).
public protocol PredicateArgumentConvertible {
  /// The value as a predicate argument.
  var predicateArgument: PredicateArgument { get }
}

extension PredicateArgument: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { self }
}

extension String: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { .string(self) }
}

extension Substring: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { .string(String(self)) }
}

extension Bool: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { .bool(self) }
}

extension Int: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { .integer(Int64(self)) }
}

extension Int64: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { .integer(self) }
}

extension Int32: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { .integer(Int64(self)) }
}

extension Int16: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { .integer(Int64(self)) }
}

extension Double: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { .real(self) }
}

extension Float: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { .real(Double(self)) }
}

extension Date: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { .date(timeIntervalSinceReferenceDate) }
}

extension UUID: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { .string(uuidString) }
}

extension URL: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { .string(absoluteString) }
}

extension ManagedObject: PredicateArgumentConvertible {
  /// The object as a predicate argument (`author == %@`), by its reference.
  public var predicateArgument: PredicateArgument { .object(reference) }
}

extension ObjectReference: PredicateArgumentConvertible {
  /// The object as a predicate argument.
  public var predicateArgument: PredicateArgument { .object(self) }
}

extension Array: PredicateArgumentConvertible where Element: PredicateArgumentConvertible {
  /// The values as a predicate argument, for `IN %@`.
  public var predicateArgument: PredicateArgument { .list(map(\.predicateArgument)) }
}

extension Set: PredicateArgumentConvertible where Element: PredicateArgumentConvertible {
  /// The values as a predicate argument, for `IN %@` (their order does not matter there).
  public var predicateArgument: PredicateArgument { .list(map(\.predicateArgument)) }
}

extension Optional: PredicateArgumentConvertible where Wrapped: PredicateArgumentConvertible {
  /// The value as a predicate argument.
  public var predicateArgument: PredicateArgument { self?.predicateArgument ?? .null }
}

extension Predicate {
  /// A predicate in `NSPredicate` format with its placeholders' values, in order: `%@` (any
  /// value: a string, number, date, `nil`, an object, or an array or set of values for
  /// `IN %@`), `%d`, `%i`, `%ld`, `%lld` (integers), `%f` (reals), `%K` (a key path, given as
  /// a string). The values never pass through the text:
  ///
  /// ```swift
  /// Predicate(format: "%K == %@ AND edition > %d", "title", "O'Brien's Tale", 2)
  /// Predicate(format: "author == %@ AND ANY tags IN %@", ann, [classic, scifi])
  /// Predicate(format: "title IN %@", ["Dune", "Emma"])
  /// ```
  ///
  /// The format is checked when the fetch runs: a placeholder without a value, a value without
  /// a placeholder, or a `%K` given anything but a key path is an error there.
  public init(format: String, _ arguments: any PredicateArgumentConvertible...) {
    self = .formatted(
      Format(text: format, arguments: arguments.map(\.predicateArgument), variables: [:]))
  }

  /// The predicate with its `$NAME` substitution variables given values, as
  /// `NSPredicate.withSubstitutionVariables(_:)`; a variable left without a value is an error
  /// when the fetch runs.
  ///
  /// ```swift
  /// let template: Predicate = "title BEGINSWITH $PREFIX AND rating >= $LOW"
  /// let request = FetchRequest(
  ///   entity: "Book", predicate: template.withSubstitutionVariables(["PREFIX": "Du", "LOW": 3]))
  /// ```
  public func withSubstitutionVariables(_ variables: [String: any PredicateArgumentConvertible])
    -> Predicate
  {
    let values = variables.mapValues(\.predicateArgument)
    switch self {
    case .format(let text):
      return .formatted(Format(text: text, arguments: [], variables: values))
    case .formatted(var format):
      format.variables.merge(values) { _, new in new }
      return .formatted(format)
    case .and(let parts): return .and(parts.map { $0.withSubstitutionVariables(variables) })
    case .or(let parts): return .or(parts.map { $0.withSubstitutionVariables(variables) })
    case .not(let inner): return .not(inner.withSubstitutionVariables(variables))
    default: return self
    }
  }
}
