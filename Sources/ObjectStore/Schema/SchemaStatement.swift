import ObjectModel
import SQLite

/// One `CREATE` statement of a stored schema (a store's `sqlite_master`, or an archive's
/// `store/schema.plist`) read as data: never run as written.
///
/// Tables and indexes are read into values in a deliberately small grammar, the one Core Data
/// and apps' own tables use (columns with declared types, `PRIMARY KEY`, `NOT NULL`, `UNIQUE`,
/// `DEFAULT` a literal, `COLLATE` a built-in collation; table keys; indexes on plain columns),
/// and ``sql`` writes them back: the only SQL that reaches SQLite is graphvault's own text.
/// Expressions, foreign-key actions, partial indexes and the like are refused. A trigger is
/// kept as its text, for comparison only; a view or a virtual table is refused.
package enum SchemaStatement: Equatable, Sendable {
  /// `CREATE TABLE`.
  case table(Table)
  /// `CREATE INDEX`.
  case index(Index)
  /// `CREATE TRIGGER`: its name, its table and its text with whitespace collapsed.
  case trigger(name: String, table: String, text: String)

  /// Why a statement was refused.
  package struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    package let detail: String
    init(_ detail: String) { self.detail = detail }
    /// The detail.
    package var description: String { detail }
  }

  /// The collations SQLite has built in; any other name is refused.
  package static let collations: Set<String> = ["BINARY", "NOCASE", "RTRIM"]

  /// A table: columns, and the keys declared after them.
  package struct Table: Equatable, Sendable {
    /// The table's name.
    package var name: String
    /// The columns, in order.
    package var columns: [Column]
    /// `PRIMARY KEY (…)` after the columns, when there is one.
    package var primaryKey: [IndexedColumn]?
    /// Each `UNIQUE (…)` after the columns.
    package var unique: [[IndexedColumn]]

    /// A table named `name` with `columns` and keys.
    package init(
      name: String, columns: [Column], primaryKey: [IndexedColumn]? = nil,
      unique: [[IndexedColumn]] = []
    ) {
      self.name = name
      self.columns = columns
      self.primaryKey = primaryKey
      self.unique = unique
    }

    /// The column named `name` (SQLite compares names without case).
    package func column(named name: String) -> Column? {
      columns.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }
  }

  /// A column of a table.
  package struct Column: Equatable, Sendable {
    /// The name.
    package var name: String
    /// The declared type (upper-cased words, with `(n)` or `(n, m)` when given: `VARCHAR(255)`),
    /// empty when none was declared.
    package var type: String
    /// `PRIMARY KEY`, and its direction and `AUTOINCREMENT` as written.
    package var primaryKey: String?
    /// `NOT NULL`.
    package var notNull = false
    /// `UNIQUE`.
    package var unique = false
    /// `DEFAULT` and its literal as graphvault writes it.
    package var defaultValue: String?
    /// `COLLATE` and its collation.
    package var collation: String?

    /// A column named `name` of declared type `type`, without constraints.
    package init(name: String, type: String) {
      self.name = name
      self.type = type
    }

    /// Whether the column is only a name and a type.
    package var isPlain: Bool {
      primaryKey == nil && !notNull && !unique && defaultValue == nil && collation == nil
    }
  }

  /// An index: its columns on one table.
  package struct Index: Equatable, Sendable {
    /// The index's name.
    package var name: String
    /// `UNIQUE`.
    package var unique: Bool
    /// The table.
    package var table: String
    /// The columns.
    package var columns: [IndexedColumn]
  }

  /// A column of an index or a table key.
  package struct IndexedColumn: Equatable, Sendable {
    /// The column.
    package var name: String
    /// `COLLATE` and its collation.
    package var collation: String?
    /// `ASC` or `DESC`, when written.
    package var direction: String?

    /// The column `name`, with a collation and a direction when given.
    package init(name: String, collation: String? = nil, direction: String? = nil) {
      self.name = name
      self.collation = collation
      self.direction = direction
    }
  }

  /// The statement's name (table, index or trigger).
  package var name: String {
    switch self {
    case .table(let table): table.name
    case .index(let index): index.name
    case .trigger(let name, _, _): name
    }
  }

  /// The table it creates or belongs to.
  package var table: String {
    switch self {
    case .table(let table): table.name
    case .index(let index): index.table
    case .trigger(_, let table, _): table
    }
  }

  /// `table`, `index` or `trigger`, as `sqlite_master` says.
  package var type: String {
    switch self {
    case .table: "table"
    case .index: "index"
    case .trigger: "trigger"
    }
  }

  // MARK: Reading

  /// Reads one `CREATE` statement.
  /// - Throws: ``Problem`` saying what is not in the accepted grammar.
  package init(parsing sql: String) throws(Problem) {
    var reader = Reader(tokens: try SchemaToken.tokens(of: sql))
    try reader.expect("CREATE")
    if reader.take("TEMP") || reader.take("TEMPORARY") {
      throw Problem("a temporary object does not belong in a store")
    }
    if reader.take("TABLE") {
      self = .table(try reader.table())
    } else if reader.take("UNIQUE") {
      try reader.expect("INDEX")
      self = .index(try reader.index(unique: true))
    } else if reader.take("INDEX") {
      self = .index(try reader.index(unique: false))
    } else if reader.take("TRIGGER") {
      let name = try reader.name()
      var table: String?
      while let token = reader.next() {
        if token.isKeyword("ON") {
          table = try reader.name()
          break
        }
      }
      guard let table else { throw Problem("the trigger names no table") }
      self = .trigger(name: name, table: table, text: SchemaSnapshot.normalized(sql))
      return
    } else if reader.peekKeyword("VIEW") || reader.peekKeyword("VIRTUAL") {
      throw Problem("a view or virtual table is not part of a Core Data store")
    } else {
      throw Problem("not a CREATE TABLE, INDEX or TRIGGER statement")
    }
    _ = reader.take(symbol: ";")
    guard reader.isAtEnd else {
      throw Problem("unexpected text after the statement: \(reader.describeNext())")
    }
  }

  // MARK: Writing

  /// The statement as graphvault writes it, in Core Data's layout (`CREATE TABLE ZBOOK ( Z_PK
  /// INTEGER PRIMARY KEY, … )`, `CREATE INDEX … ON ZBOOK (ZAUTHOR)`); names that are not plain
  /// identifiers, or are keywords, are quoted. A trigger's text is its own (only triggers
  /// graphvault generates itself are ever written).
  package var sql: String {
    switch self {
    case .table(let table):
      var parts = table.columns.map { column in
        var text = Self.quote(column.name)
        if !column.type.isEmpty { text += " " + column.type }
        if let key = column.primaryKey { text += " " + key }
        if column.notNull { text += " NOT NULL" }
        if column.unique { text += " UNIQUE" }
        if let value = column.defaultValue { text += " DEFAULT " + value }
        if let collation = column.collation { text += " COLLATE " + collation }
        return text
      }
      if let key = table.primaryKey { parts.append("PRIMARY KEY (\(Self.list(key)))") }
      for unique in table.unique { parts.append("UNIQUE (\(Self.list(unique)))") }
      return "CREATE TABLE \(Self.quote(table.name)) ( \(parts.joined(separator: ", ")) )"
    case .index(let index):
      return
        "CREATE \(index.unique ? "UNIQUE " : "")INDEX \(Self.quote(index.name)) ON \(Self.quote(index.table)) (\(Self.list(index.columns)))"
    case .trigger(_, _, let text):
      return text
    }
  }

  private static func list(_ columns: [IndexedColumn]) -> String {
    columns.map { column in
      var text = quote(column.name)
      if let collation = column.collation { text += " COLLATE " + collation }
      if let direction = column.direction { text += " " + direction }
      return text
    }.joined(separator: ", ")
  }

  /// `name` as SQL: bare when it is a plain identifier and no keyword, else double-quoted.
  package static func quote(_ name: String) -> String {
    if ObjectModel.isIdentifier(name) && !Database.isKeyword(name) { return name }
    return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }
}

