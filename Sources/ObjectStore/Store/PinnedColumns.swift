/// The attribute and to-one columns of an ``ObjectBatch`` as a ``BatchInsertion`` binds them,
/// row after row: their numbers copied once into memory of fixed address (freed with this),
/// their texts and blobs read where the batch keeps them. Reading a value from these retains
/// nothing, where reading it from the batch's arrays retained each array once per value (a
/// tenth of a restore's time on the thread that writes the store).
///
/// The views are valid while this and the batch live.
final class PinnedColumns {
  /// An attribute's column.
  struct Attribute {
    /// The objects (places in the batch) that have a value, ascending.
    let records: UnsafeBufferPointer<Int>
    let values: Values
    /// Whether the values are decimals' texts.
    let decimal: Bool
  }

  /// An attribute's values.
  enum Values {
    case integers(UnsafeBufferPointer<Int64>)
    case booleans(UnsafeBufferPointer<Bool>)
    case reals(UnsafeBufferPointer<Double>)
    /// Texts or blobs: each value's range of the bytes at the address.
    case texts(UnsafeRawPointer, UnsafeBufferPointer<Range<Int>>)
    case blobs(UnsafeRawPointer, UnsafeBufferPointer<Range<Int>>)
  }

  /// A to-one relationship's column.
  struct ToOne {
    /// The objects whose relationship is set, ascending.
    let records: UnsafeBufferPointer<Int>
    /// Their targets' primary keys.
    let keys: UnsafeBufferPointer<Int64>
    /// Their targets' entity numbers (nil: an entity the store does not number).
    let entityNumbers: UnsafeBufferPointer<Int64?>
  }

  let attributes: [Attribute]
  let toOne: [ToOne]
  /// The values kept as stored (never decimals).
  let storedColumns: [Attribute]
  private let allocations: [UnsafeMutableRawPointer]

  /// The columns of `batch`, to-one targets numbered by `entityNumbers`.
  init(_ batch: ObjectBatch, entityNumbers: [String: Int]) {
    var allocations: [UnsafeMutableRawPointer] = []
    /// A copy of `array`, of a trivial type (freed without being deinitialized), at a fixed
    /// address.
    func pin<Element>(_ array: [Element]) -> UnsafeBufferPointer<Element> {
      assert(_isPOD(Element.self), "a trivial type")
      let memory = UnsafeMutableBufferPointer<Element>.allocate(capacity: max(array.count, 1))
      _ = memory.initialize(from: array)
      allocations.append(UnsafeMutableRawPointer(memory.baseAddress!))
      return UnsafeBufferPointer(rebasing: memory[0..<array.count])
    }
    func pinned(_ values: ObjectBatch.Values) -> Values {
      switch values {
      case .integers(let v): .integers(pin(v))
      case .booleans(let v): .booleans(pin(v))
      case .reals(let v): .reals(pin(v))
      case .texts(let v): .texts(v.baseAddress, pin(v.ranges))
      case .blobs(let v): .blobs(v.baseAddress, pin(v.ranges))
      }
    }
    attributes = batch.attributes.map {
      Attribute(records: pin($0.records), values: pinned($0.values), decimal: $0.type == .decimal)
    }
    storedColumns = batch.storedColumns.map {
      Attribute(records: pin($0.records), values: pinned($0.values), decimal: false)
    }
    toOne = batch.toOne.map { column in
      ToOne(
        records: pin(column.records), keys: pin(column.keys),
        entityNumbers: pin(column.entities.map { entityNumbers[$0].map(Int64.init) }))
    }
    self.allocations = allocations
  }

  /// Whether a column of a batch, which lists its values' objects in `records` (in order),
  /// has its value `next` for object `record`: a column's cursor moves on only when it does.
  @inline(__always)
  static func lists<Records: RandomAccessCollection<Int>>(
    _ record: Int, at next: Int, in records: Records
  ) -> Bool where Records.Index == Int {
    next < records.count && records[next] == record
  }

  // The elements are of trivial types: freed without being deinitialized.
  deinit { for allocation in allocations { allocation.deallocate() } }
}

extension PinnedColumns.Values {
  /// Binds value `position` as Core Data stores it (``SQLValues``): a decimal's text as the
  /// double it spells, when it spells one.
  @inline(__always)
  func bind<Target: RowParameters>(
    _ position: Int, decimal: Bool, to statement: inout Target, at parameter: Int
  ) throws {
    switch self {
    case .integers(let v): try statement.bind(v[position], at: parameter)
    case .booleans(let v): try statement.bind(Int64(v[position] ? 1 : 0), at: parameter)
    case .reals(let v): try statement.bind(v[position], at: parameter)
    case .texts(let base, let ranges):
      let text = UnsafeRawBufferPointer(
        start: base + ranges[position].lowerBound, count: ranges[position].count)
      if decimal, let number = DecimalText.double(text) {
        try statement.bind(number, at: parameter)
        return
      }
      // The batch outlives the statement's run: its bytes need no copy.
      try statement.bindUnsafe(text: text, at: parameter)
    case .blobs(let base, let ranges):
      try statement.bindUnsafe(
        blob: UnsafeRawBufferPointer(
          start: base + ranges[position].lowerBound, count: ranges[position].count),
        at: parameter)
    }
  }
}
