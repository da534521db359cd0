/// Reading and writing XML property lists (Apple's `PropertyList-1.0` DTD).
///
/// Dates: XML property lists hold UTC dates as `YYYY-MM-DDTHH:MM:SSZ`. Apple's readers and
/// Python's `plistlib` accept no fractional seconds, so the writer rounds dates **down to the
/// whole second** (the format does not allow more); the reader accepts fractional seconds when
/// present and keeps them. Binary property lists keep dates exactly.
public enum XMLPropertyList {
  /// Writes `value` as an XML property list (UTF-8, tab-indented, keys sorted).
  /// - Throws: ``PropertyListError`` when the value has no XML form (a null, a string with
  ///   control characters XML 1.0 cannot hold).
  public static func encode(_ value: PropertyListValue) throws(PropertyListError) -> [UInt8] {
    var out = """
      <?xml version="1.0" encoding="UTF-8"?>
      <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
      <plist version="1.0">

      """
    try write(value, indent: 0, path: "root", to: &out)
    out += "</plist>\n"
    return Array(out.utf8)
  }

  private static func write(
    _ value: PropertyListValue, indent: Int, path: String, to out: inout String
  ) throws(PropertyListError) {
    let tabs = String(repeating: "\t", count: indent)
    switch value {
    case .null:
      throw PropertyListError(
        .unsupportedValue, "XML property lists cannot hold a null", location: path)
    case .bool(let v): out += tabs + (v ? "<true/>" : "<false/>") + "\n"
    case .integer(let v): out += tabs + "<integer>\(v)</integer>\n"
    case .real(let v): out += tabs + "<real>\(realText(v))</real>\n"
    case .date(let v):
      out += tabs + "<date>\(ISO8601.format(v, fractionalSeconds: false))</date>\n"
    case .data(let v):
      out += tabs + "<data>\n"
      out += tabs + Base64.encode(v, lineLength: 68, lineSeparator: "\n" + tabs) + "\n"
      out += tabs + "</data>\n"
    case .string(let v): out += tabs + "<string>\(try escaped(v, path: path))</string>\n"
    case .uid(let v):
      out +=
        tabs
        + "<dict>\n\(tabs)\t<key>CF$UID</key>\n\(tabs)\t<integer>\(v)</integer>\n\(tabs)</dict>\n"
    case .array(let elements):
      if elements.isEmpty {
        out += tabs + "<array/>\n"
        return
      }
      out += tabs + "<array>\n"
      for (i, element) in elements.enumerated() {
        try write(element, indent: indent + 1, path: "\(path)[\(i)]", to: &out)
      }
      out += tabs + "</array>\n"
    case .dictionary(let entries):
      if entries.isEmpty {
        out += tabs + "<dict/>\n"
        return
      }
      out += tabs + "<dict>\n"
      for key in entries.keys.sorted() {
        out += tabs + "\t<key>\(try escaped(key, path: path))</key>\n"
        try write(entries[key]!, indent: indent + 1, path: "\(path).\(key)", to: &out)
      }
      out += tabs + "</dict>\n"
    }
  }

  static func realText(_ value: Double) -> String {
    if value.isNaN { return "nan" }
    if value.isInfinite { return value < 0 ? "-inf" : "+inf" }
    return "\(value)"
  }

  private static func escaped(_ text: String, path: String) throws(PropertyListError) -> String {
    var result = ""
    result.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\t", "\n", "\r": result.unicodeScalars.append(scalar)
      default:
        if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
          throw PropertyListError(
            .unsupportedValue,
            "string holds U+\(String(scalar.value, radix: 16, uppercase: true)), which XML 1.0 cannot represent",
            location: path)
        }
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// Reads an XML property list.
  /// - Throws: ``PropertyListError`` naming the line and what is wrong.
  public static func decode(_ bytes: [UInt8]) throws(PropertyListError) -> PropertyListValue {
    let root = try SimpleXML.parse(bytes)
    guard root.name == "plist" else {
      throw PropertyListError(
        .invalidXML, "root element is <\(root.name)>, not <plist>", location: "line \(root.line)")
    }
    let values = root.elements
    guard values.count == 1 else {
      throw PropertyListError(
        .invalidXML, "<plist> holds \(values.count) values; it must hold exactly one",
        location: "line \(root.line)")
    }
    return try value(values[0])
  }

  private static func value(_ element: SimpleXML.Element) throws(PropertyListError)
    -> PropertyListValue
  {
    let location = "line \(element.line)"
    func bad(_ what: String) -> PropertyListError {
      PropertyListError(.invalidXML, what, location: location)
    }
    switch element.name {
    case "true": return .bool(true)
    case "false": return .bool(false)
    case "string": return .string(element.text)
    case "integer":
      let text = element.text.trimmingWhitespace
      if let v = Int64(text) { return .integer(v) }
      if text.hasPrefix("0x") || text.hasPrefix("0X"), let v = Int64(text.dropFirst(2), radix: 16) {
        return .integer(v)
      }
      if text.hasPrefix("-0x") || text.hasPrefix("-0X"), let v = Int64(text.dropFirst(3), radix: 16)
      {
        return .integer(-v)
      }
      throw bad("<integer> '\(text)' is not a 64-bit integer")
    case "real":
      let text = element.text.trimmingWhitespace
      switch text.lowercased() {
      case "nan": return .real(.nan)
      case "inf", "+inf", "infinity", "+infinity": return .real(.infinity)
      case "-inf", "-infinity": return .real(-.infinity)
      default:
        guard let v = Double(text) else { throw bad("<real> '\(text)' is not a number") }
        return .real(v)
      }
    case "date":
      let text = element.text.trimmingWhitespace
      guard let date = ISO8601.parse(text) else {
        throw bad("<date> '\(text)' is not an ISO 8601 UTC date")
      }
      return .date(date)
    case "data":
      guard let bytes = Base64.decode(element.text) else { throw bad("<data> is not valid base64") }
      return .data(bytes)
    case "array":
      var elements: [PropertyListValue] = []
      for child in element.elements { elements.append(try value(child)) }
      return .array(elements)
    case "dict":
      let children = element.elements
      guard children.count % 2 == 0 else { throw bad("<dict> has a key without a value") }
      var entries: [String: PropertyListValue] = [:]
      var i = 0
      while i < children.count {
        guard children[i].name == "key" else {
          throw bad("<dict> expected <key>, found <\(children[i].name)> (line \(children[i].line))")
        }
        entries[children[i].text] = try value(children[i + 1])
        i += 2
      }
      if entries.count == 1, case .integer(let uid)? = entries["CF$UID"], uid >= 0 {
        return .uid(UInt64(uid))
      }
      return .dictionary(entries)
    default:
      throw bad("<\(element.name)> is not a property-list element")
    }
  }
}

extension String {
  var trimmingWhitespace: String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
    guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
    let last = lastIndex(where: { !isSpace($0) })!
    return String(self[first...last])
  }
}

extension PropertyListValue {
  /// Decodes a property list in either format, binary (`bplist00`) or XML, told apart by its
  /// first bytes.
  public init(propertyList bytes: [UInt8]) throws(PropertyListError) {
    if bytes.starts(with: Array("bplist".utf8)) {
      self = try PropertyListValue(binaryPropertyList: bytes)
    } else {
      self = try XMLPropertyList.decode(bytes)
    }
  }
}
