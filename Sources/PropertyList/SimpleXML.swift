/// A small, strict XML reader: enough for property lists and Xcode's model files.
///
/// It reads elements, attributes, text, CDATA sections and character and predefined entity
/// references; it skips the XML declaration, processing instructions, comments and the
/// `DOCTYPE` (external entities are never loaded). Errors give the line and column.
public enum SimpleXML {
  /// An element with its attributes and children.
  public struct Element: Sendable, Equatable {
    /// The element's name.
    public var name: String
    /// The attributes, in document order.
    public var attributes: [(name: String, value: String)]
    /// The children, in document order.
    public var children: [Node]
    /// The 1-based line the element starts on.
    public var line: Int

    /// The value of attribute `name`, if present.
    public subscript(attribute name: String) -> String? {
      attributes.first { $0.name == name }?.value
    }

    /// The child elements, skipping text.
    public var elements: [Element] {
      children.compactMap { if case .element(let e) = $0 { return e } else { return nil } }
    }

    /// The child elements named `name`.
    public func elements(named name: String) -> [Element] {
      elements.filter { $0.name == name }
    }

    /// The concatenated text of the direct text children.
    public var text: String {
      children.map { if case .text(let t) = $0 { return t } else { return "" } }.joined()
    }

    /// Compares name, attributes and children.
    public static func == (lhs: Element, rhs: Element) -> Bool {
      lhs.name == rhs.name && lhs.children == rhs.children
        && lhs.attributes.elementsEqual(rhs.attributes) {
          $0.name == $1.name && $0.value == $1.value
        }
    }
  }

  /// A child of an element.
  public enum Node: Sendable, Equatable {
    /// A child element.
    case element(Element)
    /// Character data (entities resolved, CDATA included).
    case text(String)
  }

  /// How deeply elements may nest.
  public static let maximumDepth = 512

  /// Parses a document and returns its root element.
  /// - Throws: ``PropertyListError`` of kind ``PropertyListError/Kind/invalidXML`` with the line
  ///   and column.
  public static func parse(_ bytes: [UInt8]) throws(PropertyListError) -> Element {
    var parser = Parser(bytes: bytes)
    return try parser.document()
  }

  private struct Parser {
    let bytes: [UInt8]
    var index = 0
    // Newlines counted so far, up to `countedTo` (the index only moves forward).
    var countedTo = 0
    var linesBefore = 1

    init(bytes: [UInt8]) {
      self.bytes = bytes
      if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    func error(_ message: String, at position: Int? = nil) -> PropertyListError {
      let position = min(position ?? index, bytes.count)
      var line = 1
      var column = 1
      for byte in bytes[0..<position] {
        if byte == 0x0A {
          line += 1
          column = 1
        } else {
          column += 1
        }
      }
      return PropertyListError(
        .invalidXML, message, offset: position, location: "line \(line), column \(column)")
    }

    func peek(_ text: String) -> Bool {
      let utf8 = Array(text.utf8)
      return index + utf8.count <= bytes.count
        && bytes[index..<(index + utf8.count)].elementsEqual(utf8)
    }

    mutating func skip(until terminator: String) throws(PropertyListError) {
      let start = index
      while index < bytes.count {
        if peek(terminator) {
          index += terminator.utf8.count
          return
        }
        index += 1
      }
      throw error("unterminated construct (expected \(terminator))", at: start)
    }

    mutating func skipWhitespace() {
      while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    /// Skips the prolog's and epilog's declarations, comments and processing instructions.
    mutating func skipMisc() throws(PropertyListError) {
      while true {
        skipWhitespace()
        if peek("<?") {
          try skip(until: "?>")
        } else if peek("<!--") {
          try skip(until: "-->")
        } else if peek("<!DOCTYPE") {
          // The internal subset, if any, is bracketed; skip it without interpreting it.
          var depth = 0
          let start = index
          while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "[") { depth += 1 }
            if byte == UInt8(ascii: "]") { depth -= 1 }
            if byte == UInt8(ascii: ">") && depth <= 0 { break }
            if index == bytes.count { throw error("unterminated DOCTYPE", at: start) }
          }
        } else {
          return
        }
      }
    }

    mutating func document() throws(PropertyListError) -> Element {
      try skipMisc()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else {
        throw error("no root element")
      }
      let root = try element()
      try skipMisc()
      guard index == bytes.count else { throw error("content after the root element") }
      return root
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"),
        UInt8(ascii: "."), UInt8(ascii: ":"), 0x80...0xFF:
        return true
      default:
        return false
      }
    }

