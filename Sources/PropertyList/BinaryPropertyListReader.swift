/// Reads a binary property list (`bplist00`), either whole (``decode()``) or object by object
/// (``kind(of:)``, ``arrayElements(of:)``, ``dictionaryEntries(of:)``, ``scalar(at:)``) for
/// callers that walk large lists without building a tree.
///
/// Malformed input is an error, never a crash or unbounded memory: every offset, count and
/// reference is checked against the buffer; reference cycles and nesting deeper than
/// ``maximumDepth`` are refused; shared containers are decoded once.
public struct BinaryPropertyListReader: Sendable {
  /// How deeply containers may nest in ``decode()``.
  public static let maximumDepth = 512

  /// The kind of an object in the table.
  public enum ObjectKind: Sendable, Equatable {
    /// A null, boolean, integer, real, date, data, string or UID.
    case scalar
    /// An array (or a set, read as an array) with this many elements.
    case array(count: Int)
    /// A dictionary with this many entries.
    case dictionary(count: Int)
  }

  private let bytes: [UInt8]
  private let offsetSize: Int
  /// The size in bytes of an object reference.
  let referenceSize: Int
  /// The number of objects in the table.
  public let objectCount: Int
  /// The index of the top object.
  public let topObject: Int
  private let tableOffset: Int

  /// Checks the header and trailer of `bytes`.
  /// - Throws: ``PropertyListError`` when the input is not a well-formed `bplist00`.
  public init(bytes: [UInt8]) throws(PropertyListError) {
    self.bytes = bytes
    let count = bytes.count
    guard count >= 8, bytes[0..<6].elementsEqual("bplist".utf8) else {
      throw PropertyListError(.notAPropertyList, "not a binary property list (no bplist header)", offset: 0)
    }
    guard bytes[6] == UInt8(ascii: "0") else {
      throw PropertyListError(
        .unsupportedValue, "binary property list version \(Character(Unicode.Scalar(bytes[6])))\(Character(Unicode.Scalar(bytes[7]))) is not supported (only 00)",
        offset: 6)
    }
    guard count >= 8 + 32 else {
      throw PropertyListError(.truncated, "binary property list of \(count) bytes is too short for its trailer", offset: count)
    }
    let trailer = count - 32
    offsetSize = Int(bytes[trailer + 6])
    referenceSize = Int(bytes[trailer + 7])
    let objects = Self.readUnsigned(bytes, at: trailer + 8, size: 8)
    let top = Self.readUnsigned(bytes, at: trailer + 16, size: 8)
    let table = Self.readUnsigned(bytes, at: trailer + 24, size: 8)
    guard [1, 2, 4, 8].contains(offsetSize), [1, 2, 4, 8].contains(referenceSize) else {
      throw PropertyListError(
        .invalidStructure, "trailer gives offset size \(offsetSize) and reference size \(referenceSize); each must be 1, 2, 4 or 8",
        offset: trailer + 6)
    }
    guard table >= 9, table <= UInt64(trailer) else {
      throw PropertyListError(
        .invalidStructure, "offset table at \(table) lies outside the object area 9..<\(trailer)", offset: trailer + 24)
    }
    guard objects >= 1, objects <= (UInt64(trailer) - table) / UInt64(offsetSize) else {
      throw PropertyListError(
        .invalidStructure, "trailer claims \(objects) objects; the offset table has room for \((UInt64(trailer) - table) / UInt64(offsetSize))",
        offset: trailer + 8)
    }
    guard referenceSize >= 8 || objects <= (UInt64(1) << UInt64(referenceSize * 8)) else {
      throw PropertyListError(
        .invalidStructure, "\(objects) objects cannot be addressed with \(referenceSize)-byte references",
        offset: trailer + 7)
    }
    guard top < objects else {
      throw PropertyListError(.invalidStructure, "top object \(top) is not among the \(objects) objects", offset: trailer + 16)
    }
    objectCount = Int(objects)
    topObject = Int(top)
    tableOffset = Int(table)
  }

  // MARK: Object access

