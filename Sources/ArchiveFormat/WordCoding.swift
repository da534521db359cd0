/// A text column's values as numbered words (archive format 4, `graphvault(1)`, ARCHIVE
/// FORMAT): each value cut at its spaces into words, the column's distinct words listed once
/// (`words`, most frequent first), and each value's words given by their numbers in that list
/// (`values`, varints).
///
/// zstd, at the speed a backup needs, pays one to two bytes for each word of a text it has
/// seen before: a match's length and distance. Numbered, a word of a column of a few hundred
/// distinct words is one byte, which zstd's entropy coder brings near the word's own
/// information. Summaries, names, labels and states, texts of few words used often, take half
/// the room; text of many distinct words (prose, identifiers, addresses) does not gain, and
/// the writer leaves it as it is (``WordCoder/code(values:lengths:count:)``).
///
/// Each value's byte length stays in the column's `lengths`, which is what tells where a value's
/// words end: its first word, then a space and the next word until the value's length is
/// reached. A value of no bytes has no words; a value of one space, two empty words.
package enum WordCoding {
  /// The writer codes a column only when its values take at least this many times the bytes of
  /// their words and numbers: below it, zstd does as well with the text.
  static let gain = 3
  /// A coded column's values take at most this many times the bytes of its words and numbers:
  /// what a reader allows, so that a small chunk cannot decode to a large one.
  package static let expansion = 16

  /// What is wrong with a coded column.
  package struct Malformed: Error {
    package let detail: String
  }

  /// The values `words` and `tokens` code, `count` values of the byte lengths `lengths` gives,
  /// back to back.
  /// - Throws: ``Malformed`` when a word's entry runs past the list, a number names no word,
  ///   a value's words do not make its length exactly, numbers are left over, or the values
  ///   would take more than ``expansion`` times the coded bytes.
  package static func decode(
    words: ArraySlice<UInt8>, tokens: ArraySlice<UInt8>, lengths: ArraySlice<UInt8>, count: Int
  ) throws(Malformed) -> [UInt8] {
    var list: [Range<Int>] = []
    var entries = Varint.Reader(words)
    while !entries.isAtEnd {
      guard let length = entries.next(), length <= UInt64(words.endIndex - entries.offset)
      else { throw Malformed(detail: "a word runs past its list of words") }
      list.append(entries.offset..<entries.offset + Int(length))
      entries.skip(Int(length))
    }
    let limit = expansion * (words.count + tokens.count)
    var total = 0
    var sizes = Varint.Reader(lengths)
    for _ in 0..<count {
      guard let length = sizes.next(), length <= UInt64(limit - total) else {
        throw Malformed(
          detail: "its values would take more than \(expansion) times the bytes of its words")
      }
      total += Int(length)
    }
    sizes = Varint.Reader(lengths)
    var numbers = Varint.Reader(tokens)
    var failure: Malformed?
    let result = [UInt8](unsafeUninitializedCapacity: total) { output, initialized in
      words.withUnsafeBufferPointer { wordBytes in
        let base = words.startIndex
        var written = 0
        func put(_ number: UInt64?, space: Bool, end: Int) -> Bool {
          guard let number, number < UInt64(list.count) else {
            failure = Malformed(detail: "a value's word number names no word")
            return false
          }
          let word = list[Int(number)]
          guard written + (space ? 1 : 0) + word.count <= end else {
            failure = Malformed(detail: "a value's words run past its length")
            return false
          }
          if space {
            output[written] = 0x20
            written += 1
          }
          for index in word {
            output[written] = wordBytes[index - base]
            written += 1
          }
          return true
        }
        for _ in 0..<count {
          let end = written + Int(sizes.next()!)
          guard written < end else { continue }
          guard put(numbers.next(), space: false, end: end) else { break }
          while written < end {
            guard put(numbers.next(), space: true, end: end) else { break }
          }
          if failure != nil { break }
        }
        initialized = written
      }
    }
    if let failure { throw failure }
    guard numbers.isAtEnd else { throw Malformed(detail: "word numbers are left over") }
    return result
  }
}
