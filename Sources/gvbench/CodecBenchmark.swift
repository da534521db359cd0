import Foundation
import PropertyList

/// Encodes and decodes the same records with our bplist00 codec, Foundation's
/// PropertyListSerialization and PropertyListEncoder/Decoder, in one run, and prints the
/// figures with ratios.
func codecBenchmark(count: Int) throws {
  let records = (0..<count).map(BenchRecord.make)
  let foundationObjects = records.map(\.foundationObject) as NSArray

  func measureBest<T>(_ label: String, repeats: Int, _ body: () throws -> T) rethrows -> (
    Duration, T
  ) {
    var best = Duration.seconds(1_000_000)
    var result: T?
    for _ in 0..<repeats {
      let clock = ContinuousClock()
      let start = clock.now
      let value = try body()
      let elapsed = clock.now - start
      if elapsed < best { best = elapsed }
      result = value
    }
    FileHandle.standardError.write(Data("  \(label): \(best)\n".utf8))
    return (best, result!)
  }

  func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
  }

  FileHandle.standardError.write(Data("gvbench: \(count) records\n".utf8))

  // Ours: straight from the records into the writer (what a backup does).
  let (oursEncode, oursBytes) = measureBest("ours encode", repeats: 5) { () -> [UInt8] in
    var writer = BinaryPropertyListWriter()
    let start = writer.stackCount
    for record in records { writer.push(record.write(to: &writer)) }
    let root = writer.makeArray(fromStackIndex: start)
    return writer.serialized(root: root)
  }
  let (oursDecode, oursTree) = try measureBest("ours decode (value tree)", repeats: 5) {
    try PropertyListValue(binaryPropertyList: oursBytes)
  }
  precondition(
    oursTree.arrayValue?.compactMap(BenchRecord.init) == records, "tree round trip failed")
  let (oursTypedDecode, oursTyped) = try measureBest("ours decode (typed records)", repeats: 5) {
    try BenchRecord.decodeAll(from: oursBytes)
  }
  precondition(oursTyped == records, "typed round trip failed")

  // Foundation's PropertyListSerialization (binary), from prebuilt Foundation objects.
  let (serializationEncode, serializationBytes) = try measureBest(
    "PropertyListSerialization encode", repeats: 1
  ) {
    try PropertyListSerialization.data(
      fromPropertyList: foundationObjects, format: .binary, options: 0)
  }
  let (serializationDecode, serializationDecoded) = try measureBest(
    "PropertyListSerialization decode", repeats: 1
  ) {
    try PropertyListSerialization.propertyList(from: serializationBytes, options: [], format: nil)
  }
  precondition((serializationDecoded as? [Any])?.count == count)
  // Foundation reads our output, and we read Foundation's: same records either way.
  let ourReadOfTheirs = try PropertyListValue(binaryPropertyList: [UInt8](serializationBytes))
  precondition(ourReadOfTheirs.arrayValue?.compactMap(BenchRecord.init) == records)

  // PropertyListEncoder / PropertyListDecoder (binary), from the Codable records.
  let (encoderEncode, encoderBytes) = try measureBest("PropertyListEncoder encode", repeats: 1) {
    () -> Data in
    let encoder = PropertyListEncoder()
    encoder.outputFormat = .binary
    return try encoder.encode(records)
  }
  let (decoderDecode, decoderDecoded) = try measureBest("PropertyListDecoder decode", repeats: 1) {
    try PropertyListDecoder().decode([BenchRecord].self, from: encoderBytes)
  }
  precondition(decoderDecoded == records)

  func row(_ name: String, _ d: Duration, _ bytes: Int?, versus ours: Duration) -> String {
    let s = seconds(d)
    let ratio = s / seconds(ours)
    let size = bytes.map { String(format: "%.1f MB", Double($0) / 1_000_000) } ?? ""
    func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
      let fill = String(repeating: " ", count: max(0, width - text.count))
      return left ? fill + text : text + fill
    }
    return "| \(pad(name, 34)) | \(pad(String(format: "%.3f s", s), 10, left: true)) | "
      + "\(pad(String(format: "%.1f×", ratio), 7, left: true)) | \(pad(size, 8, left: true)) |"
  }

  print(
    "| \("\(count) records".padding(toLength: 34, withPad: " ", startingAt: 0)) | time       | vs ours | size     |"
  )
  print("|------------------------------------|------------|---------|----------|")
  print(row("ours encode", oursEncode, oursBytes.count, versus: oursEncode))
  print(
    row(
      "PropertyListSerialization encode", serializationEncode, serializationBytes.count,
      versus: oursEncode))
  print(row("PropertyListEncoder encode", encoderEncode, encoderBytes.count, versus: oursEncode))
  print(row("ours decode (value tree)", oursDecode, nil, versus: oursDecode))
  print(row("PropertyListSerialization decode", serializationDecode, nil, versus: oursDecode))
  print(row("ours decode (typed records)", oursTypedDecode, nil, versus: oursTypedDecode))
  print(row("PropertyListDecoder decode", decoderDecode, nil, versus: oursTypedDecode))
}
