/// Reads a binary property list (`bplist00`), either whole (``decode()``) or object by object
/// (``kind(of:)``, ``arrayElements(of:)``, ``dictionaryEntries(of:)``, ``scalar(at:)``) for
/// callers that walk large lists without building a tree.
///
/// Malformed input is an error, never a crash or unbounded memory: every offset, count and
/// reference is checked against the buffer; reference cycles and nesting deeper than
/// ``maximumDepth`` are refused; shared containers are decoded once. What a whole-tree decode
/// builds is bounded by the list's own size (``decodedSizeFactor``): an object referenced from
/// many places costs each time it is met, so a small list whose references repeat one large
/// string, or nest shared arrays, is refused instead of growing without bound.
public struct BinaryPropertyListReader: Sendable {
  /// How deeply containers may nest in ``decode()``.
  public static let maximumDepth = 512

  /// How many times its own size a list may take once decoded, counting each value met (a
  /// string or data by its bytes, every value and container element 16 bytes more), beyond
  /// ``decodedSizeAllowance``.
  public static let decodedSizeFactor = 16
  /// What any list may take once decoded, however small.
  public static let decodedSizeAllowance = 1 << 20

  /// The most a whole-tree decode of this list may take (see ``decodedSizeFactor``).
  public var decodedSizeBudget: Int {
    bytes.count * Self.decodedSizeFactor + Self.decodedSizeAllowance
  }

