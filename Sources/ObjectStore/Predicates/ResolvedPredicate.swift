import Foundation
import ObjectModel

/// A predicate checked against a model, for one entity: key paths resolved to relationships
/// and an attribute, literals turned into values of the attribute's type.
indirect enum ResolvedPredicate: Sendable {
  case constant(Bool)
  case and([ResolvedPredicate])
  case or([ResolvedPredicate])
  case not(ResolvedPredicate)
  case test(Test)

  /// One relationship followed from `entity`.
  struct Hop: Sendable {
    var entity: String
    var relationship: RelationshipDescription
  }

  /// What a comparison looks at, from the fetched object.
  enum Target: Sendable {
    /// An attribute's value.
    case attribute(AttributeDescription)
    /// Where a to-one relationship points (`author == nil`, `author == %@`): the values are
    /// the primary keys of the objects compared with (nil: none).
    case toOne(RelationshipDescription)
    /// The object's own primary key, compared with objects given as arguments: a to-many's
    /// members (`ANY tags == %@`, `%@ IN tags`).
    case key
    /// How many objects a to-many relationship holds (`pages.@count`).
    case count(RelationshipDescription)
    /// An extended attribute, kept in the entity's bucket (`extended.color`): never in SQL,
    /// evaluated in memory on what the rest of the predicate let through.
    case extended(String)
  }

  /// The predicate with what SQL cannot test left out, where leaving it out only lets more
  /// rows through (a part of an `AND`); nil when nothing is left to narrow by.
  var sqlNarrowing: ResolvedPredicate? {
    switch self {
    case .constant: return self
    case .test(let test):
      if case .extended = test.target { return nil }
      return self
    case .and(let parts):
      let narrowed = parts.compactMap(\.sqlNarrowing)
      return narrowed.isEmpty ? nil : .and(narrowed)
    case .or, .not:
      return hasExtendedTest ? nil : self
    }
  }

  /// Whether a test on an extended attribute is anywhere inside.
  /// Whether a test follows a relationship (a key path, a to-one compared, a count).
  var followsRelationships: Bool {
    switch self {
    case .constant: return false
    case .test(let test):
      switch test.target {
      case .toOne, .count: return true
      case .attribute, .extended, .key: return !test.hops.isEmpty
      }
    case .and(let parts), .or(let parts): return parts.contains { $0.followsRelationships }
    case .not(let inner): return inner.followsRelationships
    }
  }

  var hasExtendedTest: Bool {
    switch self {
    case .constant: return false
    case .test(let test):
      if case .extended = test.target { return true }
      return false
    case .and(let parts), .or(let parts): return parts.contains { $0.hasExtendedTest }
    case .not(let inner): return inner.hasExtendedTest
    }
  }

  /// `[quantifier] path.target OPERATOR[options] values`.
  struct Test: Sendable {
    var hops: [Hop]
    /// The entity whose property `target` is.
    var entity: String
    var target: Target
    /// How the to-many hops' values combine: any (also when none is written), all, none.
    var quantifier: PredicateSyntax.Quantifier
    var op: PredicateSyntax.Operator
    var options: PredicateSyntax.Options
    /// One value, or the list of `IN` and `BETWEEN`; nil stands for `nil`.
    var values: [AttributeValue?]
    /// The compiled pattern of `LIKE` and `MATCHES`.
    var pattern: StringPattern?

    var crossesToMany: Bool { hops.contains { $0.relationship.isToMany } }
  }

  /// Checks `syntax` against `model` for objects of `entity`.
  static func resolve(_ syntax: PredicateSyntax, text: String, model: ObjectModel, entity: String)
    throws(PredicateFormatError) -> ResolvedPredicate
  {
    var resolver = Resolver(text: text, model: model, entity: entity)
    return try resolver.resolve(syntax)
  }

  private struct Resolver {
    let text: String
    let model: ObjectModel
    let entity: String

    func fail(_ position: Int, _ message: String) -> PredicateFormatError {
      PredicateFormatError(text: text, position: position, message: message)
    }

    mutating func resolve(_ syntax: PredicateSyntax) throws(PredicateFormatError)
      -> ResolvedPredicate
    {
      switch syntax {
      case .constant(let value): return .constant(value)
      case .and(let parts):
        var resolved: [ResolvedPredicate] = []
        for part in parts { resolved.append(try resolve(part)) }
        return .and(resolved)
      case .or(let parts):
        var resolved: [ResolvedPredicate] = []
        for part in parts { resolved.append(try resolve(part)) }
        return .or(resolved)
      case .not(let inner): return .not(try resolve(inner))
      case .comparison(let comparison): return .test(try test(comparison))
      }
    }

    func test(_ comparison: PredicateSyntax.Comparison) throws(PredicateFormatError) -> Test {
      var comparison = comparison
      // `5 < pages.@count` reads as `pages.@count > 5`.
      if case .keyPath = comparison.right, !isKeyPath(comparison.left) {
        // `%@ IN tags` reads as `tags CONTAINS %@`.
        let flipped: [PredicateSyntax.Operator: PredicateSyntax.Operator] = [
          .equal: .equal, .notEqual: .notEqual, .less: .greater, .lessOrEqual: .greaterOrEqual,
          .greater: .less, .greaterOrEqual: .lessOrEqual, .in: .contains,
        ]
        guard let op = flipped[comparison.op] else {
          throw fail(
            comparison.left.position,
            "a key is expected on the left of \(comparison.op.rawValue)")
        }
        (comparison.left, comparison.right, comparison.op) = (comparison.right, comparison.left, op)
      }
      guard case .keyPath(let keys, let count, let keyPosition) = comparison.left else {
        throw fail(comparison.left.position, "a key is expected")
      }
      if case .keyPath = comparison.right {
        throw fail(
          comparison.right.position,
          "a value is expected (comparing two keys is not supported)")
      }
      // Follow the relationships.
      var current = entity
      var hops: [Hop] = []
      for (index, key) in keys.enumerated() {
        let last = index == keys.count - 1
        // A key path into a composite (`author.person`, `author.origin.city`) names one of its
        // elements, as Core Data's namespaced key paths do.
        if !last, !count,
          let element = model.attributes(of: current).first(where: {
            $0.isCompositeElement && $0.name == keys[index...].joined(separator: ".")
          })
        {
          guard !element.isTransient else {
            throw fail(
              keyPosition, "\(current).\(element.name) is transient: the store keeps no value")
          }
          return try check(
            comparison, hops: hops, entity: current, target: .attribute(element),
            type: element.type, name: "\(current).\(element.name)")
        }
        if key == "extended" && index == keys.count - 2 && !count
          && model.relationships(of: current).first(where: { $0.name == key }) == nil
          && model.attributes(of: current).first(where: { $0.name == key }) == nil
        {
          guard ExtendedAttributes.bucket(of: current, in: model) != nil else {
            throw fail(keyPosition, "\(current) keeps no extended attributes (no bucket)")
          }
          return try checkExtended(
            comparison, hops: hops, entity: current, key: keys[keys.count - 1])
        }
        if let relationship = model.relationships(of: current).first(where: { $0.name == key }) {
          if last && !count, relationship.isToMany, givesObjects(comparison.right),
            [.equal, .notEqual, .in, .contains].contains(comparison.op)
          {
            // A to-many compared with objects: its members' own keys (check refuses IN with
            // one object, as for any value).
            var membership = comparison
            if membership.op == .contains { membership.op = .equal }
            if case .list = membership.right, membership.op == .equal { membership.op = .in }
            return try check(
              membership, hops: hops + [Hop(entity: current, relationship: relationship)],
              entity: relationship.destination, target: .key, type: nil,
              name: "\(current).\(key)")
          }
          if last && !count {
            guard !relationship.isToMany else {
              throw fail(
                keyPosition,
                "\(current).\(key) is a to-many relationship: compare \(key).@count or a key of its objects"
              )
            }
            return try check(
              comparison, hops: hops, entity: current, target: .toOne(relationship),
              type: nil, name: "\(current).\(key)")
          }
          if last {
            guard relationship.isToMany else {
              throw fail(
                keyPosition, "@count needs a to-many relationship; \(current).\(key) is to-one")
            }
            return try check(
              comparison, hops: hops, entity: current, target: .count(relationship),
              type: .integer64, name: "\(key).@count")
          }
          hops.append(Hop(entity: current, relationship: relationship))
          current = relationship.destination
          continue
        }
        if let attribute = model.attributes(of: current).first(where: { $0.name == key }) {
          guard last, !count else {
            throw fail(
              keyPosition,
              count
                ? "@count needs a to-many relationship; \(current).\(key) is an attribute"
                : "\(current).\(key) is an attribute; it has no keys of its own")
          }
          guard !attribute.isTransient else {
            throw fail(keyPosition, "\(current).\(key) is transient: the store keeps no value")
          }
          return try check(
            comparison, hops: hops, entity: current, target: .attribute(attribute),
            type: attribute.type, name: "\(current).\(key)")
        }
        let known =
          (model.attributes(of: current).map(\.name)
          + model.relationships(of: current).map(\.name)).sorted()
        throw fail(
          keyPosition,
          "\(current) has no key \(key) (its keys: \(known.joined(separator: ", ")))")
      }
      throw fail(keyPosition, "a key is expected")
    }

    /// Whether an operand gives objects: an object, or a list of objects (nils among them).
    func givesObjects(_ operand: PredicateSyntax.Operand) -> Bool {
      switch operand {
      case .literal(let literal, _): return isObject(literal)
      case .list(let items, _):
        return items.contains(where: isObject) && items.allSatisfy { $0 == .null || isObject($0) }
      default: return false
      }
    }

    func isObject(_ literal: PredicateSyntax.Literal) -> Bool {
      if case .object = literal { return true }
      return false
    }

    func isKeyPath(_ operand: PredicateSyntax.Operand) -> Bool {
      if case .keyPath = operand { return true }
      return false
    }

    func check(
      _ comparison: PredicateSyntax.Comparison, hops: [Hop], entity: String, target: Target,
      type: AttributeType?, name: String
    ) throws(PredicateFormatError) -> Test {
      let op = comparison.op
      let at = comparison.operatorPosition
      if comparison.quantifier != nil && !hops.contains(where: { $0.relationship.isToMany }) {
        throw fail(
          comparison.position,
          "\(comparison.quantifier!.rawValue) needs a key path through a to-many relationship")
      }
      // The literals.
      var literals: [PredicateSyntax.Literal]
      switch comparison.right {
      case .literal(let literal, _):
        guard op != .in && op != .between else {
          throw fail(comparison.right.position, "\(op.rawValue) takes a list: {…}")
        }
        literals = [literal]
      case .list(let items, let position):
        guard op == .in || op == .between else {
          throw fail(position, "a list fits IN and BETWEEN only")
        }
        if op == .between && items.count != 2 {
          throw fail(position, "BETWEEN takes two values: {low, high}")
        }
        literals = items
      case .keyPath:
        throw fail(comparison.right.position, "a value is expected")
      }
      let position = comparison.right.position
      // What the target allows.
      guard let type else {
        // A relationship: compared with objects (their keys) or nil, with ==, != or IN.
        guard op == .equal || op == .notEqual || op == .in,
          literals.allSatisfy({ $0 == .null || isObject($0) })
        else {
          throw fail(
            at,
            "\(name) is a relationship: it can only be compared with objects or nil (==, != or IN)"
          )
        }
        let destination: String
        switch target {
        case .toOne(let relationship): destination = relationship.destination
        default: destination = entity
        }
        let fitting = Set(model.hierarchy(from: destination).map(\.name))
        var values: [AttributeValue?] = []
        for literal in literals {
          guard case .object(let reference) = literal else {
            values.append(nil)
            continue
          }
          guard fitting.contains(reference.entity) else {
            throw fail(
              position,
              "\(reference) does not fit \(name), which holds \(destination) objects")
          }
          values.append(.integer(reference.primaryKey))
        }
        return Test(
          hops: hops, entity: entity, target: target, quantifier: comparison.quantifier ?? .any,
          op: op, options: [], values: values, pattern: nil)
      }
      let textual = type == .string || type == .uri
      if !comparison.options.isEmpty
        && !(textual && (op.isStringOperator || op == .equal || op == .notEqual || op == .in))
      {
        throw fail(at, "[c] and [d] apply to string comparisons; \(name) is \(type.rawValue)")
      }
      if op.isStringOperator && !textual {
        throw fail(at, "\(op.rawValue) needs a string; \(name) is \(type.rawValue)")
      }
      if (op.isOrdering || op == .between)
        && [.boolean, .binaryData, .uuid, .transformable, .undefined, .objectID].contains(type)
      {
        throw fail(at, "\(op.rawValue) does not order \(type.rawValue) values (\(name))")
      }
      var values: [AttributeValue?] = []
      for literal in literals {
        if literal == .null {
          guard op == .equal || op == .notEqual || op == .in else {
            throw fail(position, "nil can only be compared with == or !=")
          }
          values.append(nil)
          continue
        }
        guard let value = Self.value(literal, for: type) else {
          throw fail(
            position, "\(Self.describe(literal)) does not fit \(name), which is \(type.rawValue)")
        }
        values.append(value)
      }
      var pattern: StringPattern?
      if op == .like || op == .matches {
        guard case .string(let text)? = values.first else {
          throw fail(position, "\(op.rawValue) takes a string")
        }
        do {
          pattern = try StringPattern(
            op == .like ? .like(text) : .regex(text), options: comparison.options)
        } catch {
          throw fail(position, "not a valid pattern: \(error)")
        }
      }
      if op.isStringOperator, case .string = values.first ?? nil {
      } else if op.isStringOperator {
        throw fail(position, "\(op.rawValue) takes a string")
      }
      return Test(
        hops: hops, entity: entity, target: target, quantifier: comparison.quantifier ?? .any,
        op: op, options: comparison.options, values: values, pattern: pattern)
    }

    /// A test on an extended attribute: its values have no declared type, so a literal is
    /// taken as it is written (string, number, boolean, date).
    func checkExtended(
      _ comparison: PredicateSyntax.Comparison, hops: [Hop], entity: String, key: String
    ) throws(PredicateFormatError) -> Test {
      var literals: [PredicateSyntax.Literal]
      switch comparison.right {
      case .literal(let literal, _): literals = [literal]
      case .list(let items, _): literals = items
      case .keyPath: throw fail(comparison.right.position, "a value is expected")
      }
      if comparison.op == .between && literals.count != 2 {
        throw fail(comparison.right.position, "BETWEEN takes two values: {low, high}")
      }
      var values: [AttributeValue?] = []
      for literal in literals {
        switch literal {
        case .null: values.append(nil)
        case .bool(let v): values.append(.bool(v))
        case .integer(let v): values.append(.integer(v))
        case .real(let v): values.append(.double(v))
        case .string(let v): values.append(.string(v))
        case .date(let v): values.append(.date(v))
        case .object(let reference):
          throw fail(
            comparison.right.position,
            "extended.\(key) holds property-list values, not objects (\(reference))")
        }
      }
      var pattern: StringPattern?
      if comparison.op.isStringOperator {
        guard case .string(let text)? = values.first else {
          throw fail(comparison.right.position, "\(comparison.op.rawValue) takes a string")
        }
        if comparison.op == .like || comparison.op == .matches {
          do {
            pattern = try StringPattern(
              comparison.op == .like ? .like(text) : .regex(text), options: comparison.options)
          } catch {
            throw fail(comparison.right.position, "not a valid pattern: \(error)")
          }
        }
      }
      return Test(
        hops: hops, entity: entity, target: .extended(key),
        quantifier: comparison.quantifier ?? .any, op: comparison.op,
        options: comparison.options, values: values, pattern: pattern)
    }

    static func describe(_ literal: PredicateSyntax.Literal) -> String {
      switch literal {
      case .null: return "nil"
      case .bool(let v): return v ? "YES" : "NO"
      case .integer(let v): return "the number \(v)"
      case .real(let v): return "the number \(v)"
      case .string(let v): return "the string \"\(v)\""
      case .date: return "a date"
      case .object(let reference): return "the object \(reference)"
      }
    }

    /// The literal as a value of `type`, when it fits.
    static func value(_ literal: PredicateSyntax.Literal, for type: AttributeType)
      -> AttributeValue?
    {
      switch (type, literal) {
      case (.integer16, .integer(let v)), (.integer32, .integer(let v)),
        (.integer64, .integer(let v)):
        return .integer(v)
      case (.integer16, .real(let v)), (.integer32, .real(let v)), (.integer64, .real(let v)):
        return .double(v)
      case (.double, .integer(let v)), (.float, .integer(let v)), (.decimal, .integer(let v)):
        return .double(Double(v))
      case (.double, .real(let v)), (.float, .real(let v)), (.decimal, .real(let v)):
        return .double(v)
      case (.string, .string(let v)): return .string(v)
      case (.uri, .string(let v)): return .uri(v)
      case (.boolean, .bool(let v)): return .bool(v)
      case (.boolean, .integer(let v)) where v == 0 || v == 1: return .bool(v == 1)
      case (.date, .date(let v)): return .date(v)
      case (.date, .integer(let v)): return .date(Double(v))
      case (.date, .real(let v)): return .date(v)
      case (.date, .string(let v)): return PredicateParser.iso8601(v).map(AttributeValue.date)
      case (.uuid, .string(let v)): return AttributeValue.uuidBytes(v).map(AttributeValue.uuid)
      default: return nil
      }
    }
  }
}