  /// The byte offset of object `index`, checked to lie in the object area.
  func offset(of index: Int) throws(PropertyListError) -> Int {
    guard index >= 0, index < objectCount else {
      throw PropertyListError(.invalidStructure, "reference to object \(index) of \(objectCount)")
    }
    let value = Self.readUnsigned(bytes, at: tableOffset + index * offsetSize, size: offsetSize)
    guard value >= 8, value < UInt64(tableOffset) else {
      throw PropertyListError(
        .invalidStructure, "object \(index) has offset \(value), outside the object area 8..<\(tableOffset)",
        offset: tableOffset + index * offsetSize, location: "object \(index)")
    }
    return Int(value)
  }

  /// Reads a marker's count (inline nibble, or a following integer object).
  /// - Returns: the count and the offset of the payload.
  private func count(at offset: Int, marker: UInt8, index: Int) throws(PropertyListError) -> (Int, Int) {
    let nibble = Int(marker & 0x0F)
    if nibble != 0x0F { return (nibble, offset + 1) }
    guard offset + 2 <= tableOffset else { throw truncated(index, offset) }
    let intMarker = bytes[offset + 1]
    guard intMarker & 0xF0 == 0x10, intMarker & 0x0F <= 3 else {
      throw PropertyListError(
        .invalidStructure, "count of object \(index) is not an integer (marker 0x\(String(intMarker, radix: 16)))",
        offset: offset + 1, location: "object \(index)")
    }
    let size = 1 << Int(intMarker & 0x0F)
    guard offset + 2 + size <= tableOffset else { throw truncated(index, offset) }
    let value = Self.readUnsigned(bytes, at: offset + 2, size: size)
    guard value <= UInt64(tableOffset) else {
      throw PropertyListError(
        .invalidStructure, "object \(index) claims \(value) elements, more than the list's \(bytes.count) bytes",
        offset: offset, location: "object \(index)")
    }
    return (Int(value), offset + 2 + size)
  }

  private func truncated(_ index: Int, _ offset: Int) -> PropertyListError {
    PropertyListError(
      .truncated, "object \(index) runs past the end of the object area", offset: offset,
      location: "object \(index)")
  }

  /// The kind of object `index`, and for containers their size.
  public func kind(of index: Int) throws(PropertyListError) -> ObjectKind {
    let start = try offset(of: index)
    let marker = bytes[start]
    switch marker >> 4 {
    case 0xA, 0xC:
      let (n, payload) = try count(at: start, marker: marker, index: index)
      try checkRoom(payload, n * referenceSize, index)
      return .array(count: n)
    case 0xD:
      let (n, payload) = try count(at: start, marker: marker, index: index)
      try checkRoom(payload, 2 * n * referenceSize, index)
      return .dictionary(count: n)
    default:
      return .scalar
    }
  }

  private func checkRoom(_ start: Int, _ length: Int, _ index: Int) throws(PropertyListError) {
    guard length >= 0, start <= tableOffset, length <= tableOffset - start else {
      throw truncated(index, start)
    }
  }

  private func reference(at offset: Int) throws(PropertyListError) -> Int {
    let value = Self.readUnsigned(bytes, at: offset, size: referenceSize)
    guard value < UInt64(objectCount) else {
      throw PropertyListError(
        .invalidStructure, "reference to object \(value) of \(objectCount)", offset: offset)
    }
    return Int(value)
  }

  /// The object indices of the elements of array `index`.
  public func arrayElements(of index: Int) throws(PropertyListError) -> [Int] {
    let start = try offset(of: index)
    let marker = bytes[start]
    guard marker >> 4 == 0xA || marker >> 4 == 0xC else {
      throw PropertyListError(.invalidStructure, "object \(index) is not an array", offset: start, location: "object \(index)")
    }
    let (n, payload) = try count(at: start, marker: marker, index: index)
    try checkRoom(payload, n * referenceSize, index)
    var result: [Int] = []
    result.reserveCapacity(n)
    for i in 0..<n { result.append(try reference(at: payload + i * referenceSize)) }
    return result
  }

