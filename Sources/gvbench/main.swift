import Foundation
import GraphVault

// Release-built benchmarks (not tests):
//   gvbench [records]          the property-list codec against Foundation (default 100,000)
//   gvbench memory [objects]   peak memory of graphvault backup and restore at N and 5N objects
//   gvbench store [objects] [--workload library|text|relationships|all]
//                              backup and restore against sqlite3 .dump | zstd -3 and sqlite3 < dump,
//                              verify against restore
//   gvbench encryption [objects]  encrypted backup and restore against unencrypted ones
//   gvbench s3 [objects]       backup and restore to moto's S3 server against a local folder
//   gvbench fixture [objects]  a fixture of about a thousand objects cut from N and N/5 objects
//   gvbench diff [objects]     diff of two backups against one restore, at N/5 and N objects
//   gvbench merge [objects]    merge of deleted books back into stores of N/5 and N objects
//   gvbench migrate [objects]  migrate in place, a migrating restore and a usage error against
//                              a plain restore, at N/5 and N objects
//   gvbench find [objects]     find of a small entity across 30 archives of N and 5N objects
//   gvbench progress [objects] backup and restore with the status line shown and not
//   gvbench fetch [objects]    fetches with a limit and counts against whole fetches, at N;
//                              peak RSS of a batched walk at N and 5N
//   gvbench save [objects] [inserts]
//                              insert-and-save, fetch of every book and count through the
//                              context against Python's sqlite3 doing the same (1M, 100,000)
//   gvbench incremental [objects] [--nights N] [--also M]
//                              a full archive, one night's incremental one and the restore of a
//                              chain of N (30) against full ones, library and text at objects,
//                              library at M too (for peak RSS)
//   gvbench bucket [objects] [--json]
//                              extended attributes against a native one through the context
//   gvbench sample objects PATH  the sample library store the benchmarks use, written to PATH
//                              (for measuring one command by hand)
let arguments = Array(CommandLine.arguments.dropFirst())
let objects = arguments.count > 1 ? Int(arguments[1]) ?? 50_000 : 50_000
if arguments.first == "memory" {
  try memoryBenchmark(objects: objects)
} else if arguments.first == "store" {
  let named = arguments.firstIndex(of: "--workload").flatMap {
    $0 + 1 < arguments.count ? arguments[$0 + 1] : nil
  }
  let workloads: [SampleWorkload]
  if named == nil {
    workloads = [.library]
  } else if named == "all" {
    workloads = SampleWorkload.allCases
  } else if let workload = named.flatMap(SampleWorkload.init(rawValue:)) {
    workloads = [workload]
  } else {
    FileHandle.standardError.write(
      Data("gvbench store: --workload is library, text, relationships or all\n".utf8))
    exit(64)
  }
  try storeBenchmark(objects: objects, workloads: workloads)
} else if arguments.first == "encryption" {
  try encryptionBenchmark(objects: objects)
} else if arguments.first == "s3" {
  try objectStorageBenchmark(objects: objects)
} else if arguments.first == "fixture" {
  try fixtureBenchmark(objects: objects)
} else if arguments.first == "find" {
  try findBenchmark(objects: objects)
} else if arguments.first == "merge" {
  try mergeBenchmark(objects: objects)
} else if arguments.first == "migrate" {
  try migrateBenchmark(objects: objects)
} else if arguments.first == "diff" {
  try diffBenchmark(objects: objects)
} else if arguments.first == "progress" {
  try progressBenchmark(objects: objects)
} else if arguments.first == "fetch" {
  try fetchBenchmark(objects: arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000)
} else if arguments.first == "fetch-walk", arguments.count > 1 {
  try fetchWalk(store: arguments[1])
} else if arguments.first == "save" {
  try saveBenchmark(
    objects: arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000,
    inserts: arguments.count > 2 ? Int(arguments[2]) ?? 100_000 : 100_000)
} else if arguments.first == "save-child", arguments.count > 4 {
  try saveChild(
    mode: arguments[1], count: Int(arguments[2]) ?? 0, store: arguments[3], timing: arguments[4])
} else if arguments.first == "incremental" {
  func option(_ name: String) -> Int? {
    arguments.firstIndex(of: name).flatMap {
      $0 + 1 < arguments.count ? Int(arguments[$0 + 1]) : nil
    }
  }
  try incrementalBenchmark(
    objects: arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000,
    nights: option("--nights") ?? 30, sizes: option("--also").map { [$0] } ?? [])
} else if arguments.first == "sample", arguments.count > 2 {
  try SampleLibrary.generate(at: arguments[2], objects: objects)
} else if arguments.first == "bucket" {
  try bucketBenchmark(
    objects: arguments.count > 1 ? Int(arguments[1]) ?? 1_000 : 1_000,
    json: arguments.contains("--json"))
} else {
  try codecBenchmark(count: arguments.first.flatMap { Int($0) } ?? 100_000)
}