extension SchemaStatement {
  /// Walks the tokens of one statement.
  struct Reader {
    let tokens: [SchemaToken]
    var position = 0

    var isAtEnd: Bool { position >= tokens.count }

    mutating func next() -> SchemaToken? {
      guard position < tokens.count else { return nil }
      defer { position += 1 }
      return tokens[position]
    }

    func peekKeyword(_ keyword: String) -> Bool {
      position < tokens.count && tokens[position].isKeyword(keyword)
    }

    func peek(symbol: Character) -> Bool {
      position < tokens.count && tokens[position] == .symbol(symbol)
    }

    mutating func take(_ keyword: String) -> Bool {
      guard peekKeyword(keyword) else { return false }
      position += 1
      return true
    }

    mutating func take(symbol: Character) -> Bool {
      guard peek(symbol: symbol) else { return false }
      position += 1
      return true
    }

    func describeNext() -> String {
      guard position < tokens.count else { return "the end" }
      switch tokens[position] {
      case .word(let text, _): return text
      case .string(let text): return "'\(text)'"
      case .number(let text): return text
      case .symbol(let symbol): return String(symbol)
      }
    }

    mutating func expect(_ keyword: String) throws(Problem) {
      guard take(keyword) else { throw Problem("expected \(keyword), found \(describeNext())") }
    }