  /// The object indices of the keys and values of dictionary `index`.
  public func dictionaryEntries(of index: Int) throws(PropertyListError) -> [(key: Int, value: Int)] {
    let start = try offset(of: index)
    let marker = bytes[start]
    guard marker >> 4 == 0xD else {
      throw PropertyListError(.invalidStructure, "object \(index) is not a dictionary", offset: start, location: "object \(index)")
    }
    let (n, payload) = try count(at: start, marker: marker, index: index)
    try checkRoom(payload, 2 * n * referenceSize, index)
    var result: [(key: Int, value: Int)] = []
    result.reserveCapacity(n)
    for i in 0..<n {
      result.append(
        (try reference(at: payload + i * referenceSize),
         try reference(at: payload + (n + i) * referenceSize)))
    }
    return result
  }

  /// Object `index` as a value; it must not be a container.
  public func scalar(at index: Int) throws(PropertyListError) -> PropertyListValue {
    let start = try offset(of: index)
    let marker = bytes[start]
    let location = "object \(index)"
    switch marker >> 4 {
    case 0x0:
      switch marker {
      case 0x00: return .null
      case 0x08: return .bool(false)
      case 0x09: return .bool(true)
      default: break
      }
    case 0x1:
      let sizeLog = Int(marker & 0x0F)
      guard sizeLog <= 4 else { break }
      let size = 1 << sizeLog
      try checkRoom(start + 1, size, index)
      if size <= 4 { return .integer(Int64(Self.readUnsigned(bytes, at: start + 1, size: size))) }
      if size == 8 {
        return .integer(Int64(bitPattern: Self.readUnsigned(bytes, at: start + 1, size: 8)))
      }
      // 16 bytes: a 128-bit signed integer, as written for values beyond Int64.
      let high = Self.readUnsigned(bytes, at: start + 1, size: 8)
      let low = Self.readUnsigned(bytes, at: start + 9, size: 8)
      let isSignExtension =
        (high == 0 && low >> 63 == 0) || (high == UInt64.max && low >> 63 == 1)
      guard isSignExtension else {
        throw PropertyListError(
          .unsupportedValue, "integer does not fit in 64 signed bits", offset: start, location: location)
      }
      return .integer(Int64(bitPattern: low))
    case 0x2:
      switch marker & 0x0F {
      case 2:
        try checkRoom(start + 1, 4, index)
        let bits = UInt32(Self.readUnsigned(bytes, at: start + 1, size: 4))
        return .real(Double(Float(bitPattern: bits)))
      case 3:
        try checkRoom(start + 1, 8, index)
        return .real(Double(bitPattern: Self.readUnsigned(bytes, at: start + 1, size: 8)))
      default: break
      }
    case 0x3:
      guard marker == 0x33 else { break }
      try checkRoom(start + 1, 8, index)
      return .date(
        PropertyListDate(
          secondsSinceReferenceDate: Double(bitPattern: Self.readUnsigned(bytes, at: start + 1, size: 8))))
    case 0x4:
      let (n, payload) = try count(at: start, marker: marker, index: index)
      try checkRoom(payload, n, index)
      return .data(Array(bytes[payload..<(payload + n)]))
    case 0x5, 0x6:
      return .string(try string(at: index))
    case 0x8:
      let size = Int(marker & 0x0F) + 1
      guard size <= 8 else { break }
      try checkRoom(start + 1, size, index)
      return .uid(Self.readUnsigned(bytes, at: start + 1, size: size))
    case 0xA, 0xC, 0xD:
      throw PropertyListError(.invalidStructure, "object \(index) is a container, not a scalar", offset: start, location: location)
    default: break
    }
    throw PropertyListError(
      .invalidStructure, "unknown object marker 0x\(String(marker, radix: 16))", offset: start, location: location)
  }

