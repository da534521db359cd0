/// Builds an index's B-tree bottom-up in a ``PageFile``, from its keys given in the index's
/// order (<https://sqlite.org/fileformat2.html#b_tree_pages>): leaves filled as full as their
/// cells allow, interior pages above them, and the top page written into the index's existing
/// (empty) root page. What `CREATE INDEX` does after reading and sorting the table's rows,
/// done from keys gathered while the rows were written (``TableTreeWriter``).
///
/// An index B-tree keeps each key once: a key that ends a full page goes up to the parent as
/// the cell that divides that page from the next. A key is held back until the next one
/// comes, so that no page ends empty: when the last key finds its leaf full, the leaf's own
/// last key divides them instead. Keys must fit in a leaf's cell (no overflow pages): an
/// index on integer columns keeps at most a few dozen bytes per key.
package struct IndexTreeWriter {
  /// An interior level's page being filled.
  private struct Level {
    var page: BTreePage
    /// The child of each cell placed.
    var children: [UInt32] = []
    /// A cell that did not fit (the page is full), waiting for the next.
    var pending: (child: UInt32, key: [UInt8])?

    init(pageSize: Int) { page = BTreePage(type: BTreePage.indexInterior, pageSize: pageSize) }
  }

  private let file: PageFile
  private let root: UInt32
  private var leaf: BTreePage
  /// A key that did not fit in the full leaf, waiting for the next.
  private var pendingKey: [UInt8]?
  /// Interior levels, the leaves' parents first.
  private var levels: [Level] = []
  private var count = 0
  private var cell: [UInt8] = []

  /// The longest key a leaf keeps whole in a file of `usableSize` bytes a page (SQLite's
  /// largest local payload of an index cell): longer keys are not for this writer.
  package static func longestKey(usableSize: Int) -> Int { (usableSize - 12) * 64 / 255 - 23 }

  /// A writer of the index whose root page is `root`, an empty index leaf in `file`.
  package init(file: PageFile, root: UInt32) {
    self.file = file
    self.root = root
    leaf = BTreePage(type: BTreePage.indexLeaf, pageSize: file.pageSize)
  }

  /// Appends a key (an index record: the indexed values and the rowid), which sorts after the
  /// last one, as SQLite compares records.
  /// - Throws: ``SQLiteError`` when a page cannot be written.
  package mutating func append(_ key: [UInt8]) throws(SQLiteError) {
    precondition(key.count <= Self.longestKey(usableSize: file.usableSize), "a key fits a leaf")
    count += 1
    if let divider = pendingKey {
      // The full leaf is done: the key held back divides it from the leaf this key begins.
      pendingKey = nil
      try push(child: try writeLeaf(), key: divider, to: 0)
    }
    leafCell(key)
    if leaf.cells > 0 && leaf.free < cell.count + 2 {
      pendingKey = key
      return
    }
    leaf.place(cell)
  }

  /// Writes the pages still being filled, the top one into the root page. A writer given no
  /// key leaves the root page as it was.
  /// - Throws: ``SQLiteError`` when a page cannot be written.
  package mutating func finish() throws(SQLiteError) {
    guard count > 0 else { return }
    if let last = pendingKey {
      // The last key found its leaf full: the leaf's own last key divides the two.
      pendingKey = nil
      let divider = Self.payload(of: leaf.lastCell)
      leaf.removeLast()
      try push(child: try writeLeaf(), key: divider, to: 0)
      leafCell(last)
      leaf.place(cell)
    }
    if levels.isEmpty {
      leaf.seal()
      try file.write(leaf.bytes, at: root)
      return
    }
    var child = try writeLeaf()
    var level = 0
    while true {
      try close(level, right: child)
      if level == levels.count - 1 {
        try writeInterior(level, at: root, right: child)
        return
      }
      let number = file.allocate()
      try writeInterior(level, at: number, right: child)
      child = number
      level += 1
    }
  }

  /// The key a leaf cell (or an interior one past its child's number) holds: what follows its
  /// size.
  private static func payload(of cell: ArraySlice<UInt8>) -> [UInt8] {
    var start = cell.startIndex
    while cell[start] & 0x80 != 0 { start += 1 }
    return Array(cell[(start + 1)...])
  }

  /// The leaf cell of `key` into `cell`: its size and the record.
  private mutating func leafCell(_ key: [UInt8]) { makeCell(key, child: nil) }

  /// The interior cell of `key` with its left child `child` into `cell`.
  private mutating func interiorCell(_ child: UInt32, _ key: [UInt8]) {
    makeCell(key, child: child)
  }

  /// A cell of `key` into `cell`: an interior one's left child first, then the key's size and
  /// the record.
  private mutating func makeCell(_ key: [UInt8], child: UInt32?) {
    cell.removeAll(keepingCapacity: true)
    if let child { PageFile.append32(child, to: &cell) }
    RowRecord.appendVarint(UInt64(key.count), to: &cell)
    cell.append(contentsOf: key)
  }

  /// Writes the leaf being filled as a new page and starts another; returns its number.
  private mutating func writeLeaf() throws(SQLiteError) -> UInt32 {
    let number = file.allocate()
    leaf.seal()
    try file.write(leaf.bytes, at: number)
    leaf = BTreePage(type: BTreePage.indexLeaf, pageSize: file.pageSize)
    return number
  }

  /// Gives interior level `level` (0: the leaves' parents) a cell: `key`, with the pages
  /// before it under `child`.
  private mutating func push(child: UInt32, key: [UInt8], to level: Int) throws(SQLiteError) {
    if level == levels.count { levels.append(Level(pageSize: file.pageSize)) }
    if let waiting = levels[level].pending {
      // The full page is done: the waiting cell's child is its right-most one, and its key
      // divides it from the page this cell begins.
      let number = file.allocate()
      try writeInterior(level, at: number, right: waiting.child)
      try push(child: number, key: waiting.key, to: level + 1)
    }
    interiorCell(child, key)
    if levels[level].page.cells > 0 && levels[level].page.free < cell.count + 2 {
      levels[level].pending = (child, key)
      return
    }
    levels[level].page.place(cell)
    levels[level].children.append(child)
  }

  /// Ends interior level `level` before it takes `right` as its right-most child: a cell
  /// waiting there goes into a page of its own, the full page's last cell dividing the two.
  private mutating func close(_ level: Int, right: UInt32) throws(SQLiteError) {
    guard let waiting = levels[level].pending, let child = levels[level].children.last else {
      return
    }
    // The page's last cell: its child's number, then its key.
    let key = Self.payload(of: levels[level].page.lastCell.dropFirst(4))
    levels[level].page.removeLast()
    levels[level].children.removeLast()
    let number = file.allocate()
    try writeInterior(level, at: number, right: child)
    try push(child: number, key: key, to: level + 1)
    interiorCell(waiting.child, waiting.key)
    levels[level].page.place(cell)
    levels[level].children.append(waiting.child)
  }

  /// Writes level `level`'s page at `number` with `right` as its right-most child, and starts
  /// another.
  private mutating func writeInterior(_ level: Int, at number: UInt32, right: UInt32)
    throws(SQLiteError)
  {
    levels[level].page.seal(right: right)
    try file.write(levels[level].page.bytes, at: number)
    for child in levels[level].children + [right] { try file.point(child, .btree, from: number) }
    levels[level] = Level(pageSize: file.pageSize)
  }
}