    mutating func expect(symbol: Character) throws(Problem) {
      guard take(symbol: symbol) else {
        throw Problem("expected \(symbol), found \(describeNext())")
      }
    }

    /// A name; `main.X` is taken as `X`, any other schema is refused.
    mutating func name() throws(Problem) -> String {
      guard position < tokens.count, case .word(let text, _) = tokens[position] else {
        throw Problem("expected a name, found \(describeNext())")
      }
      position += 1
      if take(symbol: ".") {
        guard text.caseInsensitiveCompare("main") == .orderedSame else {
          throw Problem("\(text) is not this database: only main's objects belong in a store")
        }
        return try name()
      }
      return text
    }

    mutating func ifNotExists() throws(Problem) {
      if take("IF") {
        try expect("NOT")
        try expect("EXISTS")
      }
    }

    /// Words that end a column's type.
    static let constraintWords: Set<String> = [
      "CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "CHECK", "DEFAULT", "COLLATE",
      "REFERENCES", "GENERATED", "AS",
    ]

    mutating func table() throws(Problem) -> Table {
      try ifNotExists()
      var table = Table(name: try name(), columns: [], primaryKey: nil, unique: [])
      if take("AS") { throw Problem("a table made from a query is refused") }
      try expect(symbol: "(")
      repeat {
        if take("CONSTRAINT") { _ = try name() }
        if take("PRIMARY") {
          try expect("KEY")
          guard table.primaryKey == nil else { throw Problem("two primary keys") }
          table.primaryKey = try indexedColumns()
        } else if take("UNIQUE") {
          table.unique.append(try indexedColumns())
        } else if peekKeyword("CHECK") || peekKeyword("FOREIGN") {
          throw Problem(
            "\(describeNext()) constraints are refused (they hold expressions or actions)")
        } else {
          table.columns.append(try column())
        }
      } while take(symbol: ",")
      try expect(symbol: ")")
      if peekKeyword("WITHOUT") || peekKeyword("STRICT") {
        throw Problem("\(describeNext()) tables are not part of Core Data's layout")
      }
      guard !table.columns.isEmpty else { throw Problem("the table has no columns") }
      var names = Set<String>()
      for column in table.columns where !names.insert(column.name.uppercased()).inserted {
        throw Problem("column \(column.name) appears twice")
      }
      for key in (table.primaryKey.map { [$0] } ?? []) + table.unique {
        for column in key where table.column(named: column.name) == nil {
          throw Problem("a key names column \(column.name), which the table lacks")
        }
      }
      return table
    }