    mutating func name() throws(PropertyListError) -> String {
      let start = index
      while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
      guard index > start else { throw error("expected a name") }
      return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Parses an element starting at `<`, iteratively (no recursion), so nesting depth is
    /// bounded by ``maximumDepth`` rather than by the stack.
    mutating func element() throws(PropertyListError) -> Element {
      var stack: [Element] = []
      while true {
        // At "<": a start tag (the caller has consumed whitespace and text).
        index += 1
        let line = lineNumber()
        let tagName = try name()
        var attributes: [(name: String, value: String)] = []
        while true {
          skipWhitespace()
          guard index < bytes.count else { throw error("unterminated start tag <\(tagName)>") }
          if bytes[index] == UInt8(ascii: "/") || bytes[index] == UInt8(ascii: ">") { break }
          let attributeName = try name()
          skipWhitespace()
          guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
            throw error("attribute \(attributeName) has no value")
          }
          index += 1
          skipWhitespace()
          guard index < bytes.count, bytes[index] == 0x22 || bytes[index] == 0x27 else {
            throw error("attribute \(attributeName) value is not quoted")
          }
          let quote = bytes[index]
          index += 1
          let start = index
          while index < bytes.count, bytes[index] != quote {
            if bytes[index] == UInt8(ascii: "<") { throw error("'<' in attribute value") }
            index += 1
          }
          guard index < bytes.count else { throw error("unterminated attribute value", at: start) }
          let value = try resolveEntities(start..<index)
          index += 1
          attributes.append((attributeName, value))
        }
        var current = Element(name: tagName, attributes: attributes, children: [], line: line)
        if bytes[index] == UInt8(ascii: "/") {
          index += 1
          guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else {
            throw error("expected '>' after '/'")
          }
          index += 1
          // Empty element: attach it and continue with the parent's content.
          if stack.isEmpty { return current }
          stack[stack.count - 1].children.append(.element(current))
        } else {
          index += 1
          guard stack.count < SimpleXML.maximumDepth else {
            throw error("elements nest deeper than \(SimpleXML.maximumDepth) levels")
          }
          stack.append(current)
        }
        // Content until the next start tag, or end tags closing elements.
        while true {
          guard !stack.isEmpty else { preconditionFailure("unreachable") }
          try content(into: &stack[stack.count - 1])
          if peek("</") {
            index += 2
            let closing = try name()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else {
              throw error("malformed end tag </\(closing)")
            }
            index += 1
            current = stack.removeLast()
            guard closing == current.name else {
              throw error(
                "end tag </\(closing)> does not match <\(current.name)> (line \(current.line))")
            }
            if stack.isEmpty { return current }
            stack[stack.count - 1].children.append(.element(current))
          } else {
            break  // a start tag
          }
        }
      }
    }

    mutating func lineNumber() -> Int {
      for byte in bytes[countedTo..<index] where byte == 0x0A { linesBefore += 1 }
      countedTo = index
      return linesBefore
    }

    /// Reads text, CDATA, comments and processing instructions up to the next tag.
    mutating func content(into element: inout Element) throws(PropertyListError) {
      while true {
        guard index < bytes.count else { throw error("unterminated element <\(element.name)>") }
        if peek("<!--") {
          try skip(until: "-->")
        } else if peek("<![CDATA[") {
          index += 9
          let start = index
          try skip(until: "]]>")
          appendText(String(decoding: bytes[start..<(index - 3)], as: UTF8.self), to: &element)
        } else if peek("<?") {
          try skip(until: "?>")
        } else if bytes[index] == UInt8(ascii: "<") {
          return
        } else {
          let start = index
          while index < bytes.count, bytes[index] != UInt8(ascii: "<") { index += 1 }
          appendText(try resolveEntities(start..<index), to: &element)
        }
      }
    }

    func appendText(_ text: String, to element: inout Element) {
      if case .text(let previous) = element.children.last {
        element.children[element.children.count - 1] = .text(previous + text)
      } else {
        element.children.append(.text(text))
      }
    }

    func resolveEntities(_ range: Range<Int>) throws(PropertyListError) -> String {
      guard bytes[range].contains(UInt8(ascii: "&")) else {
        return try validated(bytes[range], at: range.lowerBound)
      }
      var output: [UInt8] = []
      output.reserveCapacity(range.count)
      var i = range.lowerBound
      while i < range.upperBound {
        let byte = bytes[i]
        guard byte == UInt8(ascii: "&") else {
          output.append(byte)
          i += 1
          continue
        }
        guard let semicolon = bytes[i..<range.upperBound].firstIndex(of: UInt8(ascii: ";")),
          semicolon - i <= 12
        else { throw error("unterminated entity reference", at: i) }
        let entity = String(decoding: bytes[(i + 1)..<semicolon], as: UTF8.self)
        switch entity {
        case "lt": output.append(UInt8(ascii: "<"))
        case "gt": output.append(UInt8(ascii: ">"))
        case "amp": output.append(UInt8(ascii: "&"))
        case "quot": output.append(UInt8(ascii: "\""))
        case "apos": output.append(UInt8(ascii: "'"))
        default:
          var scalarValue: UInt32?
          if entity.hasPrefix("#x") {
            scalarValue = UInt32(entity.dropFirst(2), radix: 16)
          } else if entity.hasPrefix("#") {
            scalarValue = UInt32(entity.dropFirst(1), radix: 10)
          }
          guard let value = scalarValue, let scalar = Unicode.Scalar(value) else {
            throw error("unknown entity &\(entity);", at: i)
          }
          output.append(contentsOf: String(Character(scalar)).utf8)
        }
        i = semicolon + 1
      }
      return try validated(output[...], at: range.lowerBound)
    }

    func validated(_ slice: ArraySlice<UInt8>, at position: Int) throws(PropertyListError) -> String
    {
      guard let text = String(validating: slice, as: UTF8.self) else {
        throw error("text is not valid UTF-8", at: position)
      }
      return text
    }
  }
}
