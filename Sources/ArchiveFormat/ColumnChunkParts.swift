import PropertyList

/// What a format-2 chunk (``ColumnLayout``) holds, as ``RecordDecoder`` reads it: its scalars
/// decoded, its byte strings (`pk`, `opt`, and each column's `present`, `lengths`, `values`
/// and `words`) as slices of a buffer that is not copied.
///
/// Made from a decoded property list (``init(_:)``), or read in place from the chunk's own
/// bytes (``init(reading:bytes:)``), which copies nothing: a chunk's covers are a few MiB, and
/// copying them out of the list (into memory the allocator maps for each) was a fifth of
/// `verify`'s decoding.
struct ColumnChunkParts {
  /// A byte string of the chunk.
  enum Bytes {
    /// The chunk has no value under the key.
    case absent
    /// The bytes, in place.
    case data(ArraySlice<UInt8>)
    /// The chunk has a value there that is not data.
    case other
  }

  /// One column's parts.
  struct Column {
    /// Its `key` and `type`, when they are strings.
    var key: String?
    var type: String?
    var present = Bytes.absent
    var lengths = Bytes.absent
    var values = Bytes.absent
    /// A text column's words, when its values are their numbers (``WordCoding``).
    var words = Bytes.absent
  }

  /// `class`, when it is a string.
  var entity: String?
  /// `count`, when it is an integer.
  var count: Int64?
  var keys = Bytes.absent
  var versions = Bytes.absent
  /// The columns, when `columns` is an array.
  var columns: [Column]?

  /// The parts of `chunk`, a decoded list (of any shape: what is not a chunk's has no parts).
  init(_ chunk: PropertyListValue) {
    func bytes(_ value: PropertyListValue?) -> Bytes {
      switch value {
      case nil: .absent
      case .data(let bytes)?: .data(bytes[...])
      default: .other
      }
    }
    entity = chunk[RecordKey.entity]?.stringValue
    count = chunk[ColumnLayout.count]?.integerValue
    keys = bytes(chunk[RecordKey.primaryKey])
    versions = bytes(chunk[RecordKey.version])
    if case .array(let columns)? = chunk[ColumnLayout.columns] {
      self.columns = columns.map { column in
        Column(
          key: column[ColumnLayout.key]?.stringValue,
          type: column[ColumnLayout.type]?.stringValue,
          present: bytes(column[ColumnLayout.present]),
          lengths: bytes(column[ColumnLayout.lengths]), values: bytes(column[ColumnLayout.values]),
          words: bytes(column[ColumnLayout.words]))
      }
    }
  }

  private init() {}

  /// The parts of the chunk whose list `reader` reads (its top object a dictionary), its byte
  /// strings slices of `bytes`, the list's own: nil when the chunk is not of the plain shape a
  /// writer gives it, for the whole decoded tree to decide as ever (``init(_:)``): a key twice
  /// in a dictionary, a container where a chunk has none, an object that is not well formed,
  /// or more decoded than the tree's budget allows (``BinaryPropertyListReader/decodedSizeBudget``,
  /// counted here at least as the tree counts it), so that what is read here is what the tree
  /// would give, and a list the tree refuses is never read here.
  init?(reading reader: BinaryPropertyListReader, bytes: [UInt8]) {
    var parts = ColumnChunkParts()
    var walk = Walk(reader: reader, bytes: bytes)
    do {
      guard let entries = try walk.entries(of: reader.topObject) else { return nil }
      for (key, value) in entries {
        switch key {
        case RecordKey.entity:
          guard let scalar = try walk.scalar(value) else { return nil }
          parts.entity = scalar.stringValue
        case ColumnLayout.count:
          guard let scalar = try walk.scalar(value) else { return nil }
          parts.count = scalar.integerValue
        case RecordKey.primaryKey:
          guard let found = try walk.bytes(value) else { return nil }
          parts.keys = found
        case RecordKey.version:
          guard let found = try walk.bytes(value) else { return nil }
          parts.versions = found
        case ColumnLayout.columns:
          guard case .array = try reader.kind(of: value) else {
            // A scalar: no array of columns.
            guard try walk.scalar(value) != nil else { return nil }
            continue
          }
          guard let elements = try walk.elements(of: value) else { return nil }
          var columns: [Column] = []
          columns.reserveCapacity(elements.count)
          for element in elements {
            guard let column = try walk.column(element) else { return nil }
            columns.append(column)
          }
          parts.columns = columns
        default:
          // Another key, which a reader ignores, met (and counted) as the tree meets it.
          guard try walk.scalar(value) != nil else { return nil }
        }
      }
    } catch {
      return nil
    }
    self = parts
  }