    mutating func column() throws(Problem) -> Column {
      var column = Column(name: try name(), type: "")
      var words: [String] = []
      while case .word(let text, quoted: false)? = position < tokens.count ? tokens[position] : nil,
        !Self.constraintWords.contains(text.uppercased())
      {
        words.append(text.uppercased())
        position += 1
      }
      if !words.isEmpty && take(symbol: "(") {
        var sizes = [try signedNumber()]
        if take(symbol: ",") { sizes.append(try signedNumber()) }
        try expect(symbol: ")")
        column.type = words.joined(separator: " ") + "(" + sizes.joined(separator: ", ") + ")"
      } else {
        column.type = words.joined(separator: " ")
      }
      while true {
        if take("CONSTRAINT") { _ = try name() }
        if take("PRIMARY") {
          try expect("KEY")
          var key = "PRIMARY KEY"
          if take("ASC") { key += " ASC" } else if take("DESC") { key += " DESC" }
          if take("AUTOINCREMENT") { key += " AUTOINCREMENT" }
          guard column.primaryKey == nil else { throw Problem("two primary keys") }
          column.primaryKey = key
        } else if take("NOT") {
          try expect("NULL")
          column.notNull = true
        } else if take("NULL") {
          continue
        } else if take("UNIQUE") {
          column.unique = true
        } else if take("DEFAULT") {
          column.defaultValue = try literal()
        } else if take("COLLATE") {
          column.collation = try collation()
        } else if peek(symbol: ",") || peek(symbol: ")") {
          break
        } else if peekKeyword("ON") {
          throw Problem("conflict clauses are refused")
        } else {
          throw Problem(
            "\(describeNext()) is refused in a column definition (column \(column.name))")
        }
      }
      return column
    }

    mutating func collation() throws(Problem) -> String {
      let name = try name().uppercased()
      guard SchemaStatement.collations.contains(name) else {
        throw Problem("collation \(name) is not one SQLite has built in")
      }
      return name
    }

    mutating func signedNumber() throws(Problem) -> String {
      var sign = ""
      if take(symbol: "-") { sign = "-" } else if take(symbol: "+") { sign = "+" }
      guard position < tokens.count, case .number(let text) = tokens[position] else {
        throw Problem("expected a number, found \(describeNext())")
      }
      position += 1
      return sign + text
    }

    /// A `DEFAULT` literal, as graphvault writes it.
    mutating func literal() throws(Problem) -> String {
      if peek(symbol: "-") || peek(symbol: "+") { return try signedNumber() }
      let token = position < tokens.count ? tokens[position] : nil
      let literal: String
      switch token {
      case .number(let text)?: literal = text
      case .string(let text)?: literal = "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
      case .word(let text, quoted: false)?
      where ["NULL", "TRUE", "FALSE", "CURRENT_TIME", "CURRENT_DATE", "CURRENT_TIMESTAMP"]
        .contains(text.uppercased()):
        literal = text.uppercased()
      default:
        throw Problem("a default must be a literal, not \(describeNext())")
      }
      position += 1
      return literal
    }

    mutating func indexedColumns() throws(Problem) -> [IndexedColumn] {
      try expect(symbol: "(")
      var columns: [IndexedColumn] = []
      repeat {
        var column = IndexedColumn(name: try name())
        if take("COLLATE") { column.collation = try collation() }
        if take("ASC") {
          column.direction = "ASC"
        } else if take("DESC") {
          column.direction = "DESC"
        }
        columns.append(column)
      } while take(symbol: ",")
      guard take(symbol: ")") else {
        throw Problem("an index or key lists columns only, not \(describeNext())")
      }
      return columns
    }

    mutating func index(unique: Bool) throws(Problem) -> Index {
      try ifNotExists()
      let name = try name()
      try expect("ON")
      let table = try self.name()
      let columns = try indexedColumns()
      if peekKeyword("WHERE") {
        throw Problem("partial indexes are refused (they hold expressions)")
      }
      return Index(name: name, unique: unique, table: table, columns: columns)
    }
  }
}
