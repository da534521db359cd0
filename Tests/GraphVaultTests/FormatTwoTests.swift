import Foundation
import GraphVault
import TestSupport
import Testing

/// Format 2 read by an independent reader: Python's `plistlib`, and the column layout as
/// `graphvault(1)` documents it, rebuild from each format-2 chunk exactly the class-tagged
/// records the same store's format-1 archive holds.
@Suite(
  "Format 2 against format 1",
  .enabled(
    if: Subprocess.isInstalled("bsdtar") && Subprocess.isInstalled("python3"),
    "needs bsdtar and python3"))
struct FormatTwoTests {
  /// Rebuilds records from format-2 chunks by the man page, reads format-1 chunks with plistlib,
  /// compares them entity by entity, and prints the number of records and of format-2 chunks.
  static let script = """
    import datetime, pathlib, plistlib, struct, sys

    def varints(data):
        out, value, shift = [], 0, 0
        for byte in data:
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                out.append(value); value, shift = 0, 0
            else:
                shift += 7
        assert shift == 0, 'a varint is cut short'
        return out

    def deltas(data):
        out, previous = [], 0
        for raw in varints(data):
            previous = (previous + ((raw >> 1) ^ -(raw & 1)) + 2**63) % 2**64 - 2**63
            out.append(previous)
        return out

    def split(values, lengths):
        out, offset = [], 0
        for length in varints(lengths):
            out.append(values[offset:offset + length]); offset += length
        assert offset == len(values)
        return out

    def records(chunk):
        n = chunk['count']
        result = [{'class': chunk['class'], 'pk': pk, 'opt': opt}
                  for pk, opt in zip(deltas(chunk['pk']), deltas(chunk['opt']))]
        assert len(result) == n
        for column in chunk['columns']:
            if 'present' in column:
                bits = column['present']
                assert len(bits) == (n + 7) // 8
                rows = [i for i in range(n) if bits[i >> 3] >> (i & 7) & 1]
            else:
                rows = list(range(n))
            kind, values = column['type'], column['values']
            if kind == 'integer':
                values = deltas(values)
            elif kind in ('real', 'date'):
                values = list(struct.unpack('>%dd' % (len(values) // 8), values))
                if kind == 'date':
                    values = [datetime.datetime(2001, 1, 1) + datetime.timedelta(seconds=v)
                              for v in values]
            elif kind == 'bool':
                values = [byte == 1 for byte in values]
            elif kind == 'string':
                values = [v.decode('utf-8') for v in split(values, column['lengths'])]
            elif kind == 'data':
                values = split(values, column['lengths'])
            elif kind == 'integers':
                flat, values, offset = deltas(values), [], 0
                for length in varints(column['lengths']):
                    values.append(flat[offset:offset + length]); offset += length
                assert offset == len(flat)
            else:
                raise AssertionError('unknown type ' + kind)
            assert len(values) == len(rows), column['key']
            key = column['key']
            for row, value in zip(rows, values):
                record = result[row]
                if key.startswith('@columns/'):
                    record, key = record.setdefault('@columns', {}), key[len('@columns/'):]
                assert key not in record
                record[key] = value
                key = column['key']
        return result

    def normal(value):
        if isinstance(value, float):
            return ('real', struct.pack('>d', value))
        if isinstance(value, dict):
            return {key: normal(item) for key, item in value.items()}
        if isinstance(value, list):
            return [normal(item) for item in value]
        return value

    one, two = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    def entities(root):
        return sorted(p.name for p in (root / 'objects').iterdir()) if (root / 'objects').exists() else []
    assert entities(one) == entities(two)
    total = chunks = 0
    for entity in entities(one):
        old = [r for p in sorted((one / 'objects' / entity).iterdir())
               for r in plistlib.loads(p.read_bytes())]
        new = []
        for p in sorted((two / 'objects' / entity).iterdir()):
            chunk = plistlib.loads(p.read_bytes())
            assert isinstance(chunk, dict) and chunk['class'] == entity, p
            new += records(chunk); chunks += 1
        assert len(old) == len(new), (entity, len(old), len(new))
        for a, b in zip(old, new):
            assert normal(a) == normal(b), (entity, a, b)
        total += len(new)
    print(total, chunks)
    """

  /// Backs `store` up in both formats, extracts both with bsdtar and runs the script.
  static func compare(store: String, modelPath: String?, in directory: TemporaryDirectory)
    throws -> (records: Int, chunks: Int, objects: Int)
  {
    var folders: [String] = []
    var objects = 0
    for format in [1, 2] as [Int64] {
      var options = BackupService.Options()
      options.modelPath = modelPath
      options.formatVersion = format
      options.output = Location(path: directory.path("format\(format).gvault").path)
      let result = try BackupService.backup(storePath: store, options: options)
      let archive = result.archive
      objects = result.objects.values.reduce(0, +)
      let folder = directory.path("format\(format)")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      #expect(try Subprocess.run("bsdtar", ["-xf", archive, "-C", folder.path]).status == 0)
      folders.append(folder.path)
    }
    let result = try Subprocess.python(script, folders)
    #expect(result.status == 0, "\(result.stderr)")
    let numbers = result.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
    return (numbers.first ?? -1, numbers.last ?? -1, objects)
  }

  @Test(arguments: SampleWorkload.allCases)
  func pythonRebuildsFormatOneRecordsFromASampleStoresColumns(workload: SampleWorkload) throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("sample.sqlite").path
    // The library workload's covers close chunks by size, so its books span several chunks.
    try workload.generate(at: store, objects: workload == .library ? 40_000 : 3_000)
    let (records, chunks, objects) = try Self.compare(store: store, modelPath: nil, in: directory)
    #expect(records == objects && records > 2_500)
    if workload == .library { #expect(chunks > 6, "books should span several chunks") }
  }

  @Test(
    .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote),
    arguments: FixtureStore.all)
  func pythonRebuildsFormatOneRecordsFromAFixtureStoresColumns(fixture: FixtureStore) throws {
    let directory = try TemporaryDirectory()
    let store = try SharedFixtures.copyStore(fixture.store, into: directory.url)
    let modelPath =
      fixture.store.hasPrefix("BookMigration") ? SharedFixtures.file(fixture.modelSet!).path : nil
    let (records, _, objects) = try Self.compare(
      store: store.path, modelPath: modelPath, in: directory)
    #expect(records == objects)
  }
}