  /// A walk through a list's objects, counting what the tree would decode of them.
  private struct Walk {
    let reader: BinaryPropertyListReader
    let bytes: [UInt8]
    var spent = 0

    /// Counts `amount` against the tree's budget; false once it is spent.
    mutating func charge(_ amount: Int) -> Bool {
      spent += amount
      return spent <= reader.decodedSizeBudget
    }

    /// Object `index` decoded, when it is a scalar other than data and the budget allows it.
    mutating func scalar(_ index: Int) throws -> PropertyListValue? {
      guard case .scalar = try reader.kind(of: index) else { return nil }
      if let range = try reader.dataRange(at: index) {
        return charge(16 + range.count) ? .data(Array(bytes[range])) : nil
      }
      let value = try reader.scalar(at: index)
      return charge(BinaryPropertyListReader.decodedCost(of: value)) ? value : nil
    }

    /// Object `index` as a chunk's byte string: its bytes in place when it is data, `other`
    /// for another scalar; nil for a container or beyond the budget.
    mutating func bytes(_ index: Int) throws -> Bytes? {
      if let range = try reader.dataRange(at: index) {
        return charge(16 + range.count) ? .data(bytes[range]) : nil
      }
      return try scalar(index) == nil ? nil : .other
    }

    /// The elements of array `index`, counted.
    mutating func elements(of index: Int) throws -> [Int]? {
      let elements = try reader.arrayElements(of: index)
      return charge(16 + 16 * elements.count) ? elements : nil
    }

    /// The entries of dictionary `index`, each key decoded; nil when it is no dictionary, a
    /// key is not a string or comes twice, or the budget is spent.
    mutating func entries(of index: Int) throws -> [(key: String, value: Int)]? {
      guard case .dictionary = try reader.kind(of: index) else { return nil }
      let entries = try reader.dictionaryEntries(of: index)
      guard charge(16 + 32 * entries.count) else { return nil }
      var seen: Set<String> = []
      var named: [(key: String, value: Int)] = []
      named.reserveCapacity(entries.count)
      for (key, value) in entries {
        guard case .string(let name)? = try scalar(key), seen.insert(name).inserted else {
          return nil
        }
        named.append((name, value))
      }
      return named
    }

    /// Column dictionary `index`; nil when it is not one of scalars.
    mutating func column(_ index: Int) throws -> Column? {
      guard let entries = try entries(of: index) else { return nil }
      var column = Column()
      for (key, value) in entries {
        switch key {
        case ColumnLayout.key, ColumnLayout.type:
          guard let scalar = try scalar(value) else { return nil }
          if key == ColumnLayout.key {
            column.key = scalar.stringValue
          } else {
            column.type = scalar.stringValue
          }
        case ColumnLayout.present:
          guard let found = try bytes(value) else { return nil }
          column.present = found
        case ColumnLayout.lengths:
          guard let found = try bytes(value) else { return nil }
          column.lengths = found
        case ColumnLayout.values:
          guard let found = try bytes(value) else { return nil }
          column.values = found
        case ColumnLayout.words:
          guard let found = try bytes(value) else { return nil }
          column.words = found
        default:
          guard try scalar(value) != nil else { return nil }
        }
      }
      return column
    }
  }
}
