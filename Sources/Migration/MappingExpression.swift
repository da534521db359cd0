import PropertyList

/// An `NSExpression` of a Core Data mapping model, decoded from its keyed archive: the value
/// expressions of attribute and relationship mappings and the source expressions of entity
/// mappings.
///
/// Only the data is decoded; nothing is ever evaluated or called. The forms graphvault
/// migrates are recognised by ``sourceKeyPath`` and ``destinationInstances``; any other form
/// is refused by the hop that meets it, in the words of ``description``.
public indirect enum MappingExpression: Sendable, Equatable, CustomStringConvertible {
  /// A constant: a string, number, boolean or nil (`NSConstantValueExpression`).
  case constant(Constant)
  /// A variable: `$source`, `$manager`, `$entityPolicy` (`NSVariableExpression`).
  case variable(String)
  /// A key path applied to an operand (`$source.color`; `NSKeyPathExpression`).
  case keyPath(MappingExpression, String)
  /// A method called on an operand (`FUNCTION($manager, "selector", …)`;
  /// `NSFunctionExpression`).
  case function(MappingExpression, selector: String, arguments: [MappingExpression])
  /// A fetch request's expression, as entity mappings' source expressions are
  /// (`NSFetchRequestExpression`).
  case fetch(request: MappingExpression, context: MappingExpression)
  /// Any other kind of expression, by class name.
  case other(className: String)

  /// A constant's value.
  public enum Constant: Sendable, Equatable, CustomStringConvertible {
    /// `nil`.
    case null
    /// A string.
    case string(String)
    /// An integer or a boolean.
    case integer(Int64)
    /// A real number.
    case real(Double)

    /// The constant as Xcode shows it: strings quoted.
    public var description: String {
      switch self {
      case .null: return "nil"
      case .string(let text):
        return "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\""
      case .integer(let value): return String(value)
      case .real(let value): return String(value)
      }
    }
  }

  /// The key path when this is `$source.KEYPATH`.
  public var sourceKeyPath: String? {
    guard case .keyPath(.variable("source"), let path) = self else { return nil }
    return path
  }

  /// The call the mapping model compiler writes for a relationship:
  /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "M",
  /// $source.r)` (`byMapping` true, naming the entity mapping), or
  /// `…ForSourceRelationshipNamed:sourceInstances:` (false, naming the source relationship);
  /// with the key path read from the source.
  public var destinationInstances: (name: String, byMapping: Bool, sourceKeyPath: String)? {
    guard case .function(.variable("manager"), let selector, let arguments) = self,
      arguments.count == 2, case .constant(.string(let name)) = arguments[0],
      let path = arguments[1].sourceKeyPath
    else { return nil }
    switch selector {
    case "destinationInstancesForEntityMappingNamed:sourceInstances:":
      return (name, true, path)
    case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
      return (name, false, path)
    default: return nil
    }
  }

  /// The predicate of a source expression
  /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "E", "P"),
  /// $manager.sourceContext, NO)`, when it has that form.
  public var sourceFetch: (entity: String, predicate: String)? {
    guard case .fetch(let request, _) = self,
      case .function(
        .variable("manager"), "fetchRequestForSourceEntityNamed:predicateString:", let a) =
        request,
      a.count == 2, case .constant(.string(let entity)) = a[0],
      case .constant(.string(let predicate)) = a[1]
    else { return nil }
    return (entity, predicate)
  }

  /// The expression as Xcode's mapping model editor shows it.
  public var description: String {
    switch self {
    case .constant(let value): return value.description
    case .variable(let name): return "$" + name
    case .keyPath(let operand, let path): return "\(operand).\(path)"
    case .function(let operand, let selector, let arguments):
      return "FUNCTION("
        + ([operand.description, "\"\(selector)\""] + arguments.map(\.description))
        .joined(separator: ", ") + ")"
    case .fetch(let request, let context): return "FETCH(\(request), \(context), NO)"
    case .other(let name): return "<\(name)>"
    }
  }

  /// Decodes an archived `NSExpression` (a keyed archive's bytes, as an `.xcmappingmodel`
  /// keeps them).
  /// - Throws: ``MigrationError`` (``MigrationError/Kind/refused``) when the bytes are not a
  ///   keyed archive of an expression.
  public static func decode(archive bytes: [UInt8]) throws(MigrationError) -> MappingExpression {
    do {
      let archive = try KeyedArchive(bytes: bytes)
      return try decode(archive.rootObject(), depth: 0)
    } catch let error as MigrationError {
      throw error
    } catch {
      throw MigrationError(.refused, "an archived expression is malformed: \(error)")
    }
  }

  /// The deepest expression decoded; deeper ones are refused (an archive is untrusted input).
  static let maximumDepth = 64

  /// Decodes an expression object of a keyed archive.
  static func decode(_ object: KeyedArchiveObject, depth: Int) throws -> MappingExpression {
    guard depth < maximumDepth else {
      throw MigrationError(.refused, "an archived expression nests deeper than \(maximumDepth)")
    }
    func operand(_ key: String) throws -> MappingExpression {
      guard let nested = try object.object(forKey: key) else {
        throw MigrationError(
          .refused, "an archived \(object.className) lacks its \(key)")
      }
      return try decode(nested, depth: depth + 1)
    }
    switch object.className {
    case "NSConstantValueExpression":
      switch try object.value(forKey: "NSConstantValue") {
      case .null: return .constant(.null)
      case .string(let text): return .constant(.string(text))
      case .integer(let value): return .constant(.integer(value))
      case .bool(let flag): return .constant(.integer(flag ? 1 : 0))
      case .real(let value): return .constant(.real(value))
      case let other: return .other(className: "NSConstantValueExpression of \(other.kindName)")
      }
    case "NSVariableExpression":
      guard let name = try object.string(forKey: "NSVariable") else {
        throw MigrationError(.refused, "an archived variable expression has no name")
      }
      return .variable(name)
    case "NSKeyPathSpecifierExpression":
      guard let path = try object.string(forKey: "NSKeyPath") else {
        throw MigrationError(.refused, "an archived key path has no path")
      }
      return .constant(.string(path))
    case "NSKeyPathExpression", "NSFunctionExpression":
      let target = try operand("NSOperand")
      let selector = try object.string(forKey: "NSSelectorName") ?? ""
      var arguments: [MappingExpression] = []
      for argument in try object.value(forKey: "NSArguments").arrayValue ?? [] {
        guard let nested = argument.objectValue else {
          throw MigrationError(
            .refused, "an archived function has an argument that is not an expression")
        }
        arguments.append(try decode(nested, depth: depth + 1))
      }
      if selector == "valueForKeyPath:", arguments.count == 1,
        case .constant(.string(let path)) = arguments[0]
      {
        return .keyPath(target, path)
      }
      return .function(target, selector: selector, arguments: arguments)
    case "NSFetchRequestExpression":
      return .fetch(request: try operand("NSFRExpression"), context: try operand("NSMOCExpression"))
    default:
      return .other(className: object.className)
    }
  }
}
