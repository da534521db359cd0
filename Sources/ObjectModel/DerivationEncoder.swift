import PropertyList

/// Encodes a derived attribute's expression, in the syntax Xcode writes (`pages.@count`,
/// `author.name`, `now()`, `lowercase:(title)`), as the archived `NSExpression` objects Core
/// Data keeps in a compiled model; ``ExpressionRenderer`` renders them back to the same text.
///
/// A key path is an `NSKeyPathExpression` on `SELF`; an aggregate (`.@count`, `.@sum`, `.@max`,
/// `.@min`, `.@avg`) and a function are `NSFunctionExpression`s whose operand names
/// `_NSPredicateUtilities`, as the fixtures' caches hold them. Text that does not parse is kept
/// whole as a key path, so it still renders unchanged.
enum DerivationEncoder {
  typealias Value = KeyedArchiveBuilder.Value

  static let aggregates = [
    "@count": "count:", "@sum": "sum:", "@max": "max:", "@min": "min:", "@avg": "average:",
  ]

  static func encode(_ text: String, into builder: inout KeyedArchiveBuilder) -> Value {
    var parser = Parser(text: Array(text.utf8))
    if let expression = parser.expression(depth: 0), parser.atEnd {
      return expression.encode(into: &builder)
    }
    return Expression.keyPath(text.trimmingSpaces).encode(into: &builder)
  }

  indirect enum Expression {
    case keyPath(String)
    case this
    case constant(PropertyListValue)
    case function(selector: String, arguments: [Expression])

    func encode(into builder: inout KeyedArchiveBuilder) -> Value {
      switch self {
      case .this:
        return .object(Self.object(["NSSelfExpression"], type: 1, into: &builder))
      case .constant(let value):
        let object = Self.object(["NSConstantValueExpression"], type: 0, into: &builder)
        builder.set(.value(.plain(value)), forKey: "NSConstantValue", of: object)
        return .object(object)
      case .keyPath(let path):
        let specifier = Self.object(["NSKeyPathSpecifierExpression"], type: 10, into: &builder)
        builder.set(.value(.string(path)), forKey: "NSKeyPath", of: specifier)
        let object = Self.object(["NSKeyPathExpression"], type: 3, into: &builder)
        builder.set(.value(Expression.this.encode(into: &builder)), forKey: "NSOperand", of: object)
        builder.set(
          .value(.string(path.contains(".") ? "valueForKeyPath:" : "valueForKey:")),
          forKey: "NSSelectorName", of: object)
        builder.set(
          .value(
            builder.array(
              [.object(specifier)], classes: ["NSMutableArray", "NSArray", "NSObject"])),
          forKey: "NSArguments", of: object)
        return .object(object)
      case .function(let selector, let arguments):
        let object = Self.object(["NSFunctionExpression"], type: 4, into: &builder)
        let utilities = Self.object(["NSConstantValueExpression"], type: 0, into: &builder)
        builder.set(
          .value(.string("_NSPredicateUtilities")), forKey: "NSConstantValueClassName",
          of: utilities)
        builder.set(.value(.object(utilities)), forKey: "NSOperand", of: object)
        builder.set(.value(.string(selector)), forKey: "NSSelectorName", of: object)
        var values: [Value] = []
        for argument in arguments { values.append(argument.encode(into: &builder)) }
        builder.set(.value(builder.array(values)), forKey: "NSArguments", of: object)
        return .object(object)
      }
    }

    private static func object(
      _ classes: [String], type: Int64, into builder: inout KeyedArchiveBuilder
    ) -> KeyedArchiveBuilder.ObjectID {
      let object = builder.makeObject(classes: classes + ["NSExpression", "NSObject"])
      builder.set(.inline(.integer(type)), forKey: "NSExpressionType", of: object)
      return object
    }
  }

  /// expression := function | key path [ "." aggregate ] | number | string | SELF
  struct Parser {
    let text: [UInt8]
    var position = 0

    var atEnd: Bool {
      mutating get {
        skipSpaces()
        return position == text.count
      }
    }

    mutating func skipSpaces() {
      while position < text.count, text[position] == 0x20 { position += 1 }
    }

    mutating func expression(depth: Int) -> Expression? {
      guard depth < 32 else { return nil }
      skipSpaces()
      guard position < text.count else { return nil }
      let first = text[position]
      if first == UInt8(ascii: "\"") {
        guard let end = text[(position + 1)...].firstIndex(of: first) else { return nil }
        let string = String(decoding: text[(position + 1)..<end], as: UTF8.self)
        position = end + 1
        return .constant(.string(string))
      }
      if first == UInt8(ascii: "-") || (0x30...0x39).contains(first) {
        let start = position
        position += 1
        while position < text.count,
          (0x30...0x39).contains(text[position]) || text[position] == UInt8(ascii: ".")
        {
          position += 1
        }
        let literal = String(decoding: text[start..<position], as: UTF8.self)
        if let integer = Int64(literal) { return .constant(.integer(integer)) }
        return Double(literal).map { .constant(.real($0)) }
      }
      var path: [String] = []
      while let name = identifier() {
        path.append(name)
        guard position < text.count, text[position] == UInt8(ascii: ".") else { break }
        position += 1
      }
      guard !path.isEmpty else { return nil }
      if path.count == 1, position < text.count, text[position] == UInt8(ascii: "(") {
        position += 1
        var arguments: [Expression] = []
        skipSpaces()
        if position < text.count, text[position] == UInt8(ascii: ")") {
          position += 1
          return .function(selector: path[0], arguments: [])
        }
        while true {
          guard let argument = expression(depth: depth + 1) else { return nil }
          arguments.append(argument)
          skipSpaces()
          guard position < text.count else { return nil }
          if text[position] == UInt8(ascii: ",") {
            position += 1
          } else if text[position] == UInt8(ascii: ")") {
            position += 1
            break
          } else {
            return nil
          }
        }
        return .function(selector: path[0] + ":", arguments: arguments)
      }
      if path == ["SELF"] { return .this }
      if let last = path.last, let selector = DerivationEncoder.aggregates[last], path.count > 1 {
        return .function(
          selector: selector, arguments: [.keyPath(path.dropLast().joined(separator: "."))])
      }
      guard !path.contains(where: { $0.hasPrefix("@") }) else { return nil }
      return .keyPath(path.joined(separator: "."))
    }

    /// A name, or `@` and a name.
    mutating func identifier() -> String? {
      let start = position
      if position < text.count, text[position] == UInt8(ascii: "@") { position += 1 }
      while position < text.count,
        text[position] == UInt8(ascii: "_") || (0x30...0x39).contains(text[position])
          || (0x41...0x5A).contains(text[position]) || (0x61...0x7A).contains(text[position])
      {
        position += 1
      }
      guard position > start, text[start..<position] != [UInt8(ascii: "@")] else {
        position = start
        return nil
      }
      return String(decoding: text[start..<position], as: UTF8.self)
    }
  }
}

extension String {
  fileprivate var trimmingSpaces: String {
    var text = Substring(self)
    while text.first == " " { text.removeFirst() }
    while text.last == " " { text.removeLast() }
    return String(text)
  }
}
