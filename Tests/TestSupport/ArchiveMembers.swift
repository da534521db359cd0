import LibArchive

/// Every member of an archive, read into memory (test archives are small).
public func members(of path: String) throws -> [(path: String, bytes: [UInt8])] {
  let reader = try ArchiveReader(path: path)
  var result: [(path: String, bytes: [UInt8])] = []
  while let entry = try reader.nextEntry() { result.append((entry.path, try reader.readAll())) }
  return result
}