  /// Object `index` as a string (ASCII or UTF-16).
  public func string(at index: Int) throws(PropertyListError) -> String {
    let start = try offset(of: index)
    let marker = bytes[start]
    let location = "object \(index)"
    switch marker >> 4 {
    case 0x5:
      let (n, payload) = try count(at: start, marker: marker, index: index)
      try checkRoom(payload, n, index)
      return try bytes.withUnsafeBufferPointer { buffer throws(PropertyListError) in
        let slice = UnsafeBufferPointer(rebasing: buffer[payload..<(payload + n)])
        var combined: UInt8 = 0
        for byte in slice { combined |= byte }
        guard combined < 0x80 else {
          throw PropertyListError(.invalidText, "ASCII string holds a byte above 0x7F", offset: payload, location: location)
        }
        return String(decoding: slice, as: UTF8.self)
      }
    case 0x6:
      let (n, payload) = try count(at: start, marker: marker, index: index)
      guard n <= (tableOffset - payload) / 2 else { throw truncated(index, payload) }
      var units: [UInt16] = []
      units.reserveCapacity(n)
      for i in 0..<n {
        units.append(UInt16(bytes[payload + 2 * i]) << 8 | UInt16(bytes[payload + 2 * i + 1]))
      }
      guard let text = String(validating: units, as: UTF16.self) else {
        throw PropertyListError(.invalidText, "UTF-16 string is not valid UTF-16", offset: payload, location: location)
      }
      return text
    default:
      throw PropertyListError(
        .invalidStructure, "object \(index) is not a string (marker 0x\(String(marker, radix: 16)))",
        offset: start, location: location)
    }
  }

  // MARK: Whole-tree decoding

  /// Decodes the whole list from its top object.
  public func decode() throws(PropertyListError) -> PropertyListValue {
    try value(at: topObject)
  }

  /// Decodes object `index` and everything below it.
  public func value(at index: Int) throws(PropertyListError) -> PropertyListValue {
    var state = DecodeState(objectCount: objectCount)
    return try decodeValue(index, depth: 0, state: &state)
  }

  private struct DecodeState {
    // Containers already decoded (shared subtrees are decoded once) and those being decoded
    // (meeting one again is a cycle).
    var done: [PropertyListValue?]
    var inProgress: [Bool]
    init(objectCount: Int) {
      done = Array(repeating: nil, count: objectCount)
      inProgress = Array(repeating: false, count: objectCount)
    }
  }

  private func decodeValue(_ index: Int, depth: Int, state: inout DecodeState) throws(PropertyListError)
    -> PropertyListValue
  {
    let kind = try kind(of: index)
    if case .scalar = kind { return try scalar(at: index) }
    if let done = state.done[index] { return done }
    guard depth < Self.maximumDepth else {
      throw PropertyListError(
        .nestingTooDeep(limit: Self.maximumDepth), "containers nest deeper than \(Self.maximumDepth) levels",
        location: "object \(index)")
    }
    guard !state.inProgress[index] else {
      throw PropertyListError(.referenceCycle, "object \(index) contains itself", location: "object \(index)")
    }
    state.inProgress[index] = true
    let result: PropertyListValue
    if case .dictionary = kind {
      var dictionary: [String: PropertyListValue] = [:]
      let entries = try dictionaryEntries(of: index)
      dictionary.reserveCapacity(entries.count)
      for (key, value) in entries {
        let keyText: String
        do {
          keyText = try string(at: key)
        } catch {
          throw PropertyListError(
            .invalidStructure, "dictionary key is not a string", offset: error.offset, location: "object \(index)")
        }
        dictionary[keyText] = try decodeValue(value, depth: depth + 1, state: &state)
      }
      result = .dictionary(dictionary)
    } else {
      var array: [PropertyListValue] = []
      let elements = try arrayElements(of: index)
      array.reserveCapacity(elements.count)
      for element in elements {
        array.append(try decodeValue(element, depth: depth + 1, state: &state))
      }
      result = .array(array)
    }
    state.inProgress[index] = false
    state.done[index] = result
    return result
  }

  @inline(__always)
  static func readUnsigned(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
    var value: UInt64 = 0
    for i in 0..<size { value = value << 8 | UInt64(bytes[offset + i]) }
    return value
  }
}

extension PropertyListValue {
  /// Decodes a binary property list (`bplist00`).
  /// - Throws: ``PropertyListError`` saying what is malformed and where.
  public init(binaryPropertyList bytes: [UInt8]) throws(PropertyListError) {
    self = try BinaryPropertyListReader(bytes: bytes).decode()
  }
}
