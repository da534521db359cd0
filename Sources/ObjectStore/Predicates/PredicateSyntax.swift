import ObjectModel

/// A parsed `NSPredicate` format string, before it is checked against a model.
indirect enum PredicateSyntax: Sendable, Equatable {
  case constant(Bool)
  case and([PredicateSyntax])
  case or([PredicateSyntax])
  case not(PredicateSyntax)
  case comparison(Comparison)

  /// `[ANY|ALL|NONE] left OPERATOR[options] right`.
  struct Comparison: Sendable, Equatable {
    var quantifier: Quantifier?
    var left: Operand
    var op: Operator
    var options: Options
    var right: Operand
    /// Where the comparison starts, and where its operator is.
    var position: Int
    var operatorPosition: Int
  }

  enum Quantifier: String, Sendable {
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
  }

  enum Operator: String, Sendable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case matches = "MATCHES"
    case `in` = "IN"
    case between = "BETWEEN"

    var isStringOperator: Bool {
      [.beginsWith, .endsWith, .contains, .like, .matches].contains(self)
    }

    var isOrdering: Bool { [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(self) }
  }

  struct Options: OptionSet, Sendable, Equatable {
    let rawValue: Int
    static let caseInsensitive = Options(rawValue: 1)
    static let diacriticInsensitive = Options(rawValue: 2)
  }

  enum Operand: Sendable, Equatable {
    /// `a.b.c`, optionally ending in `@count`.
    case keyPath([String], count: Bool, position: Int)
    case literal(Literal, position: Int)
    case list([Literal], position: Int)

    var position: Int {
      switch self {
      case .keyPath(_, _, let p), .literal(_, let p), .list(_, let p): return p
      }
    }
  }

  enum Literal: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case string(String)
    /// Seconds since 2001-01-01 (`CAST(…, "NSDate")`).
    case date(Double)
    /// An object given as an argument (`author == %@`).
    case object(ObjectReference)
  }
}