  /// What meeting `value` once costs against a decode budget, not counting what it contains:
  /// 16 bytes for the value, a string's or data's bytes, 16 per array element and 32 per
  /// dictionary entry (the contents cost again as they are met).
  @inline(__always)
  public static func decodedCost(of value: PropertyListValue) -> Int {
    switch value {
    case .string(let text): return 16 + text.utf8.count
    case .data(let data): return 16 + data.count
    case .array(let elements): return 16 + 16 * elements.count
    case .dictionary(let entries): return 16 + 32 * entries.count
    default: return 16
    }
  }

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
    // "bplist", byte by byte (a slice compared with a string's UTF-8 view is not free, and
    // this runs once per decoded bucket).
    guard count >= 8, bytes[0] == 0x62, bytes[1] == 0x70, bytes[2] == 0x6C, bytes[3] == 0x69,
      bytes[4] == 0x73, bytes[5] == 0x74
    else {
      throw PropertyListError(
        .notAPropertyList, "not a binary property list (no bplist header)", offset: 0)
    }
    guard bytes[6] == UInt8(ascii: "0") else {
      throw PropertyListError(
        .unsupportedValue,
        "binary property list version \(Character(Unicode.Scalar(bytes[6])))\(Character(Unicode.Scalar(bytes[7]))) is not supported (only 00)",
        offset: 6)
    }
    guard count >= 8 + 32 else {
      throw PropertyListError(
        .truncated, "binary property list of \(count) bytes is too short for its trailer",
        offset: count)
    }
    let trailer = count - 32
    offsetSize = Int(bytes[trailer + 6])
    referenceSize = Int(bytes[trailer + 7])
    let objects = Self.readUnsigned(bytes, at: trailer + 8, size: 8)
    let top = Self.readUnsigned(bytes, at: trailer + 16, size: 8)
    let table = Self.readUnsigned(bytes, at: trailer + 24, size: 8)
    // Any width from 1 to 8 bytes is legal: Apple's writer uses the fewest bytes that fit
    // (3 is common in large lists), and so does ours.
    guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
      throw PropertyListError(
        .invalidStructure,
        "trailer gives offset size \(offsetSize) and reference size \(referenceSize); each must be 1 to 8",
        offset: trailer + 6)
    }
    guard table >= 9, table <= UInt64(trailer) else {
      throw PropertyListError(
        .invalidStructure, "offset table at \(table) lies outside the object area 9..<\(trailer)",
        offset: trailer + 24)
    }
    guard objects >= 1, objects <= (UInt64(trailer) - table) / UInt64(offsetSize) else {
      throw PropertyListError(
        .invalidStructure,
        "trailer claims \(objects) objects; the offset table has room for \((UInt64(trailer) - table) / UInt64(offsetSize))",
        offset: trailer + 8)
    }
    guard referenceSize >= 8 || objects <= (UInt64(1) << UInt64(referenceSize * 8)) else {
      throw PropertyListError(
        .invalidStructure,
        "\(objects) objects cannot be addressed with \(referenceSize)-byte references",
        offset: trailer + 7)
    }
    guard top < objects else {
      throw PropertyListError(
        .invalidStructure, "top object \(top) is not among the \(objects) objects",
        offset: trailer + 16)
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
        .invalidStructure,
        "object \(index) has offset \(value), outside the object area 8..<\(tableOffset)",
        offset: tableOffset + index * offsetSize, location: "object \(index)")
    }
    return Int(value)
  }

  /// Reads a marker's count (inline nibble, or a following integer object).
  /// - Returns: the count and the offset of the payload.
  private func count(at offset: Int, marker: UInt8, index: Int) throws(PropertyListError) -> (
    Int, Int
  ) {
    let nibble = Int(marker & 0x0F)
    if nibble != 0x0F { return (nibble, offset + 1) }
    guard offset + 2 <= tableOffset else { throw truncated(index, offset) }
    let intMarker = bytes[offset + 1]
    guard intMarker & 0xF0 == 0x10, intMarker & 0x0F <= 3 else {
      throw PropertyListError(
        .invalidStructure,
        "count of object \(index) is not an integer (marker 0x\(String(intMarker, radix: 16)))",
        offset: offset + 1, location: "object \(index)")
    }
    let size = 1 << Int(intMarker & 0x0F)
    guard offset + 2 + size <= tableOffset else { throw truncated(index, offset) }
    let value = Self.readUnsigned(bytes, at: offset + 2, size: size)
    guard value <= UInt64(tableOffset) else {
      throw PropertyListError(
        .invalidStructure,
        "object \(index) claims \(value) elements, more than the list's \(bytes.count) bytes",
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
      throw PropertyListError(
        .invalidStructure, "object \(index) is not an array", offset: start,
        location: "object \(index)")
    }
    let (n, payload) = try count(at: start, marker: marker, index: index)
    try checkRoom(payload, n * referenceSize, index)
    var result: [Int] = []
    result.reserveCapacity(n)
    for i in 0..<n { result.append(try reference(at: payload + i * referenceSize)) }
    return result
  }

  /// The object indices of the keys and values of dictionary `index`.
  public func dictionaryEntries(of index: Int) throws(PropertyListError) -> [(key: Int, value: Int)]
  {
    let start = try offset(of: index)
    let marker = bytes[start]
    guard marker >> 4 == 0xD else {
      throw PropertyListError(
        .invalidStructure, "object \(index) is not a dictionary", offset: start,
        location: "object \(index)")
    }
    let (n, payload) = try count(at: start, marker: marker, index: index)
    try checkRoom(payload, 2 * n * referenceSize, index)
    var result: [(key: Int, value: Int)] = []
    result.reserveCapacity(n)
    for i in 0..<n {
      result.append(
        (
          try reference(at: payload + i * referenceSize),
          try reference(at: payload + (n + i) * referenceSize)
        ))
    }
    return result
  }

  /// The bytes object `index` takes in the list: its marker, its count, and its payload (a
  /// container's references, not its elements). For a reader of a list some of whose bytes
  /// were not read, to make sure an object it uses lies in what was.
  /// - Throws: ``PropertyListError`` when the object is not well formed or runs past the
  ///   object area.
  public func extent(of index: Int) throws(PropertyListError) -> Range<Int> {
    let start = try offset(of: index)
    let marker = bytes[start]
    var length: Int
    switch marker >> 4 {
    case 0x0: length = 1
    case 0x1, 0x2: length = 1 + (1 << min(Int(marker & 0x0F), 4))
    case 0x3: length = 9
    case 0x8: length = 2 + Int(marker & 0x0F)
    case 0x4, 0x5, 0x6, 0xA, 0xC, 0xD:
      let (n, payload) = try count(at: start, marker: marker, index: index)
      let width: Int
      switch marker >> 4 {
      case 0x4, 0x5: width = 1
      case 0x6: width = 2
      case 0xD: width = 2 * referenceSize
      default: width = referenceSize
      }
      let (size, overflow) = n.multipliedReportingOverflow(by: width)
      guard !overflow else { throw truncated(index, start) }
      length = payload - start + size
    default:
      throw PropertyListError(
        .invalidStructure, "unknown object marker 0x\(String(marker, radix: 16))", offset: start,
        location: "object \(index)")
    }
    try checkRoom(start, length, index)
    return start..<(start + length)
  }

  /// Where the bytes of data object `index` are in the list, for a reader that uses them in
  /// place rather than copied (``scalar(at:)`` copies them); nil when the object is not data.
  /// - Throws: ``PropertyListError`` when the object is not well formed or runs past the
  ///   object area.
  public func dataRange(at index: Int) throws(PropertyListError) -> Range<Int>? {
    let start = try offset(of: index)
    let marker = bytes[start]
    guard marker >> 4 == 0x4 else { return nil }
    let (n, payload) = try count(at: start, marker: marker, index: index)
    try checkRoom(payload, n, index)
    return payload..<(payload + n)
  }

  /// Object `index` as a value; it must not be a container.
  public func scalar(at index: Int) throws(PropertyListError) -> PropertyListValue {
    let start = try offset(of: index)
    let marker = bytes[start]
    // Built only when an error needs it (this runs once per value).
    var location: String { "object \(index)" }
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
          .unsupportedValue, "integer does not fit in 64 signed bits", offset: start,
          location: location)
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
          secondsSinceReferenceDate: Double(
            bitPattern: Self.readUnsigned(bytes, at: start + 1, size: 8))))
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
      throw PropertyListError(
        .invalidStructure, "object \(index) is a container, not a scalar", offset: start,
        location: location)
    default: break
    }
    throw PropertyListError(
      .invalidStructure, "unknown object marker 0x\(String(marker, radix: 16))", offset: start,
      location: location)
  }

  /// Object `index` as a string (ASCII or UTF-16).
  public func string(at index: Int) throws(PropertyListError) -> String {
    let start = try offset(of: index)
    let marker = bytes[start]
    // Built only when an error needs it (this runs once per value).
    var location: String { "object \(index)" }
    switch marker >> 4 {
    case 0x5:
      let (n, payload) = try count(at: start, marker: marker, index: index)
      try checkRoom(payload, n, index)
      return try bytes.withUnsafeBufferPointer { buffer throws(PropertyListError) in
        let slice = UnsafeBufferPointer(rebasing: buffer[payload..<(payload + n)])
        var combined: UInt8 = 0
        for byte in slice { combined |= byte }
        guard combined < 0x80 else {
          throw PropertyListError(
            .invalidText, "ASCII string holds a byte above 0x7F", offset: payload,
            location: location)
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
        throw PropertyListError(
          .invalidText, "UTF-16 string is not valid UTF-16", offset: payload, location: location)
      }
      return text
    default:
      throw PropertyListError(
        .invalidStructure,
        "object \(index) is not a string (marker 0x\(String(marker, radix: 16)))",
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
    guard index >= 0, index < objectCount else {
      throw PropertyListError(.invalidStructure, "reference to object \(index) of \(objectCount)")
    }
    return try bytes.withUnsafeBufferPointer { buffer throws(PropertyListError) in
      // A scalar, or a container of scalars only (an extended-attribute bucket, mostly), needs
      // no record of the objects visited: nothing below it can repeat or contain itself.
      var flat = decoder(over: buffer)
      if let value = try flat.flatValue(index) { return value }
      // The per-object states in scratch memory: on the stack for small lists, the heap for
      // large ones.
      return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: objectCount) {
        state throws(PropertyListError) in
        state.initialize(repeating: 0)
        var decoder = decoder(over: buffer, state: state)
        return try decoder.value(index, depth: 0)
      }
    }
  }

  /// Hands `body` the top object's entries, when it is a dictionary, with their values decoded
  /// whole: in stored order (a key stored twice comes twice) when every value is a scalar, in
  /// no particular order otherwise. Returns false, calling `body` never, when the top object
  /// is not a dictionary. On an error `body` may have had the entries before the malformed
  /// one: a caller keeps nothing it was given then.
  ///
  /// For a caller that keeps a small dictionary its own way (as pairs, say): no hash table is
  /// built, and nothing allocated but the values.
  /// - Throws: ``PropertyListError`` as ``decode()``.
  public func forEachDictionaryEntry(_ body: (String, PropertyListValue) -> Void)
    throws(PropertyListError) -> Bool
  {
    // nil: not all scalars; true or false: the answer.
    let flat: Bool? = try bytes.withUnsafeBufferPointer { buffer throws(PropertyListError) in
      var decoder = decoder(over: buffer)
      let start = try decoder.offset(of: topObject)
      let marker = buffer[start]
      guard marker >> 4 == 0xD else { return false }
      let complete = try decoder.flatEntries(
        topObject, start: start, marker: marker, begin: { _ in }, each: body)
      return complete ? true : nil
    }
    if let flat { return flat }
    guard case .dictionary(let entries) = try decode() else { return false }
    for (key, value) in entries { body(key, value) }
    return true
  }

  /// A tree decoder over `buffer` (this reader's bytes); without `state` it decodes flat
  /// containers only (``TreeDecoder/flatValue(_:)``, ``TreeDecoder/flatEntries``).
  private func decoder(
    over buffer: UnsafeBufferPointer<UInt8>,
    state: UnsafeMutableBufferPointer<UInt8> = UnsafeMutableBufferPointer(start: nil, count: 0)
  ) -> TreeDecoder {
    TreeDecoder(
      bytes: buffer, offsetSize: offsetSize, referenceSize: referenceSize,
      objectCount: objectCount, tableOffset: tableOffset, reader: self, state: state,
      budget: decodedSizeBudget)
  }

  /// Decodes a whole tree over the raw buffer: one read of each object's marker, no bounds
  /// checks beyond the structural ones, and memory bounded by the object count (a container met
  /// a second time is decoded again once, then remembered, so shared subtrees cannot explode).
  private struct TreeDecoder {
    let bytes: UnsafeBufferPointer<UInt8>
    let offsetSize: Int
    let referenceSize: Int
    let objectCount: Int
    let tableOffset: Int
    let reader: BinaryPropertyListReader
    // Per object: 0 never decoded, 1 being decoded (meeting it again is a cycle), 2 decoded.
    let state: UnsafeMutableBufferPointer<UInt8>
    /// Containers met more than once, with what each cost to decode.
    var shared: [Int: (value: PropertyListValue, cost: Int)] = [:]
    /// What the decode may take, and has taken (``BinaryPropertyListReader/decodedSizeFactor``).
    let budget: Int
    var spent = 0

    /// Counts `amount` bytes of decoded values against the budget.
    @inline(__always)
    mutating func charge(_ amount: Int, _ index: Int) throws(PropertyListError) {
      spent &+= amount
      guard spent <= budget else {
        throw PropertyListError(
          .invalidStructure,
          "decoding would take more than \(budget) bytes, \(BinaryPropertyListReader.decodedSizeFactor) times the list's \(bytes.count) (its references repeat objects)",
          location: "object \(index)")
      }
    }

    @inline(__always)
    func unsigned(at offset: Int, size: Int) -> UInt64 {
      var value: UInt64 = 0
      for i in 0..<size { value = value << 8 | UInt64(bytes[offset + i]) }
      return value
    }

    @inline(__always)
    func offset(of index: Int) throws(PropertyListError) -> Int {
      let value = unsigned(at: tableOffset + index * offsetSize, size: offsetSize)
      guard value >= 8, value < UInt64(tableOffset) else { return try reader.offset(of: index) }
      return Int(value)
    }

    @inline(__always)
    func reference(at offset: Int) throws(PropertyListError) -> Int {
      let value = unsigned(at: offset, size: referenceSize)
      guard value < UInt64(objectCount) else {
        throw PropertyListError(
          .invalidStructure, "reference to object \(value) of \(objectCount)", offset: offset)
      }
      return Int(value)
    }

    /// The count and payload offset of a container whose marker is at `start`, checked to fit.
    func containerExtent(_ index: Int, start: Int, marker: UInt8, refsPerElement: Int)
      throws(PropertyListError) -> (count: Int, payload: Int)
    {
      var count = Int(marker & 0x0F)
      var payload = start + 1
      if count == 0x0F {
        let kind = try reader.kind(of: index)  // the slow path validates the extended count
        switch kind {
        case .array(let n), .dictionary(let n): count = n
        case .scalar: break
        }
        let sizeLog = Int(bytes[start + 1] & 0x0F)
        payload = start + 2 + (1 << sizeLog)
      }
      guard count * refsPerElement * referenceSize <= tableOffset - payload else {
        throw PropertyListError(
          .truncated, "object \(index) runs past the end of the object area", offset: start,
          location: "object \(index)")
      }
      return (count, payload)
    }

    @inline(__always)
    static func isContainer(_ marker: UInt8) -> Bool {
      let high = marker >> 4
      return high == 0xA || high == 0xC || high == 0xD
    }

    /// Object `index`, not a container, whose marker is at `start`.
    @inline(__always)
    mutating func scalar(_ index: Int, start: Int, marker: UInt8) throws(PropertyListError)
      -> PropertyListValue
    {
      if marker >> 4 == 0x5 && marker != 0x5F {
        // Short ASCII strings (dictionary keys, mostly): decode inline.
        let count = Int(marker & 0x0F)
        if count <= tableOffset - start - 1 {
          let slice = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<(start + 1 + count)])
          var combined: UInt8 = 0
          for byte in slice { combined |= byte }
          if combined < 0x80 {
            try charge(16 + count, index)
            return .string(String(decoding: slice, as: UTF8.self))
          }
        }
      }
      let value = try reader.scalar(at: index)
      try charge(BinaryPropertyListReader.decodedCost(of: value), index)
      return value
    }

    /// Object `index` when it is a scalar, nil when it is a container.
    @inline(__always)
    mutating func flatElement(_ index: Int) throws(PropertyListError) -> PropertyListValue? {
      let start = try offset(of: index)
      let marker = bytes[start]
      return Self.isContainer(marker) ? nil : try scalar(index, start: start, marker: marker)
    }

    /// Object `index` when it is a scalar or a container of scalars; nil when something
    /// below it is a container (then ``value(_:depth:)`` decodes it, with `state`). Meets
    /// the objects in the order ``value(_:depth:)`` does, so a malformed one is reported as
    /// it would be.
    mutating func flatValue(_ index: Int) throws(PropertyListError) -> PropertyListValue? {
      let start = try offset(of: index)
      let marker = bytes[start]
      guard Self.isContainer(marker) else { return try scalar(index, start: start, marker: marker) }
      if marker >> 4 == 0xD {
        var dictionary: [String: PropertyListValue] = [:]
        let complete = try flatEntries(index, start: start, marker: marker) { count in
          dictionary = Dictionary(minimumCapacity: count)
        } each: { key, value in
          dictionary[key] = value
        }
        return complete ? .dictionary(dictionary) : nil
      }
      let (count, payload) = try containerExtent(
        index, start: start, marker: marker, refsPerElement: 1)
      // As ``BinaryPropertyListReader/decodedCost(of:)`` counts the array, before it is built.
      try charge(16 + 16 * count, index)
      var array: [PropertyListValue] = []
      array.reserveCapacity(count)
      for i in 0..<count {
        guard let element = try flatElement(try reference(at: payload + i * referenceSize))
        else { return nil }
        array.append(element)
      }
      return .array(array)
    }

    /// Hands `each` the entries of dictionary `index` (marker at `start`) in stored order,
    /// after telling `begin` their count, when every key is a string and every value a scalar;
    /// otherwise false, calling neither (``value(_:depth:)`` then decodes or refuses it).
    @inline(__always)
    mutating func flatEntries(
      _ index: Int, start: Int, marker: UInt8, begin: (Int) -> Void,
      each: (String, PropertyListValue) -> Void
    ) throws(PropertyListError) -> Bool {
      let (count, payload) = try containerExtent(
        index, start: start, marker: marker, refsPerElement: 2)
      // Markers first: a dictionary holding a container goes to the whole-tree decoder before
      // any entry is handed over, never after some.
      for i in 0..<(2 * count) {
        let marker = bytes[try offset(of: try reference(at: payload + i * referenceSize))]
        let isString = marker >> 4 == 0x5 || marker >> 4 == 0x6
        guard i < count ? isString : !Self.isContainer(marker) else { return false }
      }
      try charge(16 + 32 * count, index)
      begin(count)
      for i in 0..<count {
        guard
          case .string(let key)? = try flatElement(try reference(at: payload + i * referenceSize)),
          let value = try flatElement(try reference(at: payload + (count + i) * referenceSize))
        else { return false }
        each(key, value)
      }
      return true
    }

    mutating func value(_ index: Int, depth: Int) throws(PropertyListError) -> PropertyListValue {
      let start = try offset(of: index)
      let marker = bytes[start]
      let high = marker >> 4
      guard Self.isContainer(marker) else {
        return try scalar(index, start: start, marker: marker)
      }
      switch state[index] {
      case 1:
        throw PropertyListError(
          .referenceCycle, "object \(index) contains itself", location: "object \(index)")
      case 2:
        if let remembered = shared[index] {
          // Shared, not copied, in memory; but whoever walks the tree meets it again.
          try charge(remembered.cost, index)
          return remembered.value
        }
      default:
        break
      }
      guard depth < BinaryPropertyListReader.maximumDepth else {
        throw PropertyListError(
          .nestingTooDeep(limit: BinaryPropertyListReader.maximumDepth),
          "containers nest deeper than \(BinaryPropertyListReader.maximumDepth) levels",
          location: "object \(index)")
      }
      let secondVisit = state[index] == 2
      state[index] = 1
      let before = spent
      let result: PropertyListValue
      if high == 0xD {
        let (count, payload) = try containerExtent(
          index, start: start, marker: marker, refsPerElement: 2)
        try charge(16 + 32 * count, index)
        var dictionary: [String: PropertyListValue] = [:]
        dictionary.reserveCapacity(count)
        for i in 0..<count {
          let keyIndex = try reference(at: payload + i * referenceSize)
          guard case .string(let key) = try value(keyIndex, depth: depth + 1) else {
            throw PropertyListError(
              .invalidStructure, "dictionary key is not a string", location: "object \(index)")
          }
          let valueIndex = try reference(at: payload + (count + i) * referenceSize)
          dictionary[key] = try value(valueIndex, depth: depth + 1)
        }
        result = .dictionary(dictionary)
      } else {
        let (count, payload) = try containerExtent(
          index, start: start, marker: marker, refsPerElement: 1)
        try charge(16 + 16 * count, index)
        var array: [PropertyListValue] = []
        array.reserveCapacity(count)
        for i in 0..<count {
          array.append(try value(try reference(at: payload + i * referenceSize), depth: depth + 1))
        }
        result = .array(array)
      }
      state[index] = 2
      if secondVisit { shared[index] = (result, spent - before) }
      return result
    }
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
